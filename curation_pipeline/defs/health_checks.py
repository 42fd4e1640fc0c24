"""The asset checks of `memory_namespace`, one result per partition (core/health_checks.py).

Step 7 of every real cycle logs their results on its partition (defs/ops.py). They can also be
run on their own from the asset's Checks tab: that evaluates the checks of the partition's latest
recorded cycle again, looking orphans up afresh, e.g. after fixing one by hand.
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
import warnings
from collections.abc import Iterator

import dagster as dg
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from curation_pipeline.core.health_checks import CHECK_RULES, CheckOutcome
from curation_pipeline.defs.assets import MEMORY_NAMESPACE
from curation_pipeline.defs.partitions import namespace_partitions
from curation_pipeline.defs.resources import MemoryStore
from curation_pipeline.service.steps.cycle import recheck_latest_cycle

# Partitioned asset checks are a Dagster "preview" feature; its warning would land in every CLI
# output, and nothing here depends on more than results per partition.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    HEALTH_CHECK_SPECS = [
        dg.AssetCheckSpec(rule.name, asset=MEMORY_NAMESPACE, description=rule.description,
                          partitions_def=namespace_partitions)
        for rule in CHECK_RULES
    ]


def _metadata(outcome: CheckOutcome) -> dict:
    return {key: value for key, value in outcome.metadata.items() if value is not None}


def check_evaluations(partition_key: str, outcomes: list[CheckOutcome],
                      materialization: dg.EventLogRecord | None) -> list[dg.AssetCheckEvaluation]:
    """The cycle's check results for its partition, aimed at the cycle's materialization so the
    UI shows them as the partition's current status."""
    target = materialization and AssetCheckEvaluationTargetMaterializationData(
        storage_id=materialization.storage_id, run_id=materialization.run_id,
        timestamp=materialization.timestamp,
    )
    return [
        dg.AssetCheckEvaluation(
            asset_key=MEMORY_NAMESPACE, check_name=outcome.name, passed=outcome.passed,
            description=outcome.description, metadata=_metadata(outcome), partition=partition_key,
            severity=dg.AssetCheckSeverity.ERROR, target_materialization_data=target,
        )
        for outcome in outcomes
    ]


def latest_materialization(instance: dg.DagsterInstance, partition_key: str) -> dg.EventLogRecord | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=MEMORY_NAMESPACE, asset_partitions=[partition_key]), limit=1
    ).records
    return records[0] if records else None


with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)

    @dg.multi_asset_check(specs=HEALTH_CHECK_SPECS, can_subset=True, name="memory_namespace_health")
    def memory_namespace_health(context: dg.AssetCheckExecutionContext,
                                memory_store: MemoryStore) -> Iterator[dg.AssetCheckResult]:
        """Evaluate the checks of the partition's latest recorded cycle again."""
        outcomes = recheck_latest_cycle(memory_store.session())
        selected = {key.name for key in context.selected_asset_check_keys}
        for rule in CHECK_RULES:
            if rule.name not in selected:
                continue
            if outcomes is None:
                yield dg.AssetCheckResult(asset_key=MEMORY_NAMESPACE, check_name=rule.name, passed=True,
                                          description="no curation cycle recorded yet")
                continue
            [outcome] = [o for o in outcomes if o.name == rule.name]
            yield dg.AssetCheckResult(
                asset_key=MEMORY_NAMESPACE, check_name=outcome.name, passed=outcome.passed,
                description=outcome.description, metadata=_metadata(outcome),
                severity=dg.AssetCheckSeverity.ERROR,
            )
