"""The asset checks of `memory_namespace`: the five rules of core/health_checks.py as the asset's
own check specs, evaluated by step 7 of every real cycle on the cycle's partition.

They belong to the graph-backed asset (defs/job.py), so a cycle's run plans them, the asset's
Checks tab shows each partition's latest result, and a cycle that fails before step 7 leaves them
not evaluated rather than green from an older cycle. To evaluate them again, materialize the
partition: a cycle over a namespace where nothing changed writes nothing and only re-checks.
"""

# No `from __future__ import annotations`: Dagster reads these annotations at definition time.
import warnings

import dagster as dg

from curation_pipeline.core.health_checks import CHECK_RULES, CheckOutcome
from curation_pipeline.defs.assets import MEMORY_NAMESPACE
from curation_pipeline.defs.partitions import namespace_partitions

# Partitioned asset checks are a Dagster "preview" feature; its warning would land in every CLI
# output, and nothing here depends on more than results per partition.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    HEALTH_CHECK_SPECS = [
        dg.AssetCheckSpec(rule.name, asset=MEMORY_NAMESPACE, description=rule.description,
                          partitions_def=namespace_partitions)
        for rule in CHECK_RULES
    ]

# The graph output through which step 7 reports each check (the name Dagster gives a check spec
# of a graph-backed asset).
CHECK_OUTPUTS = {spec.name: spec.get_python_identifier() for spec in HEALTH_CHECK_SPECS}


def check_results(outcomes: list[CheckOutcome]) -> list[dg.AssetCheckResult]:
    """The cycle's check results; Dagster records them on the partition the run materializes."""
    return [
        dg.AssetCheckResult(
            asset_key=MEMORY_NAMESPACE, check_name=outcome.name, passed=outcome.passed,
            description=outcome.description, severity=dg.AssetCheckSeverity.ERROR,
            metadata={key: value for key, value in outcome.metadata.items() if value is not None},
        )
        for outcome in outcomes
    ]
