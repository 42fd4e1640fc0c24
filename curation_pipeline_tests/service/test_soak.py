"""The soak: a seeded random mix of agent writes, curation runs with faults and undos (forced
or not, of runs and of undos), with every promise checked after every action
(support/soak.py says what is done and checked).

CI runs a short soak with a fresh seed each time, so it keeps hunting; a failure prints the
seed and the command that replays it. A longer soak (docs/operations.md has the last one's
numbers):

    CURATION_SOAK_ACTIONS=1500 CURATION_SOAK_SEED=913 CURATION_SOAK_UNWIND_EVERY=300 \\
        .venv/bin/python -m pytest -q -p no:cacheprovider curation_pipeline_tests/service/test_soak.py -s
"""

from __future__ import annotations

import os
import random

import pytest

from curation_pipeline_tests.support.llm_stub import StubResponsesServer
from curation_pipeline_tests.support.soak import Mix, Soak
from curation_pipeline_tests.support.step_faults import (
    install_step_pause,
    uninstall_step_pause,
)

pytestmark = pytest.mark.slow

DEFAULT_ACTIONS = 40  # a few minutes on a shared 2-core machine


def _setting(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


@pytest.fixture
def step_pause(db):
    install_step_pause(db)
    yield
    uninstall_step_pause(db)


@pytest.fixture
def llm_server():
    server = StubResponsesServer()
    yield server
    server.close()


def test_soak_keeps_every_promise_under_faults(db, database_url, instance, step_pause, llm_server, monkeypatch):
    seed = _setting("CURATION_SOAK_SEED", random.SystemRandom().randrange(1_000_000))
    actions = _setting("CURATION_SOAK_ACTIONS", DEFAULT_ACTIONS)
    unwind_every = _setting("CURATION_SOAK_UNWIND_EVERY", 0)
    print(f"soak seed {seed}, {actions} actions")

    def set_env(name: str, value: str | None) -> None:
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)

    # Agents read through recall() at least once (it records accesses beside the nodes).
    soak = Soak(db, database_url, instance, seed=seed, set_env=set_env, llm=llm_server,
                mix=Mix(successor=4, chain=3, required=("store_recall",)))
    log = soak.run(actions, unwind_every=unwind_every)
    print(f"soak seed {seed}: {dict(log.actions)}; mid-step faults {dict(log.fired)}; {dict(log.outcomes)}")
    # The mix really ran: runs, undos and faults that hit a working step.
    assert log.actions["run actions"] and log.actions["undo"] + log.actions["undo --force"] and log.actions["unwind"]
    assert log.actions["store_recall actions"]


def test_imports_racing_runs_and_round_trips_keep_every_promise(db, database_url, instance, step_pause, llm_server,
                                                                 monkeypatch):
    """The same driver, weighted to the two actions of the store's edges: imports racing runs of
    their partition, and round trips of the whole store through a second one."""
    seed = _setting("CURATION_SOAK_SEED", random.SystemRandom().randrange(1_000_000))
    print(f"soak seed {seed}, weighted to imports and round trips")

    def set_env(name: str, value: str | None) -> None:
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)

    mix = Mix(insert=10, edit=6, recall=2, run=10, undo=6, import_race=20, round_trip=8, faults=(None,),
              required=("import_race", "round_trip"))
    soak = Soak(db, database_url, instance, seed=seed, set_env=set_env, llm=llm_server, mix=mix)
    log = soak.run(_setting("CURATION_SOAK_IMPORT_ACTIONS", 16))
    print(f"soak seed {seed}: {dict(log.actions)}; {dict(log.fired)}")
    assert log.actions["import races"] and log.actions["round trips"]


def test_changed_successors_and_chains_of_updates_keep_every_promise(db, database_url, instance, step_pause,
                                                                     llm_server, monkeypatch):
    """The same driver, weighted to supersessions: chains of three updates, runs that supersede
    them, and agents that then edit, move or archive a successor; every clean run must undo what
    no longer holds (its supersessions_hold check passes), and undoing everything must still
    give back what the agents wrote."""
    seed = _setting("CURATION_SOAK_SEED", random.SystemRandom().randrange(1_000_000))
    print(f"soak seed {seed}, weighted to supersessions")

    def set_env(name: str, value: str | None) -> None:
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)

    mix = Mix(insert=4, edit=2, recall=1, run=14, undo=4, import_race=0, round_trip=0, successor=8, chain=6,
              faults=(None, None, None, "agent_mid_step"), required=("chain", "run", "successor"),
              prelude=("chain", "run", "successor", "run"))
    soak = Soak(db, database_url, instance, seed=seed, set_env=set_env, llm=llm_server, mix=mix)
    log = soak.run(_setting("CURATION_SOAK_SUPERSESSION_ACTIONS", 24))
    print(f"soak seed {seed}: {dict(log.actions)}; {dict(log.fired)}")
    assert log.actions["chain actions"] and log.actions["successor actions"]
    assert sum(log.actions[f"successor {how}"] for how in ("edit", "move", "archive")) >= 1, log.actions
