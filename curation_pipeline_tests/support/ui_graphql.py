"""Ask Dagster's GraphQL API, which is what the UI reads, over the real code location.

The code location is loaded as the UI loads it (cli/launcher.py), in a code server process, on
the test's Dagster instance; queries run against a request context as the webserver's do (one
that knows the instance's dynamic partitions).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from dagster._core.workspace.context import WorkspaceRequestContext
from dagster_graphql.test.utils import execute_dagster_graphql

from curation_pipeline.cli.launcher import code_location_workspace


class Query:
    """`query(text, **variables)` -> the data of the answer (an error raises)."""

    def __init__(self, workspace: WorkspaceRequestContext) -> None:
        self.workspace = workspace

    def __call__(self, text: str, **variables) -> dict:
        return execute_dagster_graphql(self.workspace, text, variables).data

    def start_queued_run(self, run_id: str) -> None:
        """What the daemon's run queue does with a run the UI launched."""
        self.workspace.instance.launch_run(run_id, self.workspace)


@contextmanager
def ui_graphql(instance: dg.DagsterInstance) -> Iterator[Query]:
    with code_location_workspace(instance) as workspace, workspace:
        yield Query(workspace)


ASSET_EVENTS = """
query AssetEvents($partition: String!) {
  assetNodeOrError(assetKey: {path: ["memory_namespace"]}) {
    ... on AssetNode {
      isPartitioned
      assetMaterializations(partitions: [$partition]) {
        runId
        partition
        metadataEntries {
          label
          __typename
          ... on IntMetadataEntry { intValue }
          ... on FloatMetadataEntry { floatValue }
          ... on TextMetadataEntry { text }
        }
      }
      assetChecksOrError {
        ... on AssetChecks {
          checks {
            name
            partitionStatuses {
              ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions }
            }
          }
        }
      }
    }
  }
}
"""

CHECK_EXECUTIONS = """
query CheckExecutions($check: String!, $partition: String!) {
  assetCheckExecutions(assetKey: {path: ["memory_namespace"]}, checkName: $check,
                       partition: $partition, limit: 10) {
    runId
    status
    partition
    evaluation { success severity description }
  }
}
"""

RUN_EVENTS = """
query RunEvents($runId: ID!) {
  logsForRun(runId: $runId) {
    ... on EventConnection {
      events {
        __typename
        ... on MessageEvent { message stepKey }
        ... on ExecutionStepOutputEvent {
          outputName
          metadataEntries {
            label
            __typename
            ... on TableMetadataEntry {
              table { records schema { columns { name } } }
            }
            ... on MarkdownMetadataEntry { mdStr }
            ... on TextMetadataEntry { text }
            ... on BoolMetadataEntry { boolValue }
          }
        }
        ... on ExecutionStepFailureEvent { error { message } }
      }
    }
  }
}
"""

RUNS_TAGGED = """
query RunsTagged($key: String!, $value: String!) {
  runsOrError(filter: {tags: [{key: $key, value: $value}]}) {
    ... on Runs { results { runId jobName tags { key value } } }
  }
}
"""

PARTITION_STATUS = """
query PartitionStatus($partitionSet: String!) {
  partitionSetOrError(
    repositorySelector: {repositoryName: "__repository__", repositoryLocationName: "curation_pipeline"},
    partitionSetName: $partitionSet
  ) {
    ... on PartitionSet {
      partitionStatusesOrError {
        ... on PartitionStatuses { results { partitionName runId runStatus } }
      }
    }
  }
}
"""


def materializations(query: Query, partition: str) -> list[dict]:
    """The asset's materializations of `partition`, newest first, metadata as {label: value}."""
    node = query(ASSET_EVENTS, partition=partition)["assetNodeOrError"]
    return [
        {"run_id": event["runId"], "metadata": {entry["label"]: _value(entry) for entry in event["metadataEntries"]}}
        for event in node["assetMaterializations"]
    ]


def check_statuses(query: Query, partition: str) -> dict[str, dict[str, list[str]]]:
    """{check name: {"succeeded": [partitions], "failed": [partitions]}}."""
    node = query(ASSET_EVENTS, partition=partition)["assetNodeOrError"]
    return {
        check["name"]: {"succeeded": check["partitionStatuses"]["succeededPartitions"],
                        "failed": check["partitionStatuses"]["failedPartitions"]}
        for check in node["assetChecksOrError"]["checks"]
    }


def run_events(query: Query, run_id: str) -> list[dict]:
    return query(RUN_EVENTS, runId=run_id)["logsForRun"]["events"]


def output_metadata(query: Query, run_id: str, step: str) -> dict:
    """The step's output metadata in the run, as {label: the entry}: its one output, or step 7's
    result (its check outputs carry none). `step` is the op's name, inside the asset's graph."""
    outputs = [e for e in run_events(query, run_id)
               if e["__typename"] == "ExecutionStepOutputEvent" and e.get("stepKey") == f"memory_namespace.{step}"]
    [event] = outputs if len(outputs) == 1 else [e for e in outputs if e["outputName"] == "result"]
    return {entry["label"]: entry for entry in event["metadataEntries"]}


def table_rows(entry: dict) -> list[dict]:
    """The rows of a table metadata entry, as the run page shows them inline."""
    assert entry["__typename"] == "TableMetadataEntry", entry
    return [json.loads(record) for record in entry["table"]["records"]]


def _value(entry: dict):
    for field in ("intValue", "floatValue", "text"):
        if field in entry:
            return entry[field]
    return None

LAUNCH_RUN = """
mutation Launch($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
  }
}
"""


ASSET_DEFINITION = """
query AssetDefinition {
  assetNodeOrError(assetKey: {path: ["memory_namespace"]}) {
    ... on AssetNode {
      isMaterializable
      isExecutable
      isPartitioned
      graphName
      opNames
      jobNames
      description
      groupName
      kinds
      owners { __typename ... on TeamAssetOwner { team } ... on UserAssetOwner { email } }
      tags { key value }
      metadataEntries { label ... on MarkdownMetadataEntry { mdStr } }
      targetingInstigators { __typename ... on Schedule { name } ... on Sensor { name } }
      assetPartitionStatuses {
        ... on DefaultPartitionStatuses { materializedPartitions failedPartitions unmaterializedPartitions }
      }
      assetObservations {
        runId
        partition
        description
        metadataEntries { label ... on TextMetadataEntry { text } ... on IntMetadataEntry { intValue } }
      }
    }
  }
}
"""


def asset_definition(query: Query) -> dict:
    """The memory_namespace asset node as the asset's page reads it."""
    return query(ASSET_DEFINITION)["assetNodeOrError"]


# The job the UI's Materialize (catalog, asset page) names: Dagster's implicit asset job.
IMPLICIT_ASSET_JOB = "__ASSET_JOB"


def materialize(query: Query, partition: str, job_name: str = "curate_namespace") -> str:
    """Launch a materialization of one partition as the Materialize button does (a job, the
    asset selected, the partition's tag); the run id. The catalog's and the asset page's button
    name no job of ours: `job_name=IMPLICIT_ASSET_JOB` launches as they do."""
    params = {
        "selector": {
            "repositoryLocationName": "curation_pipeline", "repositoryName": "__repository__",
            "pipelineName": job_name,
            "assetSelection": [{"path": ["memory_namespace"]}],
        },
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": partition}]},
        "mode": "default",
    }
    launched = query(LAUNCH_RUN, params=params)["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]
