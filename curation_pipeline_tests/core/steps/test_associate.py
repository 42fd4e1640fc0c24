"""Step 6b planning: which pairs are associations, in which order, and how many per cycle."""

from __future__ import annotations

import numpy as np
import polars as pl

from curation_pipeline.core.steps.associate import (
    association_pairs,
    candidate_edges,
    plan_associations,
)
from curation_pipeline.core.steps.similarity import id_pairs


def _unit(angle_degrees: float) -> list[float]:
    angle = np.radians(angle_degrees)
    return [float(np.cos(angle)), float(np.sin(angle)), 0.0]


# cos(18°) = 0.951 (a duplicate), cos(30°) = 0.866 (in the band), cos(60°) = 0.5 (unrelated).
NODES = pl.DataFrame({
    "id": ["a", "b", "c", "d"],
    "memory_type": ["semantic", "semantic", "semantic", "episodic"],
    "row_version": [1, 2, 3, 4],
})
VECTORS = np.array([_unit(0), _unit(18), _unit(30), _unit(18)], dtype=np.float32)


def _pairs(**kwargs) -> set[tuple[str, str]]:
    pairs = association_pairs(NODES, VECTORS, threshold=0.80, upper=0.92, **kwargs)
    ids = NODES["id"].to_list()
    return {(ids[i], ids[j]) for i, j in pairs.select("i", "j").iter_rows()}


def test_the_band_leaves_out_what_step_2_will_merge_and_what_is_unrelated():
    # a-b: 0.951, same type: step 2 merges it. a-c: 0.866 in the band. a-d (0.951) and b-d
    # (1.0): two memory types never merge, so they are associations. b-c (0.978) is a
    # same-type duplicate; c-d (0.978) is of two types again.
    assert _pairs() == {("a", "c"), ("a", "d"), ("b", "d"), ("c", "d")}


def test_a_merge_an_undo_vetoed_becomes_an_association():
    assert ("a", "b") in _pairs(vetoed=id_pairs([("b", "a")]))


def test_candidate_edges_go_from_the_smaller_id_and_keep_both_row_versions():
    pairs = pl.DataFrame({"i": [2], "j": [0], "similarity": [0.86]})
    edges = candidate_edges(NODES, pairs)
    assert edges.row(0, named=True) == {"source_id": "a", "target_id": "c", "similarity": 0.86,
                                        "source_version": 1, "target_version": 3}


def test_plan_skips_existing_edges_and_takes_the_strongest_first_up_to_the_cap():
    pairs = pl.DataFrame({"i": [0, 0, 1], "j": [1, 2, 2], "similarity": [0.81, 0.90, 0.85]})
    candidates = candidate_edges(NODES, pairs)
    plan = plan_associations(candidates, existing=id_pairs([("a", "c")]), cap=1)
    assert plan.edges.select("source_id", "target_id").rows() == [("b", "c")]
    assert plan.left_over == 1
    assert plan_associations(candidates, existing=id_pairs(), cap=0).edges.height == 0
