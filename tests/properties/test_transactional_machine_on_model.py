"""The opt-in transactional rules (``TransactionalMachine``) driven against the model itself (no
broker): the checker accepts every history the model answers, on both coordinator lines, and the
rules reach the answers they are there for."""

from __future__ import annotations

import pytest
from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.model.requests import TRANSACTIONAL_REQUESTS
from kgc.properties.machine import SuiteContext, TransactionalMachine, machine_for, search

WANTED = {
    ("InitProducerId", "NONE"),
    ("InitProducerId", "CONCURRENT_TRANSACTIONS"),
    ("AddOffsetsToTxn", "NONE"),
    ("TxnOffsetCommit", "NONE"),
    ("EndTxn", "NONE"),
    ("OffsetFetch", "UNSTABLE_OFFSET_COMMIT"),
}


def _context(profile: str) -> SuiteContext:
    record = {
        "profile": profile,
        "config": {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0},
    }
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build(record, gid)),
        new_model=lambda gid: build(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        opt_in=frozenset(TRANSACTIONAL_REQUESTS),
    )
    ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
    return ctx


@pytest.mark.parametrize("profile", ["kafka-4.3", "kafka-3.9"])
def test_the_transactional_search_checks_clean_and_reaches_its_answers(profile: str) -> None:
    ctx = _context(profile)
    assert machine_for(ctx).__bases__ == (TransactionalMachine,)
    search(machine_for(ctx), examples=30, steps=20, seed=1)
    reached = {(api, error) for (_, api, error), n in ctx.coverage.items() if n}
    assert reached >= WANTED, sorted(WANTED - reached)
