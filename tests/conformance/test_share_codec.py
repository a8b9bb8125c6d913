"""KIP-932's ShareGroupHeartbeat and ShareGroupDescribe on the wire, with no broker: what the
builders send (Kafka's specs, ``ShareGroupHeartbeatRequest.json`` and
``ShareGroupDescribeRequest.json``, v1, flexible) and what the decoders make of an answer as a
broker serialises it. What Kafka itself answers is ``tests/broker/test_share_wire.py``'s."""

from __future__ import annotations

import uuid

import pytest
from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.message_specs import message_classes
from kgc.conformance.wire.requests import ANSWERED_OTHER_GROUP
from kgc.model import commands as m

GROUP = "kgc-share-wire-test"
TOPIC, OTHER = "kgc-t", "kgc-u"
TOPIC_IDS = {
    TOPIC: uuid.UUID("6a1f0c3e-1111-4222-8333-444455556666"),
    OTHER: uuid.UUID("0b2e9d4f-aaaa-4bbb-8ccc-ddddeeeeffff"),
}


def tp(topic: str, partition: int) -> m.TopicPartition:
    return m.TopicPartition(topic=topic, partition=partition)


def from_broker(api: str, **fields):
    """A v1 answer as a broker serialises it, decoded by the client's decoder."""
    response_cls = message_classes(api)[1]
    data = response_cls[1](**fields).encode(version=1)
    return response_cls.decode(data, version=1)


def test_the_4_3_1_specs_define_v1_alone_flexible():
    # ShareGroupHeartbeatRequest.json l.21-25: "validVersions": "1", "flexibleVersions": "0+"
    for api in ("ShareGroupHeartbeat", "ShareGroupDescribe"):
        request_cls, response_cls = message_classes(api)
        assert request_cls.valid_versions == (1, 1)
        assert response_cls.valid_versions == (1, 1)
        assert request_cls[1](**_minimal(api)).flexible_version_q(1)


def _minimal(api: str) -> dict:
    if api == "ShareGroupHeartbeat":
        return {"group_id": GROUP, "member_id": "c1-1", "member_epoch": 0}
    return {"group_ids": [GROUP], "include_authorized_operations": False}


def test_heartbeat_request_sends_the_chosen_id_and_nulls():
    ids = wire.MemberIds()
    join = m.ShareGroupHeartbeat(
        client="c1", member_id="c1-1", member_epoch=0, subscribed_topic_names=(TOPIC,), version=1
    )
    req, v = wire.encode(join, GROUP, ids, topic_ids=TOPIC_IDS)
    sent = type(req).decode(req.encode(version=v), version=v)
    assert (v, sent.group_id, sent.member_id, sent.member_epoch) == (1, GROUP, "c1-1", 0)
    assert sent.rack_id is None
    assert list(sent.subscribed_topic_names) == [TOPIC]
    # the client chose the id: every later request that names c1-1 sends c1-1 itself
    assert ids.real("c1-1") == "c1-1"
    beat = m.ShareGroupHeartbeat(
        client="c1", member_id="c1-1", member_epoch=2, rack_id="r1", version=1
    )
    req, v = wire.encode(beat, GROUP, ids)
    sent = type(req).decode(req.encode(version=v), version=v)
    assert (sent.member_epoch, sent.rack_id, sent.subscribed_topic_names) == (2, "r1", None)


def test_heartbeat_request_of_an_empty_or_long_id_is_sent_as_is():
    for member_id in ("", "x" * 37):
        c = m.ShareGroupHeartbeat(client="c1", member_id=member_id, member_epoch=0, version=1)
        req, v = wire.encode(c, GROUP, wire.MemberIds())
        assert type(req).decode(req.encode(version=v), version=v).member_id == member_id


def test_heartbeat_answer_names_topics_by_the_runs_ids():
    cmd = m.ShareGroupHeartbeat(client="c1", member_id="c1-1", member_epoch=2, version=1)
    assignment_cls = message_classes("ShareGroupHeartbeat")[1][1].Assignment
    topic_cls = assignment_cls.TopicPartitions
    resp = from_broker(
        "ShareGroupHeartbeat",
        member_id="c1-1",
        member_epoch=3,
        heartbeat_interval_ms=500,
        assignment=assignment_cls(
            topic_partitions=[
                topic_cls(topic_id=TOPIC_IDS[OTHER], partitions=[0]),
                topic_cls(topic_id=TOPIC_IDS[TOPIC], partitions=[2, 0]),
            ]
        ),
    )
    got = wire.decode(cmd, resp, wire.MemberIds(), topic_ids=TOPIC_IDS, group_id=GROUP)
    assert got == m.ShareGroupHeartbeatResponse(
        error="NONE",
        member_id="c1-1",
        member_epoch=3,
        heartbeat_interval_ms=500,
        assignment=(tp(TOPIC, 0), tp(TOPIC, 2), tp(OTHER, 0)),
    )


def test_heartbeat_answer_without_assignment_is_none_and_an_error_keeps_its_code_alone():
    cmd = m.ShareGroupHeartbeat(client="c1", member_id="c1-1", member_epoch=2, version=1)
    quiet = from_broker(
        "ShareGroupHeartbeat", member_id="c1-1", member_epoch=2, heartbeat_interval_ms=500
    )
    got = wire.decode(cmd, quiet, wire.MemberIds(), topic_ids=TOPIC_IDS)
    assert got.assignment is None and got.member_epoch == 2
    # an error answer: MemberId null (GroupCoordinatorService.java l.689-692)
    error = from_broker("ShareGroupHeartbeat", error_code=110, error_message="fenced")
    assert wire.decode(cmd, error, wire.MemberIds(), topic_ids=TOPIC_IDS) == (
        m.ShareGroupHeartbeatResponse(error="FENCED_MEMBER_EPOCH")
    )


def _described(**group):
    response_cls = message_classes("ShareGroupDescribe")[1][1]
    return from_broker("ShareGroupDescribe", groups=[response_cls.DescribedGroup(**group)])


def test_describe_answer_members_sorted_with_names_and_client_ids():
    response_cls = message_classes("ShareGroupDescribe")[1][1]
    member_cls = response_cls.DescribedGroup.Member
    assignment_cls = member_cls.Assignment
    topic_cls = assignment_cls.TopicPartitions

    def member(mid: str, epoch: int, parts: list[int], rack: str | None = None):
        return member_cls(
            member_id=mid,
            rack_id=rack,
            member_epoch=epoch,
            client_id=f"kgc-{mid[:2]}",
            client_host="/127.0.0.1",
            subscribed_topic_names=[TOPIC],
            assignment=assignment_cls(
                topic_partitions=[
                    topic_cls(topic_id=TOPIC_IDS[TOPIC], topic_name=TOPIC, partitions=parts)
                ]
            ),
        )

    resp = _described(
        group_id=GROUP,
        group_state="Stable",
        group_epoch=4,
        assignment_epoch=4,
        assignor_name="simple",
        members=[member("c2-1", 4, [1]), member("c1-1", 3, [2, 0], rack="r1")],
    )
    cmd = m.ShareGroupDescribe(client="c3", version=1)
    got = wire.decode(cmd, resp, wire.MemberIds(), topic_ids=TOPIC_IDS, group_id=GROUP)
    assert got == m.ShareGroupDescribeResponse(
        error="NONE",
        group_state="Stable",
        group_epoch=4,
        assignment_epoch=4,
        assignor_name="simple",
        members=(
            m.ShareMember(
                member_id="c1-1",
                rack_id="r1",
                member_epoch=3,
                client_id="kgc-c1",
                subscribed_topic_names=(TOPIC,),
                assignment=(tp(TOPIC, 0), tp(TOPIC, 2)),
            ),
            m.ShareMember(
                member_id="c2-1",
                member_epoch=4,
                client_id="kgc-c2",
                subscribed_topic_names=(TOPIC,),
                assignment=(tp(TOPIC, 1),),
            ),
        ),
    )


@pytest.mark.parametrize(
    ("group", "error"),
    [
        ({"group_id": GROUP, "error_code": 69, "error_message": "not found"}, "GROUP_ID_NOT_FOUND"),
        ({"group_id": "kgc-someone-else", "group_state": "Empty"}, ANSWERED_OTHER_GROUP),
    ],
)
def test_describe_answer_with_an_error_or_about_another_group(group, error):
    cmd = m.ShareGroupDescribe(client="c1", version=1)
    got = wire.decode(cmd, _described(**group), wire.MemberIds(), topic_ids={}, group_id=GROUP)
    assert got == m.ShareGroupDescribeResponse(error=error)


def test_describe_request_names_the_runs_group():
    req, v = wire.encode(m.ShareGroupDescribe(client="c1", version=1), GROUP, wire.MemberIds())
    sent = type(req).decode(req.encode(version=v), version=v)
    assert list(sent.group_ids) == [GROUP] and sent.include_authorized_operations is False
