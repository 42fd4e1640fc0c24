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
