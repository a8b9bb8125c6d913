"""The opt-in DeleteGroups/OffsetDelete rules (``DeletingGroupMachine``) driven against the model
itself (no broker): the checker accepts every history the model answers, on both coordinator
lines, and the rules reach each answer they are there for. The default search is unchanged (its
machine has none of these rules)."""

from __future__ import annotations

import pytest
from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import (
    DeletingGroupMachine,
    GroupMachine,
    ListingGroupMachine,
    SuiteContext,
    machine_for,
    search,
)

OPT_IN = frozenset({"DeleteGroups", "OffsetDelete"})
WANTED = {
    ("DeleteGroups", "NONE"),
    ("DeleteGroups", "NON_EMPTY_GROUP"),
    ("DeleteGroups", "GROUP_ID_NOT_FOUND"),
    ("OffsetDelete", "NONE"),
    ("OffsetDelete", "GROUP_SUBSCRIBED_TO_TOPIC"),
}


def _context(profile: str, opt_in: frozenset[str]) -> SuiteContext:
    record = {
        "profile": profile,
        "config": {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0},
    }
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build(record, gid)),
        new_model=lambda gid: build(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        opt_in=opt_in,
    )
    ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
    return ctx


@pytest.mark.parametrize("profile", ["kafka-4.3", "kafka-3.9"])
def test_the_deleting_search_checks_clean_and_reaches_every_answer(profile: str) -> None:
    ctx = _context(profile, OPT_IN)
    search(machine_for(ctx), examples=40, steps=25, seed=1)
    reached = {(api, error) for (_, api, error), n in ctx.coverage.items() if n}
    assert reached >= WANTED, sorted(WANTED - reached)


def test_the_machine_has_the_rules_of_each_opted_in_type_only() -> None:
    assert machine_for(_context("kafka-4.3", frozenset())).__bases__ == (GroupMachine,)
    assert machine_for(_context("kafka-4.3", OPT_IN)).__bases__ == (DeletingGroupMachine,)
    both = machine_for(_context("kafka-4.3", OPT_IN | {"ListGroups"}))
    assert both.__bases__ == (ListingGroupMachine, DeletingGroupMachine)
