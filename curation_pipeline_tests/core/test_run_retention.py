"""Which old runs go: those no younger failure's re-execution needs."""

from __future__ import annotations

from curation_pipeline.core.run_retention import ancestors, plan_retention


def test_every_ancestor_of_an_open_run_is_needed_and_the_rest_goes():
    # root <- retry1 <- retry2 (young failure); other is an old run of its own; gone was deleted.
    parent_of = {"retry2": "retry1", "retry1": "root", "root": None, "other": None, "orphan": "gone"}
    needed = ancestors(["retry1", "gone"], parent_of)
    assert needed == {"retry1", "root", "gone"}
    plan = plan_retention(["root", "other", "retry1", "other"], needed)
    assert plan.delete == ("other",)
    assert plan.kept_for_reexecution == ("root", "retry1")


def test_a_chain_that_loops_ends():
    assert ancestors(["a"], {"a": "b", "b": "a"}) == {"a", "b"}
    assert ancestors([None, ""], {}) == set()
