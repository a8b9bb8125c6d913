"""The mixed-protocol model (``model/consumer/migration.py``) on small hand-written histories, one
crossing rule each, with what Apache Kafka 4.3.1's ``GroupMetadataManager`` does there (cited per
test). The broker half is ``tests/differential/test_migration_differential.py``."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.model.client_view import simple_commit, subscription
from kgc.model.commands import (
    Assignment,
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
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
from kgc.model.consumer.group import ConsumerGroupConfig
from kgc.model.consumer.migration import MigratingGroupModel, MigrationConfig, MixedState
from kgc.model.profiles import GroupConfig

T = "t"


def config(policy: str = "disabled") -> MigrationConfig:
    return MigrationConfig(
        classic=GroupConfig(
            group_min_session_timeout_ms=500,
            group_initial_rebalance_delay_ms=0,
            topics=((T, 3),),
        ),
        consumer=ConsumerGroupConfig(topics=((T, 3),), session_timeout_ms=2000),
        migration_policy=policy,
    )


class Run:
    """Apply commands one by one, keeping every allowed successor; answers are read at once."""

    def __init__(self, policy: str = "disabled") -> None:
        self.model = MigratingGroupModel(config(policy))
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


def classic_member(policy: str = "disabled", assignment: str = "") -> Run:
    """c1 is the only member of a Stable classic group (v3 join, then its sync)."""
    run = Run(policy)
    joined = run.only(classic_join())
    assert joined.error == "NONE" and joined.leader == joined.member_id
    assignments = () if not assignment else (Assignment(member_id="c1-1", assignment=assignment),)
    synced = run.only(
        SyncGroup(
            client="c1",
            member_id=joined.member_id,
            generation_id=1,
            assignments=assignments,
            version=3,
        )
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


@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_old_classic_leave_names_one_member_and_answers_with_its_error(version):
    """LeaveGroup v0-2 to a consumer group: the request names one member id
    (``LeaveGroupRequest.normalizedData``) and the answer carries that member's error alone,
    at the top level (``LeaveGroupResponse``'s constructor for ``version <= 2``). The search met
    it once it drew every LeaveGroup version (a model that did not know it never answered)."""
    run = Run()
    run.only(cgh_join())
    stranger = LeaveGroup(
        client="c1", members=(MemberIdentity(member_id="stranger"),), version=version
    )
    assert (run.only(stranger).error, run.only(stranger).members) == ("UNKNOWN_MEMBER_ID", ())
    answer = run.only(
        LeaveGroup(client="c1", members=(MemberIdentity(member_id="k1-1"),), version=version)
    )
    assert (answer.error, answer.members) == ("NONE", ())
    beat = ConsumerGroupHeartbeat(
        client="k1", member_id="k1-1", member_epoch=2, topic_partitions=(), version=1
    )
    assert {a.error for a in run.send(beat)} == {"UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND"}


@pytest.mark.parametrize(
    "metadata",
    [
        "\x00\x00\x00\x00\x00\x10",  # a topic count past the end
        "\x00\x00\x00\x00\x00\x01\x00\x05ab",  # a topic name past the end
        "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09",  # user data past the end
    ],
)
def test_a_classic_join_whose_subscription_does_not_parse_is_an_unknown_server_error(metadata):
    """``classicGroupJoinToConsumerGroup`` reads the first protocol's metadata
    (``deserializeSubscription``): a SchemaException becomes an IllegalStateException, and any
    other failure escapes as it is, so the join is answered UNKNOWN_SERVER_ERROR and nothing is
    written. Found by ``kgc check --protocol migration --seed 33`` on 4.3.1 (1-minimal: a consumer
    joins, then a static classic member joins at v9 with a topic count of 16 and no bytes after
    it; the model said NONE)."""
    run = Run("bidirectional")
    run.only(cgh_join())
    join = classic_join(version=9)
    bad = replace(
        join,
        group_instance_id="c1-instance",
        protocols=(Protocol(name="range", metadata=metadata),),
    )
    assert run.only(bad).error == "UNKNOWN_SERVER_ERROR"
    described = run.only(ConsumerGroupDescribe(client="k1", version=1))
    assert [m.member_id for m in described.members] == ["k1-1"]  # nothing was written
    assert run.only(replace(join, group_instance_id="c1-instance")).error == "NONE"


def test_offset_fetch_v1_reads_a_consumer_groups_offsets():
    """OffsetFetch v1, the oldest 4.x accepts (KIP-896), to a consumer group: answered as the
    newer versions are, by partition (it has no top-level error). Seen on 4.3.1 by the search
    once it drew every OffsetFetch version: offset -1, no error."""
    run = Run()
    run.only(cgh_join())
    answer = run.only(
        OffsetFetch(client="c1", partitions=(TopicPartition(topic=T, partition=0),), version=1)
    )
    assert [(p.offset, p.error) for p in answer.partitions] == [(-1, "NONE")]


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


def test_policy_names_are_kafkas():
    """``ConsumerGroupMigrationPolicy``: four values, any case; the broker refuses others."""
    assert MigrationConfig(migration_policy="BIDIRECTIONAL").migration_policy == "bidirectional"
    assert MigrationConfig().migration_policy == "bidirectional"  # Kafka 4.x's default
    with pytest.raises(ValueError, match="unknown"):
        MigrationConfig(migration_policy="sideways")


ALL = '{"t": [0, 1, 2]}'


def upgraded() -> Run:
    """c1 holds every partition in a Stable classic group (generation 1); consumer k1 joins."""
    run = classic_member("bidirectional", ALL)
    answer = run.only(cgh_join())
    # ``convertToConsumerGroup``: group and assignment epoch 1; the join bumps the epoch to 2;
    # the uniform target splits the partitions, and k1's are still c1's: it gets none yet
    assert answer.error == "NONE" and answer.member_epoch == 2 and answer.assignment == ()
    return run


def test_a_consumer_member_upgrades_a_classic_group_with_members():
    """``validateOnlineUpgrade`` + ``ConsumerGroup.fromClassicGroup``: the classic member keeps
    its partitions at its generation, Stable, until it rejoins."""
    run = upgraded()
    assert run.kinds() == {"consumer/Reconciling"}
    # the uniform assignor's choice is open (``consumer_group.py``): every allowed target
    for described in run.send(ConsumerGroupDescribe(client="k1", version=1)):
        assert (described.group_epoch, described.assignment_epoch) == (2, 2)
        c1 = next(m for m in described.members if m.member_id == "c1-1")
        assert c1.member_epoch == 1 and len(c1.assignment) == 3
        assert {len(m.target_assignment) for m in described.members} == {1, 2}


def test_a_classic_member_of_a_consumer_group_rejoins_and_syncs():
    """``classicGroupHeartbeatToConsumerGroup``: behind the assignment epoch, rejoin;
    ``classicGroupJoinToConsumerGroup``: answered at once, generation = member epoch, no leader;
    ``classicGroupSyncToConsumerGroup``: its assigned partitions."""
    run = upgraded()
    beat = Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=3)
    assert run.only(beat).error == "REBALANCE_IN_PROGRESS"
    wrong = Heartbeat(client="c1", member_id="c1-1", generation_id=7, version=3)
    assert run.only(wrong).error == "ILLEGAL_GENERATION"
    joined = run.only(classic_join("c1-1"))
    # a v0 subscription owns nothing: the revocation is complete at once, epoch 2
    assert (joined.error, joined.generation_id, joined.leader, joined.members) == (
        "NONE",
        2,
        "",
        (),
    )
    assert joined.protocol_name == "range"
    synced = {
        a.assignment
        for a in run.send(SyncGroup(client="c1", member_id="c1-1", generation_id=2, version=3))
    }
    assert synced <= {
        '{"t": [0, 1]}',
        '{"t": [0, 2]}',
        '{"t": [1, 2]}',
        '{"t": [0]}',
        '{"t": [1]}',
        '{"t": [2]}',
    }
    assert (
        run.only(Heartbeat(client="c1", member_id="c1-1", generation_id=2, version=3)).error
        == "NONE"
    )


def test_parked_classic_joins_are_answered_rebalance_in_progress_on_upgrade():
    """``convertToConsumerGroup``: ``completeAllJoinFutures(REBALANCE_IN_PROGRESS)``."""
    run = classic_member("bidirectional", ALL)
    c2 = JoinGroup(
        client="c2",
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocols=(Protocol(name="range", metadata=subscription([T])),),
        version=3,
    )
    assert run.send(c2) == [None]  # parked: c1 must rejoin first
    parked = run.rid
    run.only(cgh_join())
    answers = {run.model.outbox(s).get(parked) for s in run.states}
    assert {a[0].error for a in answers if a} == {"REBALANCE_IN_PROGRESS"}


def test_an_upgrade_is_refused_without_the_policy_or_the_consumer_protocol_type():
    """``validateOnlineUpgrade``: the policy, then ``usesConsumerGroupProtocol``."""
    for policy in ("disabled", "downgrade"):
        run = classic_member(policy, ALL)
        assert run.only(cgh_join()).error == "GROUP_ID_NOT_FOUND"
    run = Run("bidirectional")
    other = JoinGroup(
        client="c1",
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocol_type="connect",
        protocols=(Protocol(name="default", metadata="x"),),
        version=3,
    )
    assert run.only(other).error == "NONE"
    assert run.only(cgh_join()).error == "GROUP_ID_NOT_FOUND"


def test_the_last_consumer_member_leaving_downgrades_the_group():
    """``consumerGroupFenceMembers`` → ``convertToClassicGroup``: every member left is classic, so
    the group is classic again, at the group epoch, and rebalances."""
    run = upgraded()
    leave = ConsumerGroupHeartbeat(client="k1", member_id="k1-1", member_epoch=-1, version=1)
    assert run.only(leave).error == "NONE"
    assert run.kinds() == {"classic/PreparingRebalance"}
    assert {s.classic.generation_id for s in run.states} == {2}
    beat = Heartbeat(client="c1", member_id="c1-1", generation_id=2, version=3)
    assert run.only(beat).error == "REBALANCE_IN_PROGRESS"
    joined = run.only(classic_join("c1-1"))
    assert (joined.error, joined.generation_id, joined.leader) == ("NONE", 3, "c1-1")


def test_with_upgrade_only_the_classic_member_stays_in_the_consumer_group():
    run = classic_member("upgrade", ALL)
    assert run.only(cgh_join()).error == "NONE"
    leave = ConsumerGroupHeartbeat(client="k1", member_id="k1-1", member_epoch=-1, version=1)
    run.only(leave)
    assert run.kinds() == {"consumer/Assigning"}


def test_a_classic_member_joins_a_consumer_group_with_the_member_id_handshake():
    """``classicGroupJoinToConsumerGroup``: KIP-394's handshake, then a member of the group."""
    run = Run("bidirectional")
    run.only(cgh_join())
    first = run.only(classic_join(version=4))
    assert (first.error, first.member_id) == ("MEMBER_ID_REQUIRED", "c1-1")
    joined = run.only(classic_join("c1-1", version=4))
    assert joined.error == "NONE" and joined.generation_id == 3 and joined.leader == ""
    # its commits follow generations (``ConsumerGroup.validateOffsetCommit``): any version
    offsets = (TopicPartitionOffset(topic=T, partition=0, offset=1),)
    ahead = OffsetCommit(client="c1", member_id="c1-1", generation_id=9, offsets=offsets, version=8)
    assert run.only(ahead).partitions[0].error == "ILLEGAL_GENERATION"
    own = OffsetCommit(client="c1", member_id="c1-1", generation_id=3, offsets=offsets, version=8)
    assert run.only(own).partitions[0].error == "NONE"
