"""Model vocabulary <-> wire, with no broker: every command through kafka-python's encoder and back.

Requests: ``wire.encode`` -> bytes (header + framing, as sent) -> the class's own decoder; the
fields a broker would read are compared with values written here by hand. Responses: a response
object built the way a broker fills it -> bytes -> decoded -> ``wire.decode``; the model record is
compared with one written here by hand. Each API is exercised at every version kafka-python
encodes, so a layout switch (LeaveGroup v3, FindCoordinator v4, OffsetFetch v8, topic ids in v10)
is covered on both sides.
"""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.admin.groups import DescribeGroupsResponse
from kafka.protocol.consumer.group import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse
from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.client import error_name
from kgc.model import commands as m

GROUP = "kgc-wire-test"
REAL1 = "kgc-c1-2b1d0f4e-0000-4000-8000-000000000001"
REAL2 = "kgc-c2-2b1d0f4e-0000-4000-8000-000000000002"
TOPIC_ID = uuid.UUID("6a1f0c3e-1111-4222-8333-444455556666")


def versions(api: str) -> range:
    lo, hi = wire.REQUEST_CLASSES[api].valid_versions
    return range(lo, hi + 1)


def on_the_wire(req, version):
    """Encode as the client sends it (header, 4-byte size) and decode with the class's decoder."""
    req.with_header(correlation_id=7, client_id="kgc-c1")
    data = req.encode(header=True, framed=True)
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    return type(req).decode(data, version=version, header=True, framed=True)


def from_broker(response_cls, version, **fields):
    """A response as a broker at ``version`` serialises it, decoded by the client's decoder."""
    data = response_cls(**fields).encode(version=version)
    return response_cls.decode(data, version=version)


def ids_with_c1_c2() -> wire.MemberIds:
    ids = wire.MemberIds()
    assert ids.symbolic(REAL1, owner_client="c1") == "c1-1"
    assert ids.symbolic(REAL2, owner_client="c2") == "c2-1"
    return ids


# ------------------------------------------------------------------------------------ member ids


def test_member_ids_name_the_nth_id_revealed_to_each_client():
    ids = wire.MemberIds()
    assert ids.symbolic("a", owner_client="c1") == "c1-1"
    assert ids.symbolic("b", owner_client="c2") == "c2-1"
    assert ids.symbolic("c", owner_client="c1") == "c1-2"
    # revealing the same id again (e.g. the JoinGroup after MEMBER_ID_REQUIRED) keeps its name
    assert ids.symbolic("a", owner_client="c1") == "c1-1"
    assert ids.real("c1-2") == "c"
    assert ids.as_dict() == {"c1-1": "a", "c2-1": "b", "c1-2": "c"}


def test_member_ids_seen_elsewhere_first_are_not_named():
    ids = wire.MemberIds()
    # listed by the leader before its owner's own answer was processed: the caller must defer
    assert ids.symbolic("x") is None
    assert ids.name_or_unknown("x") == "unknown-x"
    # once revealed to its owner it gets the owner's next name, not a name from first sight
    assert ids.symbolic("x", owner_client="c3") == "c3-1"


def test_member_ids_empty_and_strangers():
    ids = wire.MemberIds()
    assert ids.real("") == ""
    assert ids.symbolic("") == ""
    fake = ids.real("stranger")
    assert fake == "kgc-stranger-stranger"
    assert ids.real("stranger") == fake  # stable
    assert ids.symbolic(fake) == "stranger"  # a broker echoing it maps back
    assert ids.as_dict() == {}  # fakes are not revealed ids


# ------------------------------------------------------------------------------------- requests


@pytest.mark.parametrize("v", versions("JoinGroup"))
def test_join_group_request(v):
    ids = ids_with_c1_c2()
    cmd = m.JoinGroup(
        client="c1",
        member_id="c1-1",
        group_instance_id="static-1" if v >= 5 else None,
        session_timeout_ms=6000,
        rebalance_timeout_ms=9000,
        protocol_type="consumer",
        protocols=(m.Protocol(name="range", metadata="t0,t1"), m.Protocol(name="rr", metadata="é")),
        version=v,
    )
    req, version = wire.encode(cmd, GROUP, ids)
    assert version == v
    got = on_the_wire(req, v)
    assert got.header.request_api_version == v
    assert got.header.request_api_key == 11
    assert got.group_id == GROUP
    assert got.member_id == REAL1
    assert got.session_timeout_ms == 6000
    assert got.protocol_type == "consumer"
    assert [(p.name, p.metadata) for p in got.protocols] == [
        ("range", b"t0,t1"),
        ("rr", "é".encode()),
    ]
    if v >= 1:
        assert got.rebalance_timeout_ms == 9000
    if v >= 5:
        assert got.group_instance_id == "static-1"


def test_join_group_new_member_sends_empty_id():
    cmd = m.JoinGroup(
        client="c1", session_timeout_ms=6000, rebalance_timeout_ms=6000, protocols=(), version=9
    )
    got = on_the_wire(*wire.encode(cmd, GROUP, wire.MemberIds()))
    assert got.member_id == ""


@pytest.mark.parametrize("v", versions("SyncGroup"))
def test_sync_group_request(v):
    ids = ids_with_c1_c2()
    cmd = m.SyncGroup(
        client="c1",
        member_id="c1-1",
        generation_id=3,
        protocol_type="consumer" if v >= 5 else None,
        protocol_name="range" if v >= 5 else None,
        assignments=(
            m.Assignment(member_id="c1-1", assignment="p0"),
            m.Assignment(member_id="c2-1", assignment="p1"),
        ),
        version=v,
    )
    got = on_the_wire(*wire.encode(cmd, GROUP, ids))
    assert (got.group_id, got.member_id, got.generation_id) == (GROUP, REAL1, 3)
    assert [(a.member_id, a.assignment) for a in got.assignments] == [
        (REAL1, b"p0"),
        (REAL2, b"p1"),
    ]
    if v >= 5:
        assert (got.protocol_type, got.protocol_name) == ("consumer", "range")


@pytest.mark.parametrize("v", versions("Heartbeat"))
def test_heartbeat_request(v):
    cmd = m.Heartbeat(client="c2", member_id="c2-1", generation_id=5, version=v)
    got = on_the_wire(*wire.encode(cmd, GROUP, ids_with_c1_c2()))
    assert (got.group_id, got.member_id, got.generation_id) == (GROUP, REAL2, 5)


@pytest.mark.parametrize("v", versions("LeaveGroup"))
def test_leave_group_request_single_member(v):
    cmd = m.LeaveGroup(client="c1", members=(m.MemberIdentity(member_id="c1-1"),), version=v)
    got = on_the_wire(*wire.encode(cmd, GROUP, ids_with_c1_c2()))
    assert got.group_id == GROUP
    if v < 3:
        assert got.member_id == REAL1
    else:
        assert [(x.member_id, x.group_instance_id) for x in got.members] == [(REAL1, None)]


@pytest.mark.parametrize("v", [3, 4, 5])
def test_leave_group_request_batch(v):
    cmd = m.LeaveGroup(
        client="c1",
        members=(
            m.MemberIdentity(member_id="c2-1"),
            m.MemberIdentity(member_id="", group_instance_id="static-9"),
            m.MemberIdentity(member_id="stranger"),
        ),
        version=v,
    )
    got = on_the_wire(*wire.encode(cmd, GROUP, ids_with_c1_c2()))
    assert [(x.member_id, x.group_instance_id) for x in got.members] == [
        (REAL2, None),
        ("", "static-9"),
        ("kgc-stranger-stranger", None),
    ]


@pytest.mark.parametrize("v", [0, 1, 2])
def test_leave_group_before_v3_cannot_batch(v):
    cmd = m.LeaveGroup(
        client="c1",
        members=(m.MemberIdentity(member_id="c1-1"), m.MemberIdentity(member_id="c2-1")),
        version=v,
    )
    with pytest.raises(ValueError, match="exactly one member"):
        wire.encode(cmd, GROUP, ids_with_c1_c2())


@pytest.mark.parametrize("v", versions("OffsetCommit"))
def test_offset_commit_request(v):
    cmd = m.OffsetCommit(
        client="c1",
        member_id="c1-1",
        generation_id=2,
        offsets=(
            m.TopicPartitionOffset(topic="t", partition=0, offset=10, metadata="m0"),
            m.TopicPartitionOffset(topic="t", partition=1, offset=11),
        ),
        version=v,
    )
    got = on_the_wire(*wire.encode(cmd, GROUP, ids_with_c1_c2(), topic_ids={"t": TOPIC_ID}))
    assert (got.group_id, got.member_id, got.generation_id_or_member_epoch) == (GROUP, REAL1, 2)
    (topic,) = got.topics
    assert (topic.topic_id if v >= 10 else topic.name) == (TOPIC_ID if v >= 10 else "t")
    assert [
        (p.partition_index, p.committed_offset, p.committed_metadata) for p in topic.partitions
    ] == [
        (0, 10, "m0"),
        (1, 11, ""),
    ]


def test_offset_commit_v10_needs_topic_ids():
    cmd = m.OffsetCommit(
        client="c1",
        member_id="c1-1",
        generation_id=2,
        offsets=(m.TopicPartitionOffset(topic="t", partition=0, offset=1),),
        version=10,
    )
    with pytest.raises(ValueError, match="topic_ids"):
        wire.encode(cmd, GROUP, ids_with_c1_c2())


@pytest.mark.parametrize("v", versions("OffsetFetch"))
def test_offset_fetch_request(v):
    cmd = m.OffsetFetch(
        client="c1",
        partitions=(
            m.TopicPartition(topic="t", partition=0),
            m.TopicPartition(topic="t", partition=2),
        ),
        version=v,
    )
    got = on_the_wire(*wire.encode(cmd, GROUP, wire.MemberIds(), topic_ids={"t": TOPIC_ID}))
    if v >= 8:
        (group,) = got.groups
        assert group.group_id == GROUP
        (topic,) = group.topics
        assert (topic.topic_id if v >= 10 else topic.name) == (TOPIC_ID if v >= 10 else "t")
    else:
        assert got.group_id == GROUP
        (topic,) = got.topics
        assert topic.name == "t"
    assert list(topic.partition_indexes) == [0, 2]


@pytest.mark.parametrize("v", versions("DescribeGroups"))
def test_describe_groups_request(v):
    got = on_the_wire(
        *wire.encode(m.DescribeGroups(client="c1", version=v), GROUP, wire.MemberIds())
    )
    assert list(got.groups) == [GROUP]


@pytest.mark.parametrize("v", versions("FindCoordinator"))
def test_find_coordinator_request(v):
    got = on_the_wire(
        *wire.encode(m.FindCoordinator(client="c1", version=v), GROUP, wire.MemberIds())
    )
    if v >= 4:
        assert list(got.coordinator_keys) == [GROUP]
    else:
        assert got.key == GROUP
    if v >= 1:
        assert got.key_type == 0  # GROUP


def test_version_out_of_range_is_refused():
    with pytest.raises(ValueError, match="v0-v9"):
        wire.encode(
            m.JoinGroup(
                client="c1", session_timeout_ms=1, rebalance_timeout_ms=1, protocols=(), version=10
            ),
            GROUP,
            wire.MemberIds(),
        )


# ------------------------------------------------------------------------------------ responses


def _join_cmd(client: str, v: int) -> m.JoinGroup:
    return m.JoinGroup(
        client=client,
        session_timeout_ms=6000,
        rebalance_timeout_ms=6000,
        protocols=(m.Protocol(name="range", metadata="x"),),
        version=v,
    )


@pytest.mark.parametrize("v", [4, 5, 6, 7, 8, 9])
def test_join_group_member_id_required_reveals_own_id(v):
    ids = wire.MemberIds()
    resp = from_broker(
        JoinGroupResponse,
        v,
        error_code=79,
        generation_id=-1,
        protocol_name=None if v >= 7 else "",
        leader="",
        member_id=REAL1,
        members=[],
    )
    got = wire.decode(_join_cmd("c1", v), resp, ids)
    assert got == m.JoinGroupResponse(
        error="MEMBER_ID_REQUIRED",
        generation_id=-1,
        protocol_name=None,
        leader="",
        member_id="c1-1",
    )
    assert ids.real("c1-1") == REAL1


@pytest.mark.parametrize("v", list(versions("JoinGroup")))
def test_join_group_leader_and_follower_answers(v):
    member_cls = JoinGroupResponse.JoinGroupResponseMember
    # the broker lists members in its own order; the model's record is sorted by symbolic id
    members = [
        member_cls(member_id=REAL2, group_instance_id=None, metadata=b"m2"),
        member_cls(member_id=REAL1, group_instance_id=None, metadata=b"m1"),
    ]
    common = dict(error_code=0, generation_id=4, protocol_name="range", leader=REAL2)
    if v >= 7:
        common["protocol_type"] = "consumer"
    leader = from_broker(JoinGroupResponse, v, member_id=REAL2, members=members, **common)
    follower = from_broker(JoinGroupResponse, v, member_id=REAL1, members=[], **common)

    ids = wire.MemberIds()
    c1, c2 = _join_cmd("c1", v), _join_cmd("c2", v)
    # the leader's answer names c1's id before c1's own answer has been processed
    wire.learn_own_id(c2, leader, ids)
    assert not wire.all_ids_known(c2, leader, ids)
    wire.learn_own_id(c1, follower, ids)
    assert wire.all_ids_known(c2, leader, ids)

    ptype = "consumer" if v >= 7 else None  # ProtocolType exists from v7
    assert wire.decode(c2, leader, ids) == m.JoinGroupResponse(
        error="NONE",
        generation_id=4,
        protocol_type=ptype,
        protocol_name="range",
        leader="c2-1",
        member_id="c2-1",
        members=(
            m.JoinedMember(member_id="c1-1", metadata="m1"),
            m.JoinedMember(member_id="c2-1", metadata="m2"),
        ),
    )
    assert wire.decode(c1, follower, ids) == m.JoinGroupResponse(
        error="NONE",
        generation_id=4,
        protocol_type=ptype,
        protocol_name="range",
        leader="c2-1",
        member_id="c1-1",
    )


@pytest.mark.parametrize("v", [7, 8, 9])
def test_join_group_protocol_type_and_skip_assignment_are_carried(v):
    # a broker that names another protocol type, or tells the leader to skip the assignment,
    # must be seen to do so: the decoder drops neither (ProtocolType v7+, SkipAssignment v9+)
    resp = from_broker(
        JoinGroupResponse,
        v,
        error_code=0,
        generation_id=1,
        protocol_type="not-consumer",
        protocol_name="range",
        leader=REAL1,
        member_id=REAL1,
        members=[],
        skip_assignment=True,
    )
    got = wire.decode(_join_cmd("c1", v), resp, wire.MemberIds())
    assert got.protocol_type == "not-consumer"
    assert got.skip_assignment is (v >= 9)


def test_join_group_member_never_revealed_is_named_unknown():
    member_cls = JoinGroupResponse.JoinGroupResponseMember
    resp = from_broker(
        JoinGroupResponse,
        9,
        error_code=0,
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader=REAL1,
        member_id=REAL1,
        members=[
            member_cls(member_id=REAL1, metadata=b""),
            member_cls(member_id="ghost", metadata=b""),
        ],
    )
    got = wire.decode(_join_cmd("c1", 9), resp, wire.MemberIds())
    assert [x.member_id for x in got.members] == ["c1-1", "unknown-ghost"]


@pytest.mark.parametrize("v", versions("SyncGroup"))
def test_sync_group_response(v):
    resp = from_broker(
        SyncGroupResponse,
        v,
        error_code=0,
        protocol_type="consumer",
        protocol_name="range",
        assignment=b"p0,p1",
    )
    cmd = m.SyncGroup(client="c1", member_id="c1-1", generation_id=1, version=v)
    assert wire.decode(cmd, resp, ids_with_c1_c2()) == m.SyncGroupResponse(
        error="NONE",
        protocol_type="consumer" if v >= 5 else None,  # both fields exist from v5
        protocol_name="range" if v >= 5 else None,
        assignment="p0,p1",
    )
    bad = from_broker(SyncGroupResponse, v, error_code=27, assignment=b"")
    assert wire.decode(cmd, bad, ids_with_c1_c2()) == m.SyncGroupResponse(
        error="REBALANCE_IN_PROGRESS"
    )


@pytest.mark.parametrize("v", versions("Heartbeat"))
def test_heartbeat_response(v):
    cmd = m.Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=v)
    resp = from_broker(HeartbeatResponse, v, error_code=22)
    assert wire.decode(cmd, resp, ids_with_c1_c2()) == m.HeartbeatResponse(
        error="ILLEGAL_GENERATION"
    )


@pytest.mark.parametrize("v", versions("LeaveGroup"))
def test_leave_group_response(v):
    ids = ids_with_c1_c2()
    fake = ids.real("stranger")
    member_cls = LeaveGroupResponse.MemberResponse
    fields = dict(error_code=0)
    if v >= 3:
        fields["members"] = [
            member_cls(member_id=REAL2, group_instance_id=None, error_code=0),
            member_cls(member_id=fake, group_instance_id=None, error_code=25),
        ]
    resp = from_broker(LeaveGroupResponse, v, **fields)
    cmd = m.LeaveGroup(client="c2", members=(m.MemberIdentity(member_id="c2-1"),), version=v)
    expected_members = (
        (
            m.MemberResult(member_id="c2-1", error="NONE"),
            m.MemberResult(member_id="stranger", error="UNKNOWN_MEMBER_ID"),
        )
        if v >= 3
        else ()
    )
    assert wire.decode(cmd, resp, ids) == m.LeaveGroupResponse(
        error="NONE", members=expected_members
    )


@pytest.mark.parametrize("v", versions("OffsetCommit"))
def test_offset_commit_response(v):
    topic_cls = OffsetCommitResponse.OffsetCommitResponseTopic
    part_cls = topic_cls.OffsetCommitResponsePartition
    ref = {"topic_id": TOPIC_ID} if v >= 10 else {"name": "t"}
    resp = from_broker(
        OffsetCommitResponse,
        v,
        topics=[
            topic_cls(
                partitions=[
                    part_cls(partition_index=1, error_code=22),
                    part_cls(partition_index=0, error_code=0),
                ],
                **ref,
            )
        ],
    )
    cmd = m.OffsetCommit(client="c1", member_id="c1-1", generation_id=1, offsets=(), version=v)
    got = wire.decode(cmd, resp, ids_with_c1_c2(), topic_ids={"t": TOPIC_ID})
    assert got == m.OffsetCommitResponse(
        partitions=(
            m.PartitionError(topic="t", partition=0, error="NONE"),
            m.PartitionError(topic="t", partition=1, error="ILLEGAL_GENERATION"),
        )
    )


@pytest.mark.parametrize("v", versions("OffsetFetch"))
def test_offset_fetch_response(v):
    if v >= 8:
        group_cls = OffsetFetchResponse.OffsetFetchResponseGroup
        topic_cls = group_cls.OffsetFetchResponseTopics
        part_cls = topic_cls.OffsetFetchResponsePartitions
    else:
        topic_cls = OffsetFetchResponse.OffsetFetchResponseTopic
        part_cls = topic_cls.OffsetFetchResponsePartition
    ref = {"topic_id": TOPIC_ID} if v >= 10 else {"name": "t"}
    parts = [
        part_cls(partition_index=2, committed_offset=-1, metadata=None, error_code=0),
        part_cls(
            partition_index=0,
            committed_offset=42,
            committed_leader_epoch=7,
            metadata="meta",
            error_code=0,
        ),
    ]
    topics = [topic_cls(partitions=parts, **ref)]
    if v >= 8:
        resp = from_broker(
            OffsetFetchResponse, v, groups=[group_cls(group_id=GROUP, topics=topics, error_code=16)]
        )
    elif v >= 2:
        resp = from_broker(OffsetFetchResponse, v, topics=topics, error_code=16)
    else:
        resp = from_broker(OffsetFetchResponse, v, topics=topics)
    cmd = m.OffsetFetch(client="c1", partitions=(), version=v)
    got = wire.decode(cmd, resp, wire.MemberIds(), topic_ids={"t": TOPIC_ID})
    assert got == m.OffsetFetchResponse(
        error="NOT_COORDINATOR" if v >= 2 else "NONE",
        partitions=(  # CommittedLeaderEpoch exists from v5
            m.FetchedOffset(
                topic="t",
                partition=0,
                offset=42,
                leader_epoch=7 if v >= 5 else None,
                metadata="meta",
            ),
            m.FetchedOffset(
                topic="t",
                partition=2,
                offset=-1,
                leader_epoch=-1 if v >= 5 else None,
                metadata="",
            ),
        ),
    )


@pytest.mark.parametrize("v", versions("DescribeGroups"))
def test_describe_groups_response(v):
    group_cls = DescribeGroupsResponse.DescribedGroup
    member_cls = group_cls.DescribedGroupMember
    static = "static-2" if v >= 4 else None
    resp = from_broker(
        DescribeGroupsResponse,
        v,
        groups=[
            group_cls(
                error_code=0,
                group_id=GROUP,
                group_state="Stable",
                protocol_type="consumer",
                protocol_data="range",
                members=[
                    member_cls(
                        member_id=REAL2,
                        group_instance_id=static,
                        client_id="kgc-c2",
                        client_host="/127.0.0.1",
                        member_metadata=b"m2",
                        member_assignment=b"p1",
                    ),
                    member_cls(
                        member_id=REAL1,
                        client_id="kgc-c1",
                        client_host="/10.0.0.9",
                        member_metadata=b"m1",
                        member_assignment=b"p0",
                    ),
                ],
            )
        ],
    )
    got = wire.decode(m.DescribeGroups(client="c1", version=v), resp, ids_with_c1_c2())
    assert got == m.DescribeGroupsResponse(
        error="NONE",
        group_state="Stable",
        protocol_type="consumer",
        protocol_data="range",
        members=(
            m.DescribedMember(
                member_id="c1-1",
                client_id="kgc-c1",
                client_host="/10.0.0.9",
                metadata="m1",
                assignment="p0",
            ),
            m.DescribedMember(
                member_id="c2-1",
                group_instance_id=static,
                client_id="kgc-c2",
                client_host="/127.0.0.1",
                metadata="m2",
                assignment="p1",
            ),
        ),
    )
    # an answer about another group is a divergence, not a description of ours
    other = wire.decode(
        m.DescribeGroups(client="c1", version=v), resp, ids_with_c1_c2(), group_id="kgc-other"
    )
    assert other.error == "ANSWERED_OTHER_GROUP"


def _described(*members):
    """A DescribeGroups v4 answer listing ``(member id, client id)`` pairs."""
    group_cls = DescribeGroupsResponse.DescribedGroup
    member_cls = group_cls.DescribedGroupMember
    listed = [
        member_cls(
            member_id=real,
            group_instance_id=None,
            client_id=client_id,
            client_host="/127.0.0.1",
            member_metadata=b"",
            member_assignment=b"",
        )
        for real, client_id in members
    ]
    group = group_cls(
        error_code=0,
        group_id=GROUP,
        group_state="PreparingRebalance",
        protocol_type="consumer",
        protocol_data="",
        members=listed,
    )
    return from_broker(DescribeGroupsResponse, 4, groups=[group])


def test_a_described_member_is_named_by_its_listed_client_before_its_join_answers():
    # kfake names a static member "<instance id>-<32 hex>": not Kafka's UUID form, but the answer
    # lists the member under c1's client id while c1's JoinGroup still waits
    kfake_id = "c1-instance-f69af7973d0187e5a4241d7dca0cc32b"
    describe = m.DescribeGroups(client="c2", version=4)
    resp = _described((kfake_id, "kgc-c1"))
    ids = wire.MemberIds()
    assert not wire.all_ids_known(describe, resp, ids)
    wire.attribute_by_client(describe, resp, ids)
    assert wire.all_ids_known(describe, resp, ids)
    assert [d.member_id for d in wire.decode(describe, resp, ids).members] == ["c1-1"]
    # the claim is checked by c1's own answer: told another id, c1 gets its second name
    join = from_broker(
        JoinGroupResponse,
        5,
        error_code=0,
        generation_id=2,
        protocol_name="range",
        leader=REAL2,
        member_id=REAL1,
        members=[],
    )
    assert wire.learn_own_id(_join_cmd("c1", 5), join, ids) == "c1-2"


def test_two_unknown_ids_of_one_client_and_foreign_clients_are_not_named_on_sight():
    describe = m.DescribeGroups(client="c2", version=4)
    ids = wire.MemberIds()
    two = _described(("c1-aaaa", "kgc-c1"), ("c1-bbbb", "kgc-c1"))
    wire.attribute_by_client(describe, two, ids)
    assert not wire.all_ids_known(describe, two, ids)  # which is c1's first is not known
    foreign = _described(("x-1", "someone-else"), ("y-1", "kgc-c1x"))
    wire.attribute_by_client(describe, foreign, ids)
    assert [d.member_id for d in wire.decode(describe, foreign, ids).members] == [
        "unknown-x-1",
        "unknown-y-1",
    ]


@pytest.mark.parametrize("v", versions("FindCoordinator"))
def test_find_coordinator_response(v):
    if v >= 4:
        coord = FindCoordinatorResponse.Coordinator
        resp = from_broker(
            FindCoordinatorResponse,
            v,
            coordinators=[coord(key=GROUP, node_id=2, host="h", port=1, error_code=0)],
        )
    else:
        resp = from_broker(FindCoordinatorResponse, v, error_code=0, node_id=2, host="h", port=1)
    got = wire.decode(m.FindCoordinator(client="c1", version=v), resp, wire.MemberIds())
    assert got == m.FindCoordinatorResponse(error="NONE", node_id=2)


# ---------------------------------------------------------------------------------- error names


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (0, "NONE"),
        (-1, "UNKNOWN_SERVER_ERROR"),
        (6, "NOT_LEADER_OR_FOLLOWER"),
        (14, "COORDINATOR_LOAD_IN_PROGRESS"),
        (15, "COORDINATOR_NOT_AVAILABLE"),
        (16, "NOT_COORDINATOR"),
        (22, "ILLEGAL_GENERATION"),
        (23, "INCONSISTENT_GROUP_PROTOCOL"),
        (25, "UNKNOWN_MEMBER_ID"),
        (26, "INVALID_SESSION_TIMEOUT"),
        (27, "REBALANCE_IN_PROGRESS"),
        (35, "UNSUPPORTED_VERSION"),
        (69, "GROUP_ID_NOT_FOUND"),
        (79, "MEMBER_ID_REQUIRED"),
        (81, "GROUP_MAX_SIZE_REACHED"),
        (82, "FENCED_INSTANCE_ID"),
        (128, "INVALID_REGULAR_EXPRESSION"),
        (9999, "UNKNOWN_ERROR_CODE_9999"),
    ],
)
def test_error_names_are_kafkas(code, name):
    # names from Kafka's clients/src/main/java/org/apache/kafka/common/protocol/Errors.java
    assert error_name(code) == name
