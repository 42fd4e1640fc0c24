"""What undoing a run means for one row: the columns it restores, and which ones go together."""

from __future__ import annotations

from curation_pipeline.core.undo_policy import decide, restore_target, run_effect

COLUMNS = ("pointer_summary", "embedding", "embedding_model", "recall_count")
MODEL = "lexical-ngram-v1/384"


def _row(text: str, embedding: str | None, model: str | None) -> dict:
    return {"pointer_summary": text, "embedding": embedding, "embedding_model": model, "recall_count": 3}


def test_a_run_that_changed_only_the_vector_restores_its_model_with_it():
    """A run (in the soak, an undo) gave a node another vector of the same model: only the vector
    differs, yet the model is part of the value the run changed, so undoing it writes both."""
    effect = run_effect([(_row("merged", "[1,0]", MODEL), _row("merged", "[0,1]", MODEL))], COLUMNS)
    assert effect.changed == ("embedding", "embedding_model")


def test_a_forced_undo_over_an_edit_that_cleared_the_vector_writes_the_vector_and_its_model():
    """The soak's case (seed 162991): an agent's edit cleared both columns since; forcing the undo
    must not leave the run's vector beside the agent's NULL model."""
    effect = run_effect([(_row("merged", "[1,0]", MODEL), _row("original", "[0,1]", MODEL))], COLUMNS)
    edited = _row("the agent's text", None, None)

    decision = decide(effect, edited, force=True)
    target = restore_target(effect, edited)

    assert decision.action == "restore" and decision.forced
    assert {"embedding", "embedding_model"} <= set(decision.columns)
    assert {column: target[column] for column in decision.columns} == {
        "pointer_summary": "merged", "embedding": "[1,0]", "embedding_model": MODEL}
    assert set(decision.changed_since) == {"pointer_summary", "embedding", "embedding_model"}


def test_without_force_that_row_is_a_conflict_naming_both_columns():
    effect = run_effect([(_row("merged", "[1,0]", MODEL), _row("original", "[0,1]", MODEL))], COLUMNS)
    decision = decide(effect, _row("the agent's text", None, None))
    assert decision.action == "conflict"
    assert {"embedding", "embedding_model"} <= set(decision.changed_since)


def test_a_run_that_touched_neither_column_restores_neither():
    effect = run_effect([(_row("long text", "[1,0]", MODEL), _row("short", "[1,0]", MODEL))], COLUMNS)
    assert effect.changed == ("pointer_summary",)


# ------------------------------------------------------------------ a node's link is one value

LINK_COLUMNS = ("pointer_summary", "archived_at", "merged_into")
ARCHIVED_AT = "2026-12-04T23:32:48+00:00"


def _linked(keeper: str | None) -> dict:
    return {"pointer_summary": "Tomás approved the policy.", "merged_into": keeper,
            "archived_at": ARCHIVED_AT if keeper else None}


def test_a_run_that_only_repointed_an_archived_node_changed_its_whole_link():
    """A later merge moves a node already archived into K on to K's own keeper K2: only
    `merged_into` differs, yet where the node stands is both columns."""
    effect = run_effect([(_linked("K"), _linked("K2"))], LINK_COLUMNS)
    assert effect.changed == ("archived_at", "merged_into")


def test_a_forced_undo_of_a_repoint_over_a_node_made_active_since_writes_both_halves_of_its_link():
    """The soak's case (seed 936560): an undo made the node active since; forcing the undo of the
    re-point must not write its old keeper beside an empty `archived_at` (the row would break
    the table's check, and the whole undo with it). It puts the link back whole, or nothing."""
    effect = run_effect([(_linked("K"), _linked("K2"))], LINK_COLUMNS)
    active = _linked(None)

    decision = decide(effect, active, force=True)
    target = restore_target(effect, active)

    assert decision.action == "restore" and decision.forced
    restored = {column: target[column] for column in decision.columns}
    assert restored == {"archived_at": ARCHIVED_AT, "merged_into": "K"}


def test_without_force_undoing_that_repoint_is_a_conflict():
    effect = run_effect([(_linked("K"), _linked("K2"))], LINK_COLUMNS)
    decision = decide(effect, _linked(None))
    assert decision.action == "conflict"
    assert set(decision.changed_since) == {"archived_at", "merged_into"}
