"""The migration machine, engine and checker driven against the mixed-protocol model itself (no
broker), as ``tests/consumer/test_consumer_machine_on_model.py`` does for the consumer machine:
every history the model produces must check clean, and the search must cross from each protocol's
group to the other's. The broker half is ``tests/differential/test_migration_differential.py``."""

from __future__ import annotations

import random

import pytest
from kgc.engine.coverage import summarise
from kgc.engine.registry import build_migration
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import SuiteContext, search
from kgc.properties.migration_machine import migration_machine_for

RECORD = {
    "name": "MigratingGroupModel",
    "profile": "kafka-4.3",
    "classic": {
        "group_min_session_timeout_ms": 500,
        "group_initial_rebalance_delay_ms": 0,
        "group_max_size": 3,
    },
    "consumer": {"topics": [["kgc-suite", 3]], "session_timeout_ms": 2000, "max_size": 3},
}


def _run(chooser_seed: int | None, examples: int, policy: str) -> SuiteContext:
    record = {**RECORD, "migration_policy": policy}
    rng = random.Random(chooser_seed)
    choose = None if chooser_seed is None else (lambda options: rng.choice(options))
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build_migration(record, gid), choose=choose),
        new_model=lambda gid: build_migration(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        scenario="migration",
    )
    ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
    search(migration_machine_for(ctx), examples=examples, steps=30, seed=1)
    return ctx


def _crossings(ctx: SuiteContext) -> set[tuple[str, str]]:
    """(group type, request) pairs where a request of one protocol met the other's group."""
    consumer_requests = {"ConsumerGroupHeartbeat", "ConsumerGroupDescribe"}
    return {
        (state.split("/")[0], request)
        for (state, request, _), n in ctx.coverage.items()
        if n and "/" in state and (state.startswith("classic/") == (request in consumer_requests))
    }


@pytest.mark.parametrize("policy", ["bidirectional", "disabled"])
def test_mixed_histories_check_clean_first_choices(policy):
    ctx = _run(None, 40, policy)
    assert ctx.commands > 300
    crossed = _crossings(ctx)
    assert ("classic", "ConsumerGroupHeartbeat") in crossed
    assert ("consumer", "JoinGroup") in crossed


@pytest.mark.parametrize("policy", ["bidirectional", "disabled"])
def test_mixed_histories_check_clean_random_choices(policy):
    ctx = _run(7, 40, policy)
    assert ctx.commands > 300
    target = {"group_config": {"group.consumer.migration.policy": policy}}
    cov = summarise(ctx.coverage, protocol="migration", target=target)
    # a floor, well below what these seeds reach (about half): the crossing cells are searched
    assert cov["reached"] >= cov["cells"] // 3, cov["never"]
