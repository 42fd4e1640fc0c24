"""Step 1 planning: which never-recalled, lagging memories get a reclassify signal."""

from __future__ import annotations

import polars as pl

from curation_pipeline.core.steps.reclassify import RECLASSIFY_SCHEMA, plan_reclassify


def candidates(**columns: list) -> pl.DataFrame:
    count = len(next(iter(columns.values())))
    base = {
        "id": [f"m{k}" for k in range(count)],
        "pointer_summary": [f"text {k}" for k in range(count)],
        "memory_type": ["fact"] * count,
        "recall_count": [0] * count,
        "epoch": [0] * count,
        "current_epoch": [500] * count,
        "has_pending_signal": [False] * count,
    }
    base.update(columns)
    return pl.DataFrame(base)


def test_lag_must_be_strictly_greater_than_minimum() -> None:
    plan = plan_reclassify(candidates(id=["exact", "over"], epoch=[400, 399]))
    assert plan.rows() == [("over", "text 1", 101)]


def test_recalled_or_already_signalled_memories_are_skipped() -> None:
    frame = candidates(id=["recalled", "pending", "unknown", "ok"], recall_count=[1, 0, 0, 0],
                       has_pending_signal=[False, True, None, False])
    assert plan_reclassify(frame)["memory_id"].to_list() == ["ok"]


def test_order_is_largest_lag_then_id_and_cap_applies() -> None:
    frame = candidates(id=["b", "a", "c", "d"], epoch=[100, 100, 0, 300])
    assert plan_reclassify(frame).select("memory_id", "epoch_lag").rows() == [
        ("c", 500), ("a", 400), ("b", 400), ("d", 200)
    ]
    assert plan_reclassify(frame, cap=2)["memory_id"].to_list() == ["c", "a"]
    assert plan_reclassify(frame, cap=0).is_empty()


def test_snapshot_is_the_current_text_and_parameters_apply() -> None:
    frame = candidates(pointer_summary=["Prefers tea 🍵"], epoch=[450])
    assert plan_reclassify(frame).is_empty()
    assert plan_reclassify(frame, min_epoch_lag=49).to_dicts() == [
        {"memory_id": "m0", "content_snapshot": "Prefers tea 🍵", "epoch_lag": 50}
    ]


def test_default_cap_is_fifty() -> None:
    frame = candidates(epoch=list(range(60)))
    plan = plan_reclassify(frame)
    assert plan.height == 50
    assert plan["epoch_lag"].to_list() == list(range(500, 450, -1))


def test_empty_input_gives_typed_empty_output() -> None:
    untyped = pl.DataFrame({name: [] for name in candidates(id=["x"]).columns})
    plan = plan_reclassify(untyped)
    assert plan.is_empty() and plan.schema == RECLASSIFY_SCHEMA
    assert plan_reclassify(candidates(id=["x"], recall_count=[3])).schema == RECLASSIFY_SCHEMA
