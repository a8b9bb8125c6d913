"""Input cells: request × version × field class (``model/classic/inputs.py``,
``engine/coverage.py``), with no broker.

The field class names what a request's fields are to the group when it is sent, in the classes
Kafka's validation tells apart; the universe is every version a run sends × each request's
classes, less the classes a version has no field for and those the versions sent cannot give.
"""

from __future__ import annotations

import random

from kgc.engine.coverage import (
    input_cells_of,
    input_excluded,
    input_universe,
    input_versions,
    summarise_inputs,
)
from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.model.classic import inputs as i
from kgc.model.classic.state import GroupState, Member, PendingMember
from kgc.model.commands import (
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    SyncGroup,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.properties.machine import SuiteContext, machine_for, search

LIMIT = 4096


def _member(member_id: str, instance: str | None = None) -> Member:
    return Member(
        member_id=member_id,
        group_instance_id=instance,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocol_type="consumer",
        protocols=(Protocol(name="range"),),
    )


# a Stable group at generation 3: a dynamic member, a static one, and a pending member (KIP-394)
STABLE = GroupState(
    exists=True,
    state="Stable",
    generation_id=3,
    protocol_type="consumer",
    protocol_name="range",
    members=(_member("c1-1"), _member("c2-1", "c2-instance")),
    pending_members=(PendingMember(member_id="c3-1", deadline_ms=1000.0),),
    offsets=(),
)
MISSING = GroupState()


def cls(state: GroupState, command: object) -> str | None:
    return i.input_class(state, command, metadata_limit=LIMIT)


def join(member_id: str, version: int, instance: str | None = None) -> JoinGroup:
    return JoinGroup(
        client="c9",
        member_id=member_id,
        group_instance_id=instance,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocol_type="consumer",
        protocols=(Protocol(name="range"),),
        version=version,
    )


def test_join_classes_follow_kafkas_order_and_the_version_carrying_the_instance_id():
    assert cls(STABLE, join("", 0)) == i.NEW_MEMBER  # v0: no handshake, added at once
    assert cls(STABLE, join("", 5, "c9-instance")) == i.NEW_STATIC_MEMBER
    assert cls(STABLE, join("", 5, "c2-instance")) == i.STATIC_RESTART
    # v4 carries no group.instance.id: the same fields are a dynamic new member
    assert cls(STABLE, join("", 4, "c2-instance")) == i.NEW_MEMBER
    # the instance is checked before the id (ClassicGroup.validateMember)
    assert cls(STABLE, join("c1-1", 5, "c2-instance")) == i.FENCED_INSTANCE
    assert cls(STABLE, join("c3-1", 2)) == i.PENDING_MEMBER
    assert cls(STABLE, join("c1-1", 9)) == i.MEMBER
    assert cls(STABLE, join("stranger", 9)) == i.UNKNOWN_MEMBER
    assert cls(MISSING, join("c1-1", 3)) == i.UNKNOWN_MEMBER


def test_heartbeat_v0_from_a_member_of_a_stable_group_and_its_stale_and_fenced_kin():
    def hb(member_id: str, generation: int, version: int, instance: str | None = None) -> object:
        return Heartbeat(
            client="c1",
            member_id=member_id,
            generation_id=generation,
            group_instance_id=instance,
            version=version,
        )

    assert cls(STABLE, hb("c1-1", 3, 0)) == i.CURRENT
    assert cls(STABLE, hb("c1-1", 2, 0)) == i.OTHER_GENERATION
    assert cls(STABLE, hb("c1-1", 3, 3, "c2-instance")) == i.FENCED_INSTANCE
    assert cls(STABLE, hb("c1-1", 3, 2, "c2-instance")) == i.CURRENT  # v2 sends no instance id
    assert cls(STABLE, hb("c3-1", 3, 4)) == i.UNKNOWN_MEMBER  # pending is no member yet
    assert cls(MISSING, hb("c1-1", 3, 4)) == i.UNKNOWN_MEMBER


def test_sync_v5_checks_the_protocol_before_and_after_the_member():
    def sync(version: int, **fields: object) -> SyncGroup:
        base: dict[str, object] = {
            "client": "c1",
            "member_id": "c1-1",
            "generation_id": 3,
            "version": version,
            "protocol_type": "consumer",
            "protocol_name": "range",
        }
        return SyncGroup(**{**base, **fields})  # type: ignore[arg-type]

    assert cls(STABLE, sync(5, protocol_type=None, protocol_name=None)) == i.NO_PROTOCOL
    assert cls(STABLE, sync(5, protocol_name="roundrobin")) == i.OTHER_PROTOCOL
    assert cls(STABLE, sync(4, protocol_name="roundrobin")) == i.CURRENT  # v4 names none
    assert cls(STABLE, sync(5, generation_id=1, protocol_name="roundrobin")) == (i.OTHER_GENERATION)


def test_commit_classes_simple_missing_group_member_and_oversized_metadata():
    def commit(member_id: str, generation: int, version: int, metadata: str = "") -> object:
        offsets = (TopicPartitionOffset(topic="t", partition=0, offset=1, metadata=metadata),)
        return OffsetCommit(
            client="c1",
            member_id=member_id,
            generation_id=generation,
            offsets=offsets,
            version=version,
        )

    assert cls(MISSING, commit("", -1, 2)) == i.SIMPLE_NO_MEMBERS
    assert cls(STABLE, commit("", -1, 8)) == i.SIMPLE_WITH_MEMBERS
    assert cls(MISSING, commit("", 1, 9)) == i.NO_GROUP
    assert cls(STABLE, commit("c1-1", 3, 2)) == i.CURRENT
    assert cls(STABLE, commit("c1-1", 3, 7, "m" * (LIMIT + 1))) == i.OVERSIZED
    # v0 carries neither a generation nor a member id: always a simple commit
    assert cls(STABLE, commit("c1-1", 3, 0)) == i.SIMPLE_WITH_MEMBERS


def test_leave_fetch_and_describe_classes():
    def leave(version: int, member_id: str, instance: str | None = None) -> LeaveGroup:
        identity = MemberIdentity(member_id=member_id, group_instance_id=instance)
        return LeaveGroup(client="c1", members=(identity,), version=version)

    assert cls(STABLE, leave(3, "", "c2-instance")) == i.BY_INSTANCE
    assert cls(STABLE, leave(3, "c1-1", "c2-instance")) == i.FENCED_INSTANCE
    assert cls(STABLE, leave(0, "c3-1")) == i.PENDING_MEMBER
    assert cls(STABLE, leave(1, "c1-1")) == i.MEMBER
    assert cls(STABLE, leave(5, "stranger")) == i.UNKNOWN_MEMBER
    fetch = OffsetFetch(
        client="c1", partitions=(TopicPartition(topic="t", partition=0),), version=1
    )
    assert cls(STABLE, fetch) == i.NOTHING_COMMITTED
    assert cls(MISSING, DescribeGroups(client="c1", version=0)) == i.NO_GROUP
    assert cls(STABLE, DescribeGroups(client="c1", version=3)) == i.WITH_STATIC
    empty = GroupState(exists=True)
    assert cls(empty, DescribeGroups(client="c1", version=6)) == i.NO_MEMBERS


def test_the_universe_holds_every_version_sent_less_what_a_version_cannot_carry():
    versions_4_3 = {
        "JoinGroup": list(range(0, 10)),
        "SyncGroup": list(range(0, 6)),
        "Heartbeat": list(range(0, 5)),
        "LeaveGroup": list(range(0, 6)),
        "OffsetCommit": list(range(2, 11)),
        "OffsetFetch": list(range(1, 11)),
        "DescribeGroups": list(range(0, 7)),
        "FindCoordinator": list(range(0, 7)),
    }
    cells = set(input_universe({"request_versions": versions_4_3}))
    gone = input_excluded(versions_4_3)
    assert ("Heartbeat", 0, i.CURRENT) in cells
    assert ("JoinGroup", 0, i.NEW_MEMBER) in cells
    assert ("JoinGroup", 2, i.PENDING_MEMBER) in cells  # a pending id rejoining at v2
    assert "from v3" in gone[("Heartbeat", 2, i.FENCED_INSTANCE)]
    assert "from v5" in gone[("JoinGroup", 4, i.STATIC_RESTART)]
    assert "from v5" in gone[("SyncGroup", 4, i.NO_PROTOCOL)]
    assert not cells & set(gone)
    every = {
        (api, v, c) for api, vs in versions_4_3.items() for v in vs for c in i.INPUT_CLASSES[api]
    }
    assert cells | set(gone) == every
    # a request type the target cannot be sent has no cells
    assert not any(c[0] == "FindCoordinator" for c in input_universe({"request_versions": {}}))


def test_a_line_without_the_handshake_or_static_members_counts_neither():
    """Kafka 1.0 speaks JoinGroup v0-2: no member is ever pending (KIP-394, v4) or static
    (KIP-345, v5), so their classes are left out with the reason, at every version."""
    versions_1_0 = {"JoinGroup": [0, 1, 2], "LeaveGroup": [0, 1], "DescribeGroups": [0, 1]}
    gone = input_excluded(versions_1_0)
    assert "KIP-394" in gone[("JoinGroup", 0, i.PENDING_MEMBER)]
    assert "KIP-394" in gone[("LeaveGroup", 1, i.PENDING_MEMBER)]
    assert "KIP-345" in gone[("DescribeGroups", 1, i.WITH_STATIC)]
    assert ("DescribeGroups", 1, i.WITH_MEMBERS) in input_universe(
        {"request_versions": versions_1_0}
    )


def test_without_a_target_the_universe_is_every_version_kafka_python_speaks():
    versions = input_versions()
    assert sorted(versions["JoinGroup"]) == list(range(0, 10))
    assert sorted(versions["OffsetCommit"]) == list(range(2, 11))


def test_the_engine_records_the_input_class_and_the_search_reaches_most_cells():
    """The model's own search: every request is classed, no class it reaches is excluded, and
    the steering of ``aim`` (variants at every version) reaches most of the universe."""
    record = {
        "profile": "kafka-4.x",
        "config": {
            "group_min_session_timeout_ms": 500,
            "group_initial_rebalance_delay_ms": 0,
            "group_max_size": 3,
        },
    }
    rng = random.Random(1)
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build(record, gid), choose=rng.choice),
        new_model=lambda gid: build(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
    )
    ctx.new_group_id = lambda: f"kgc-inputs-{next(counter)}"
    search(machine_for(ctx), examples=24, steps=24, seed=1)
    target = {"request_versions": ctx.versions}
    summary = summarise_inputs(ctx.input_coverage, target)
    assert summary["outside_universe"] == []
    assert not set(ctx.input_coverage) & set(input_excluded(input_versions(target)))
    assert summary["percent"] >= 80, summary["never"]


def test_input_cells_are_counted_at_the_request_and_a_disagreement_counts_none():
    from kgc.model.history import Invoke

    hb = Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=0)
    events = [
        Invoke(step=0, at_ms=0.0, request_id=0, command=hb),
        Invoke(step=1, at_ms=1.0, request_id=1, command=hb),
        Invoke(step=2, at_ms=2.0, request_id=2, command=hb),
    ]
    extras = [{"input_class": i.CURRENT}, {"input_class": "?"}, {}]
    assert input_cells_of(events, extras) == {("Heartbeat", 0, i.CURRENT): 1}
