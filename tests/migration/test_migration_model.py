"""The mixed-protocol model (``model/migration.py``) on small hand-written histories, one crossing
rule each, with what Apache Kafka 4.3.1's ``GroupMetadataManager`` does there (cited per test).
The broker half is ``tests/differential/test_migration_differential.py``."""

from __future__ import annotations

import pytest
from kgc.model.client_view import simple_commit, subscription
from kgc.model.commands import (
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    MemberIdentity,
    OffsetFetch,
    Protocol,
    SyncGroup,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.consumer_group import ConsumerGroupConfig
from kgc.model.migration import MigratingGroupModel, MigrationConfig, MixedState, PolicyNotModelled
from kgc.model.profiles import GroupConfig

T = "t"
CONFIG = MigrationConfig(
    classic=GroupConfig(
        group_min_session_timeout_ms=500,
        group_initial_rebalance_delay_ms=0,
        topics=((T, 3),),
    ),
    consumer=ConsumerGroupConfig(topics=((T, 3),), session_timeout_ms=2000),
)


class Run:
    """Apply commands one by one, keeping every allowed successor; answers are read at once."""

    def __init__(self) -> None:
        self.model = MigratingGroupModel(CONFIG)
        self.states: list[MixedState] = [self.model.initial()]
        self.rid = 0

    def send(self, command, at_ms: float = 0.0) -> list:
        self.rid += 1
        last = []
        for s in self.states:
            for s1 in self.model.advance(s, must_until=at_ms, may_until=at_ms):
                for s2 in self.model.invoke(s1, request_id=self.rid, command=command, at_ms=at_ms):
                    out = self.model.outbox(s2)
                    if self.rid in out:
                        last.append((self.model.deliver(s2, self.rid), out[self.rid][0]))
                    else:
                        last.append((s2, None))  # parked (a classic join waiting for others)
        self.states = list(dict.fromkeys(s for s, _ in last))
        return [a for _, a in last]

    def only(self, command, at_ms: float = 0.0):
        answers = set(self.send(command, at_ms))
        if answers == {None}:  # parked: let the coordinator's timers due by then run
            answers = set(self.wait(at_ms + 1))
        assert len(answers) == 1, answers
        return answers.pop()

    def wait(self, at_ms: float) -> list:
        """Advance to ``at_ms`` and read the last request's answer from every state."""
        out = []
        for s in self.states:
            for s1 in self.model.advance(s, must_until=at_ms, may_until=at_ms):
                answer = self.model.outbox(s1).get(self.rid)
                if answer is not None:
                    out.append((self.model.deliver(s1, self.rid), answer[0]))
        self.states = list(dict.fromkeys(s for s, _ in out))
        return [a for _, a in out]

    def kinds(self) -> set[str]:
        return {self.model.group_state(s) for s in self.states}


def cgh_join(n: int = 1) -> ConsumerGroupHeartbeat:
    return ConsumerGroupHeartbeat(
        client="k1",
        member_id=f"k1-{n}",
        member_epoch=0,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=(T,),
        topic_partitions=(),
        version=1,
    )


def classic_join(member_id: str = "", version: int = 3) -> JoinGroup:
    return JoinGroup(
        client="c1",
        member_id=member_id,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocols=(Protocol(name="range", metadata=subscription([T])),),
        version=version,
    )


def commit_simple(offset: int = 7):
    offsets = (TopicPartitionOffset(topic=T, partition=0, offset=offset),)
    return simple_commit("c9", offsets=offsets, version=8)


FETCH = OffsetFetch(client="c9", partitions=(TopicPartition(topic=T, partition=0),), version=7)


def classic_member() -> Run:
    """c1 is the only member of a Stable classic group (v3 join, then its sync)."""
    run = Run()
    joined = run.only(classic_join())
    assert joined.error == "NONE" and joined.leader == joined.member_id
    synced = run.only(
        SyncGroup(client="c1", member_id=joined.member_id, generation_id=1, version=3)
    )
    assert synced.error == "NONE"
    assert run.kinds() == {"classic/Stable"}
    return run


def test_a_consumer_member_cannot_take_a_classic_group_with_members():
    """``getOrMaybeCreateConsumerGroup`` → ``validateOnlineUpgrade``: upgrade disabled."""
    run = classic_member()
    assert run.only(cgh_join()).error == "GROUP_ID_NOT_FOUND"
    assert run.kinds() == {"classic/Stable"}
    assert run.only(ConsumerGroupDescribe(client="k1", version=1)).error == "GROUP_ID_NOT_FOUND"


def test_a_consumer_join_deletes_an_empty_classic_group_and_keeps_its_offsets():
    """``maybeDeleteEmptyClassicGroup``: the simple group a generation -1 commit made goes; the
    offsets belong to the group id (``OffsetMetadataManager``)."""
    run = Run()
    assert run.only(commit_simple(7)).partitions[0].error == "NONE"
    assert run.kinds() == {"classic/Empty"}
    answer = run.only(cgh_join())
    assert answer.error == "NONE" and answer.member_epoch == 2
    assert run.kinds() == {"consumer/Stable"}
    assert [p.offset for p in run.only(FETCH).partitions] == [7]


def test_any_other_consumer_request_meets_no_consumer_group():
    """``GMM.consumerGroup``: a heartbeat with an epoch, or a leave, to a classic group."""
    run = classic_member()
    beat = ConsumerGroupHeartbeat(
        client="k1", member_id="k1-1", member_epoch=3, topic_partitions=(), version=1
    )
    assert run.only(beat).error == "GROUP_ID_NOT_FOUND"
    leave = ConsumerGroupHeartbeat(client="k1", member_id="k1-1", member_epoch=-1, version=1)
    assert run.only(leave).error == "GROUP_ID_NOT_FOUND"
    # validation comes first (``throwIfConsumerGroupHeartbeatRequestIsInvalid``)
    bad = ConsumerGroupHeartbeat(
        client="k1", member_id="k1-1", member_epoch=0, topic_partitions=(), version=1
    )
    assert run.only(bad).error == "INVALID_REQUEST"


def test_a_classic_join_meets_a_consumer_group_with_members():
    """``classicGroupJoinToConsumerGroup`` → ``throwIfClassicMemberCannotJoinConsumerGroup``,
    after ``GroupCoordinatorService.joinGroup``'s session-timeout check."""
    run = Run()
    assert run.only(cgh_join()).error == "NONE"
    assert run.only(classic_join()).error == "INCONSISTENT_GROUP_PROTOCOL"
    short = JoinGroup(
        client="c1",
        session_timeout_ms=10,
        rebalance_timeout_ms=1000,
        protocols=(Protocol(name="range", metadata=subscription([T])),),
        version=3,
    )
    assert run.only(short).error == "INVALID_SESSION_TIMEOUT"
    assert run.kinds() == {"consumer/Stable"}


def test_classic_sync_heartbeat_and_describe_to_a_consumer_group():
    """``classicGroupSyncToConsumerGroup`` / ``classicGroupHeartbeatToConsumerGroup``: a member
    of the consumer protocol is not a classic member (``throwIfMemberDoesNotUseClassicProtocol``);
    ``describeGroups`` reads only classic groups (``GMM.classicGroup``)."""
    run = Run()
    run.only(cgh_join())
    for command in (
        SyncGroup(client="c1", member_id="k1-1", generation_id=2, version=3),
        Heartbeat(client="c1", member_id="k1-1", generation_id=2, version=3),
        Heartbeat(client="c1", member_id="nobody", generation_id=2, version=3),
    ):
        assert run.only(command).error == "UNKNOWN_MEMBER_ID", command
    no_protocol = SyncGroup(client="c1", member_id="k1-1", generation_id=2, version=5)
    assert run.only(no_protocol).error == "INCONSISTENT_GROUP_PROTOCOL"  # KafkaApis, first
    assert run.only(DescribeGroups(client="c1", version=6)).error == "GROUP_ID_NOT_FOUND"
    dead = run.only(DescribeGroups(client="c1", version=5))
    assert dead.error == "NONE" and dead.group_state == "Dead"


def test_a_classic_leave_removes_a_consumer_member_and_bumps_the_epoch():
    """``classicGroupLeaveToConsumerGroup`` → ``consumerGroupFenceMembers``."""
    run = Run()
    run.only(cgh_join())
    leave = LeaveGroup(
        client="c1",
        members=(MemberIdentity(member_id="k1-1"), MemberIdentity(member_id="stranger")),
        version=3,
    )
    answer = run.only(leave)
    assert answer.error == "NONE"
    assert [m.error for m in answer.members] == ["NONE", "UNKNOWN_MEMBER_ID"]
    # Empty without offsets: described at epoch 3, or already deleted by the cleanup
    described = {
        (a.error, a.group_epoch, a.members)
        for a in run.send(ConsumerGroupDescribe(client="k1", version=1))
    }
    assert described == {("NONE", 3, ()), ("GROUP_ID_NOT_FOUND", 0, ())}
    # the member is gone: its next heartbeat is unknown
    beat = ConsumerGroupHeartbeat(
        client="k1", member_id="k1-1", member_epoch=2, topic_partitions=(), version=1
    )
    assert {a.error for a in run.send(beat)} == {"UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND"}


def test_a_classic_join_deletes_an_empty_consumer_group_and_keeps_its_offsets():
    """``classicGroupJoin`` → ``maybeDeleteEmptyConsumerGroup``, then a new classic group."""
    run = Run()
    run.only(cgh_join())
    # an admin commit to a group with members is refused (``ConsumerGroup.validateOffsetCommit``)
    assert run.only(commit_simple(5)).partitions[0].error == "UNKNOWN_MEMBER_ID"
    run.only(ConsumerGroupHeartbeat(client="k1", member_id="k1-1", member_epoch=-1, version=1))
    # Empty without offsets: the cleanup may have deleted it already (then the commit makes a
    # classic group); with the offsets it stays
    assert run.only(commit_simple(5)).partitions[0].error == "NONE"
    assert run.kinds() == {"consumer/Empty", "classic/Empty"}
    run.states = [s for s in run.states if run.model.group_state(s) == "consumer/Empty"]
    joined = run.only(classic_join())
    assert joined.error == "NONE" and joined.generation_id == 1
    assert run.kinds() == {"classic/CompletingRebalance"}
    assert [p.offset for p in run.only(FETCH).partitions] == [5]


def test_policies_that_convert_groups_with_members_are_refused():
    for policy in ("bidirectional", "upgrade", "downgrade", "BIDIRECTIONAL"):
        with pytest.raises(PolicyNotModelled, match="not modelled"):
            MigrationConfig(migration_policy=policy)
    with pytest.raises(ValueError, match="unknown"):
        MigrationConfig(migration_policy="sideways")
    MigrationConfig(migration_policy="Disabled")  # case-insensitive, as ``parse`` is
