"""A step is declared once: a toy step added to the registry shows up in every table derived
from it (the CLI and markdown tables, the activity row, the health numbers, the graph) without
a line of it written anywhere else; a count it does not declare is refused, not read as 0."""

from __future__ import annotations

import re
import sys
import tokenize
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import curation_pipeline
from curation_pipeline.config.settings import load_settings
from curation_pipeline.core.cycles import combine_cycles
from curation_pipeline.core.health import Snapshot, cycle_health, health_fields
from curation_pipeline.core.render.changes import cycle_rows, step_tables
from curation_pipeline.core.render.tables import cycle_table, headline, health_table, run_counts
from curation_pipeline.core.step_spec import (
    HealthCount,
    StepCounts,
    StepSpec,
    SummaryColumn,
    check_registry,
    count,
    sentence,
)
from curation_pipeline.service.session import open_namespace_session
from curation_pipeline.service.step_run import StepRun, run_step
from curation_pipeline.service.steps import associate, consolidate
from curation_pipeline.service.steps.registry import CLOSING, STEPS, spec
from curation_pipeline.store import activity


@dataclass(frozen=True, kw_only=True)
class ToyCounts(StepCounts):
    polished: int | None = count("toys polished")
    looked_at: int | None = count("toys looked at")


def polish_toys(run, config) -> dict:
    return {"polished": 2, "looked_at": 5}


TOY = StepSpec(
    name="polish_toys",
    number="8",
    description="polish the toys.",
    counts=ToyCounts,
    after=(associate.SPEC.name,),
    summary=(SummaryColumn("polished", ("polished",)),),
    count_order=("polished", "looked_at"),
    health=(HealthCount("toys_polished", ("polished",), title="toys", meaning="toys polished this cycle"),),
    changes_namespace=("polished",),
    run=polish_toys,
)
WITH_TOY = (*STEPS, TOY)


def _row(**steps) -> dict:
    return {"run_id": "run-1", "status": "success", "duration_s": 1.0,
            "steps": {name: {"status": "succeeded", **counts} for name, counts in steps.items()}}


def test_the_registry_lists_the_seven_steps_in_order_each_declared_once():
    assert [s.label for s in (*STEPS, CLOSING)] == [
        "1 reclassify_stale", "2 consolidate_duplicates", "3 summarize_verbose", "4 revectorize",
        "5 mark_stale_confidence", "6 sync_graph", "6b associate_concepts", "7 log_curation_activity"]
    check_registry(WITH_TOY)
    assert spec("sync_graph").number == "6"
    with pytest.raises(KeyError, match="no curation step 'polish_toys'"):
        spec("polish_toys")


def test_a_registry_where_a_step_runs_after_an_unlisted_one_is_refused():
    with pytest.raises(ValueError, match="8 polish_toys runs after associate_concepts"):
        check_registry((TOY, *STEPS))


def test_a_counts_record_refuses_an_undeclared_count_and_reads_an_old_row_with_defaults():
    with pytest.raises(ValueError, match="polish_toys reported count.*shined.*ToyCounts does not declare"):
        ToyCounts.from_counts({"polished": 1, "shined": 1}, step="polish_toys")
    old = TOY.read({"polished": 3, "renamed_count": 4})  # a row written before a rename
    assert (old.polished, old.looked_at) == (3, None)
    assert old.as_dict() == {"polished": 3, "renamed_count": 4}  # shown as it was stored
    with pytest.raises(KeyError, match="renamed_count"):
        old.value("renamed_count")  # never read as a count (as `.get(...) or 0` would)
    assert consolidate.SPEC.read({"pass": "full"}).pass_ == "full"  # a keyword-named count


def test_the_toy_step_is_in_the_cli_and_markdown_tables():
    metadata = {"status": "success", "steps": {
        consolidate.SPEC.name: {"status": "succeeded", "pairs_merged": 1, "superseded": 0},
        TOY.name: {"status": "succeeded", "polished": 2, "looked_at": 5}}}
    header, _, row = cycle_table([("acme:support", "run-1", "SUCCESS", metadata)], WITH_TOY).splitlines()
    cells = dict(zip(header.split()[:-2], row.split()[:-1]))
    assert (cells["merged"], cells["polished"], cells["linked"]) == ("1", "2", "-")
    assert run_counts("curation_cycle", metadata, WITH_TOY) == "merged=1 superseded=0 polished=2"

    cycle = combine_cycles([metadata | {"run_id": "run-1"}], WITH_TOY)
    toy_row = cycle_rows(cycle, "run-1", WITH_TOY)[-1]
    assert toy_row == {"step": "8 polish_toys", "status": "succeeded", "run": "run-1",
                       "result": "polished: 2", "counts": "polished=2, looked_at=5"}
    assert headline(TOY, cycle.counts(TOY.name)) == "polished: 2"
    changes = [{"step": TOY.name, "node_id": "n1", "reason": {},
                "before": {"confidence": "verified"}, "after": {"confidence": "stale"}}]
    [row] = step_tables(TOY, changes)["changes"].rows
    assert (row["node"], row["column"], row["before"], row["after"]) == ("n1", "confidence", "verified", "stale")
    assert sentence(TOY, cycle.counts(TOY.name)) == "polished 2 (looked at 5)"
    merged = consolidate.SPEC.counts.from_counts({"pass": "full", "superseded": 1, "pairs_merged": 3,
                                                  "llm_fallbacks": [{"reason": "guard"}]})
    # The run's log line: a sentence, not a dict repr.
    assert sentence(consolidate.SPEC, merged) == "merged 3, superseded 1 (pass full, llm fallbacks 1)"


def test_the_toy_step_feeds_the_health_record_its_plots_and_the_namespace_change_check():
    from curation_pipeline.core.health import namespace_unchanged

    cycle = combine_cycles([_row(**{TOY.name: {"polished": 2}})], WITH_TOY)
    health = cycle_health(Snapshot(4, 0, 0, 0, 0, 0), cycle, WITH_TOY)
    assert list(health)[-1] == "toys_polished" and health["toys_polished"] == 2
    from curation_pipeline.defs.assets import health_metadata  # the asset's numbers in Dagster

    assert health_metadata(health, WITH_TOY)["toys_polished"].value == 2
    assert [f.title for f in health_fields(WITH_TOY)][-1] == "toys"
    table = health_table([{"tenant_id": "acme", "namespace": "a", "run_id": "run-1", "finished_at": None,
                           "health": health, "checks": []}], WITH_TOY)
    [work] = [block for block in table.split("\n\n") if "toys" in block.splitlines()[1]]
    _, header, _, row = work.splitlines()
    assert header.split()[-1] == "toys" and row.split()[-1] == "2"
    assert "  toys       (did) " in table  # the legend explains it
    assert namespace_unchanged(cycle, WITH_TOY) is False  # the toy changed something


def test_the_toy_step_is_an_op_of_the_generated_graph_and_step_7_waits_for_it():
    from curation_pipeline.defs.job import build_cycle_graph

    graph = build_cycle_graph("memory_namespace", WITH_TOY)
    toy = graph.node_named(TOY.name)
    assert toy.definition.tags == {"step": "8"} and toy.definition.description == "Step 8: polish the toys."
    assert {s.name for s in WITH_TOY} | {CLOSING.name} == {node.name for node in graph.nodes}
    waits_for = {invocation.name: {dep.node for dep in inputs.values()}
                 for invocation, inputs in graph.dependencies.items()}
    assert waits_for[TOY.name] == {associate.SPEC.name}
    # Step 7 waits for the steps nothing else waits for: the toy now, no longer 6b.
    assert waits_for[CLOSING.name] == {"reclassify_stale", "mark_stale_confidence", TOY.name}


def test_the_toy_steps_counts_go_through_its_record_into_the_activity_row_and_back(db, database_url):
    run_id = str(uuid.uuid4())
    with open_namespace_session(database_url, load_settings(), run_id, "acme", "support", lock_timeout_s=5) as session:
        run = StepRun(session, session.scope(TOY.name), spec=TOY)
        outcome = run_step(run, lambda r: TOY.run(r, None))
        assert outcome.counts == {"polished": 2, "looked_at": 5} and outcome.record == ToyCounts(polished=2, looked_at=5)

        bad = StepRun(session, session.scope(TOY.name), spec=TOY)
        with pytest.raises(ValueError, match="shined"):
            run_step(bad, lambda r: {"polished": 1, "shined": 1})

    cycle = combine_cycles(activity.cycle_rows(db, run_id, "acme", "support"), WITH_TOY)
    assert cycle.steps[TOY.name].status == "succeeded"
    assert cycle.counts(TOY.name) == ToyCounts(polished=2, looked_at=5)  # the refused one wrote nothing


def test_the_real_graph_keeps_the_cycles_order_op_names_tags_and_config():
    from curation_pipeline.config.steps import StepSettings
    from curation_pipeline.defs.job import build_jobs, curation_cycle

    curate_namespace, _ = build_jobs(StepSettings())

    waits_for = {invocation.name: {dep.node for dep in inputs.values()}
                 for invocation, inputs in curation_cycle.dependencies.items()}
    assert waits_for == {
        "reclassify_stale": set(), "consolidate_duplicates": set(), "mark_stale_confidence": set(),
        "summarize_verbose": {"consolidate_duplicates"},
        "revectorize": {"summarize_verbose"}, "sync_graph": {"summarize_verbose"},
        "associate_concepts": {"sync_graph", "revectorize"},
        "log_curation_activity": {"reclassify_stale", "mark_stale_confidence", "associate_concepts"},
    }
    for step in STEPS:
        op = curation_cycle.node_named(step.name).definition
        assert op.tags == {"step": step.number} and op.description.startswith(f"Step {step.number}: ")
        assert set(op.config_schema.config_type.fields) == set(step.config.model_fields)
    assert curation_cycle.node_named(CLOSING.name).definition.tags == {"step": "7"}
    assert ("1 reclassify_stale, 2 consolidate_duplicates, 3 summarize_verbose, 4 revectorize, "
            "5 mark_stale_confidence, 6 sync_graph, 6b associate_concepts, 7 log_curation_activity"
            in curate_namespace.description)


# Python 3.12 tokenizes an f-string's text as FSTRING_MIDDLE, not STRING.
_TEXT_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _string_literals(path: Path) -> str:
    """Every string literal of a module (docstrings included), comments and code left out."""
    with path.open("rb") as source:
        return "\n".join(token.string for token in tokenize.tokenize(source.readline)
                         if token.type in _TEXT_TOKENS)


def test_each_step_name_is_written_only_in_its_own_module():
    """A step is renamed in one place: every other module names it through its SPEC."""
    package = Path(curation_pipeline.__file__).parent
    literals = {path: _string_literals(path) for path in package.rglob("*.py")}
    for step in (*STEPS, CLOSING):
        [own] = [Path(module.__file__) for module in list(sys.modules.values())
                 if getattr(module, "SPEC", None) is step]
        named_in = {path.relative_to(package).as_posix() for path, text in literals.items()
                    if re.search(rf"\b{step.name}\b", text)}
        assert named_in == {own.relative_to(package).as_posix()}, step.name
