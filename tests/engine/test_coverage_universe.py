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
    FAULT_ONLY,
    GROUP_STATES,
    NEEDS_SETUP,
    NEEDS_VERSION,
    WINDOW_ONLY,
    excluded,
    summarise,
    universe,
    unreachable_on,
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
    assert set(FAULT_ONLY) <= gone  # only a fault gives them: the fault suite's, not ours
    assert set(NEEDS_VERSION) - gone <= kept


# what the embedded brokers answered ApiVersions with, negotiated
# (``conformance/wire/negotiate.py``)
KAFKA_4_3 = {
    "group_config": {"group.max.size": 3},
    "version": "4.3.1",
    "request_versions": {"JoinGroup": [3, 5, 7], "SyncGroup": [3, 4, 5], "OffsetCommit": [7, 8, 9],
                         "DescribeGroups": [4, 5, 6]},
}  # fmt: skip
KAFKA_1_0 = {
    "group_config": {},
    "version": "1.0.2",
    "request_versions": {"JoinGroup": [2], "SyncGroup": [1], "OffsetCommit": [3],
                         "DescribeGroups": [1]},
}  # fmt: skip


def test_a_broker_with_every_version_and_a_small_group_max_size_counts_every_cell():
    assert unreachable_on(KAFKA_4_3) == {}
    assert summarise({}, target=KAFKA_4_3)["cells"] == len(universe())


def test_cells_a_broker_cannot_give_leave_the_denominator_with_the_reason():
    gone = unreachable_on(KAFKA_1_0)
    # no static membership before JoinGroup v5, no KIP-394 before v4, group.max.size unknown
    assert ("Stable", "Heartbeat", "FENCED_INSTANCE_ID") in gone
    assert "JoinGroup v5+" in gone[("Stable", "Heartbeat", "FENCED_INSTANCE_ID")]
    assert ("Empty", "JoinGroup", "MEMBER_ID_REQUIRED") in gone
    assert "group.max.size" in gone[("Stable", "JoinGroup", "GROUP_MAX_SIZE_REACHED")]
    summary = summarise({}, target=KAFKA_1_0)
    assert summary["cells"] == len(universe()) - len(gone)
    assert set(summary["unreachable"]) == {" × ".join(c) for c in gone}


def test_a_line_before_kafka_9885_counts_the_group_max_size_cells():
    # 2.5's size-only rule (``max_size_limits_unknown_members_only``) refuses a new member of a
    # full group in every state, so with group.max.size 3 all three cells are counted
    kafka_2_5 = {**KAFKA_4_3, "version": "2.5.1", "request_versions": {"JoinGroup": [3, 5, 7]}}
    gone = unreachable_on(kafka_2_5)
    for state in ("PreparingRebalance", "CompletingRebalance", "Stable"):
        assert (state, "JoinGroup", "GROUP_MAX_SIZE_REACHED") not in gone


def test_the_reason_says_when_group_max_size_was_assumed():
    cell = ("Stable", "JoinGroup", "GROUP_MAX_SIZE_REACHED")
    assumed = {**KAFKA_4_3, "group_config": {"group.max.size": 2**31 - 1},
               "fact_sources": {"group.max.size": "assumed"}}  # fmt: skip
    assert "2147483647, assumed: Kafka's default" in unreachable_on(assumed)[cell]
    read = {**assumed, "fact_sources": {"group.max.size": "read"}}
    assert "(group.max.size is 2147483647, read)" in unreachable_on(read)[cell]


def test_a_line_rule_that_is_off_leaves_its_cell_out():
    kafka_3_9 = {**KAFKA_4_3, "version": "3.9.2"}
    gone = unreachable_on(kafka_3_9)
    assert set(gone) == {("Empty", "OffsetCommit", "GROUP_ID_NOT_FOUND"),
                         ("Empty", "DescribeGroups", "GROUP_ID_NOT_FOUND")}  # fmt: skip
    assert (
        "commit_missing_group_v9_group_id_not_found is off"
        in gone[("Empty", "OffsetCommit", "GROUP_ID_NOT_FOUND")]
    )


def test_the_model_never_reaches_an_excluded_cell():
    for profile, seed in (("kafka-4.x", 11), ("kafka-3.9", 12)):
        # on 4.x a cell only a millisecond window gives may be reached, and is only not counted;
        # 3.9 describes the group in memory, so never
        gone = {
            cell: why
            for cell, why in excluded().items()
            if profile != "kafka-4.x" or cell not in WINDOW_ONLY
        }
        reached = _reached(profile, seed, 120)
        bad = {cell: gone[cell] for cell in reached if cell in gone}
        assert not bad, f"{profile}: cells the universe excludes were reached: {bad}"
        # and the run is not vacuous: most of the universe's no-setup cells are reached
        summary = summarise(reached)
        assert summary["reached"] >= 40, summary
