"""The coverage universe leaves out exactly the cells the model can never reach.

``kgc.engine.coverage`` drops from the denominator the Dead cells (the model has no Dead
state) and the cells the classic-group rules rule out (``IMPOSSIBLE_BY_RULE``: e.g. a valid
Heartbeat in Stable is never ``REBALANCE_IN_PROGRESS``). If a model change made one of those
reachable, the universe would silently under-count: so the state machine is driven against the
model itself (``ModelTarget``, both version profiles, random choices among allowed outcomes) and
no recorded cell may be one the universe excludes.
"""

from __future__ import annotations

import random

from kgc.engine.coverage import (
    ERRORS_BY_REQUEST,
    GROUP_STATES,
    NEEDS_SETUP,
    excluded,
    summarise,
    universe,
)
from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import SuiteContext, machine_for, search

CONFIG = {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0}


def _reached(profile: str, seed: int, examples: int) -> dict:
    record = {"profile": profile, "config": CONFIG}
    rng = random.Random(seed)
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build(record, gid), choose=rng.choice),
        new_model=lambda gid: build(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
    )
    ctx.new_group_id = lambda: f"kgc-cov-{next(counter)}"
    cls = machine_for(ctx)
    search(cls, examples=examples, steps=30, seed=seed)
    return ctx.coverage


def test_universe_and_exclusions_partition_every_cell():
    every = {
        (s, r, e) for s in GROUP_STATES for r, errors in ERRORS_BY_REQUEST.items() for e in errors
    }
    kept, gone = set(universe()), set(excluded())
    assert kept | gone == every
    assert not kept & gone
    assert set(NEEDS_SETUP) <= kept  # reachable with a setup: counted, only listed apart


def test_the_model_never_reaches_an_excluded_cell():
    gone = excluded()
    for profile, seed in (("kafka-4.x", 11), ("kafka-3.9", 12)):
        reached = _reached(profile, seed, 120)
        bad = {cell: gone[cell] for cell in reached if cell in gone}
        assert not bad, f"{profile}: cells the universe excludes were reached: {bad}"
        # and the run is not vacuous: most of the universe's no-setup cells are reached
        summary = summarise(reached)
        assert summary["reached"] >= 40, summary
