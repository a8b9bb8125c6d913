"""The answer fields issue 29 item 1 added to the comparison, as the model predicts them, per
version and line (``tests/conformance/test_answer_fields.py`` lists every field; Kafka sources
in each rule module's docstring)."""

from __future__ import annotations

import json

from kgc.model.checker import Checker
from kgc.model.classic.group import ClassicGroupModel
from kgc.model.commands import (
    DescribedMember,
    FetchedOffset,
    JoinGroupResponse,
    Protocol,
    SyncGroupResponse,
    TopicPartitionOffset,
    client_id_of,
)
from kgc.model.history import Invoke, Receive, event_from_json, event_to_json
from kgc.model.profiles import KAFKA_3_9, GroupConfig
from model_harness import Sim, commit, describe, fetch, join, stable_group, sync

# ------------------------------------------------------------------------- SyncGroup v5+ (KIP-559)


def test_sync_v5_answer_names_the_groups_protocol_and_v4_names_none() -> None:
    sim = Sim()
    r1 = sim.send(join("c1", version=3))
    sim.at(1)
    gen = sim.take(r1).generation_id  # type: ignore[union-attr]
    # the leader's parked-then-answered SyncGroup at v5, then a Stable one at v4
    leader = sim.send(
        sync(
            "c1",
            "c1-1",
            gen,
            [("c1-1", "a")],
            version=5,
            protocol_type="consumer",
            protocol_name="range",
        )
    )
    assert sim.take(leader) == SyncGroupResponse(
        error="NONE", protocol_type="consumer", protocol_name="range", assignment="a"
    )
    again = sim.take(sim.send(sync("c1", "c1-1", gen, version=4)))
    assert again == SyncGroupResponse(error="NONE", assignment="a")


def test_sync_error_answer_names_no_protocol_even_at_v5() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    stale = sim.take(
        sim.send(sync("c1", "c1-1", 99, version=5, protocol_type="consumer", protocol_name="range"))
    )
    assert stale == SyncGroupResponse(error="ILLEGAL_GENERATION")


def test_parked_follower_sync_is_answered_at_its_own_version() -> None:
    sim = Sim()
    r = [sim.send(join(c, version=3)) for c in ("c1", "c2")]
    sim.at(1)
    gen = sim.take(r[0]).generation_id  # type: ignore[union-attr]
    sim.take(r[1])
    follower_v5 = sim.send(
        sync("c2", "c2-1", gen, version=5, protocol_type="consumer", protocol_name="range")
    )
    leader_v3 = sim.send(sync("c1", "c1-1", gen, [("c1-1", "x"), ("c2-1", "y")], version=3))
    assert sim.take(follower_v5) == SyncGroupResponse(
        error="NONE", protocol_type="consumer", protocol_name="range", assignment="y"
    )
    assert sim.take(leader_v3) == SyncGroupResponse(error="NONE", assignment="x")


# ------------------------------------------------------------------ JoinGroup v7+ protocol type


def test_join_v7_answer_names_the_protocol_type_and_errors_name_none() -> None:
    sim = Sim()
    first = sim.take(sim.send(join("c1", version=7)))
    assert first == JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c1-1")
    r = sim.send(join("c1", "c1-1", version=7))
    sim.at(1)
    answer = sim.take(r)
    assert isinstance(answer, JoinGroupResponse)
    assert (answer.protocol_type, answer.protocol_name) == ("consumer", "range")
    assert not answer.skip_assignment
    old = sim.take(sim.send(join("c2", version=6)))
    assert old.protocol_type is None  # type: ignore[union-attr]


def test_static_leader_rejoin_v9_is_told_to_skip_the_assignment() -> None:
    sim = Sim()
    r = sim.send(join("c1", version=9, instance="c1-instance"))
    sim.at(1)
    gen = sim.take(r).generation_id  # type: ignore[union-attr]
    sim.take(
        sim.send(
            sync(
                "c1",
                "c1-1",
                gen,
                [("c1-1", "a")],
                version=5,
                protocol_type="consumer",
                protocol_name="range",
            )
        )
    )
    # the same instance joins anew with unchanged protocols: replaced, no rebalance (KIP-814)
    again = sim.take(sim.send(join("c1", version=9, instance="c1-instance")))
    assert isinstance(again, JoinGroupResponse)
    assert again.error == "NONE" and again.skip_assignment and again.protocol_type == "consumer"


# ------------------------------------------------------------------------- DescribeGroups members


SUBSCRIBED = '{"topics": ["t"]}'  # a subscription the coordinator reads (``subscription.py``)


def test_describe_shows_client_id_host_and_metadata_in_stable_only() -> None:
    sim = Sim(client_host="/10.1.2.3", profile=KAFKA_3_9)  # 3.9: the new group is read at once
    protocols = (Protocol(name="range", metadata=SUBSCRIBED),)
    r = sim.send(join("c1", version=3, protocols=protocols))
    sim.at(1)
    gen = sim.take(r).generation_id  # type: ignore[union-attr]
    completing = sim.take(sim.send(describe("c9")))
    assert completing.members == (  # type: ignore[union-attr]
        DescribedMember(member_id="c1-1", client_id="kgc-c1", client_host="/10.1.2.3"),
    )
    sim.take(sim.send(sync("c1", "c1-1", gen, [("c1-1", "a")])))
    stable = sim.take(sim.send(describe("c9")))
    assert stable.members == (  # type: ignore[union-attr]
        DescribedMember(
            member_id="c1-1",
            client_id=client_id_of("c1"),
            client_host="/10.1.2.3",
            metadata=SUBSCRIBED,
            assignment="a",
        ),
    )


def test_a_replaced_static_member_keeps_the_first_joins_client_id() -> None:
    # ClassicGroup.replaceStaticMember / GroupMetadata.replaceStaticMember keep clientId
    sim = Sim(profile=KAFKA_3_9)
    r = sim.send(join("c1", version=5, instance="shared"))
    sim.at(1)
    gen = sim.take(r).generation_id  # type: ignore[union-attr]
    sim.take(sim.send(sync("c1", "c1-1", gen, [("c1-1", "a")])))
    sim.take(sim.send(join("c2", version=5, instance="shared")))
    described = sim.take(sim.send(describe("c9")))
    assert [(d.member_id, d.client_id) for d in described.members] == [  # type: ignore[union-attr]
        ("c2-1", "kgc-c1")
    ]


# ------------------------------------------------------------------ OffsetFetch leader epochs


def test_fetch_v5_answers_the_committed_leader_epoch_and_v4_none() -> None:
    sim = Sim()
    c = commit("c1", "", -1, version=8)
    with_epoch = c.__class__(
        client=c.client,
        member_id=c.member_id,
        generation_id=c.generation_id,
        offsets=(TopicPartitionOffset(topic="t", partition=0, offset=5, leader_epoch=3),),
        version=8,
    )
    sim.take(sim.send(with_epoch))
    old = c.__class__(
        client="c1",
        member_id="",
        generation_id=-1,
        offsets=(TopicPartitionOffset(topic="t", partition=1, offset=6, leader_epoch=4),),
        version=5,  # no CommittedLeaderEpoch before v6: nothing stored
    )
    sim.take(sim.send(old))
    v5 = sim.take(sim.send(fetch("c1", ("t", 0), ("t", 1), ("t", 2), version=5)))
    assert v5.partitions == (  # type: ignore[union-attr]
        FetchedOffset(topic="t", partition=0, offset=5, leader_epoch=3),
        FetchedOffset(topic="t", partition=1, offset=6, leader_epoch=-1),
        FetchedOffset(topic="t", partition=2, offset=-1, leader_epoch=-1),
    )
    v4 = sim.take(sim.send(fetch("c1", ("t", 0), version=4)))
    assert v4.partitions == (  # type: ignore[union-attr]
        FetchedOffset(topic="t", partition=0, offset=5),
    )


# -------------------------------------------------------------- older traces: not judged there


def test_fields_an_old_trace_did_not_record_are_not_judged() -> None:
    # A trace written before DescribeGroups' client fields were compared: its member has no
    # client_id/client_host/metadata. They read as defaults, are named in ``unrecorded`` (and
    # written back so), and the checker judges the rest of the answer only.
    model = ClassicGroupModel(GroupConfig(group_min_session_timeout_ms=500))
    checker = Checker(model)
    cmd = join("c1", version=3)
    events = [
        Invoke(step=0, at_ms=0.0, request_id=1, command=cmd),
    ]
    for e in events:
        assert checker.feed(e) is None
    old = {
        "kind": "receive",
        "step": 1,
        "at_ms": 3100.0,
        "request_id": 1,
        "response": {
            "type": "JoinGroupResponse",
            "error": "NONE",
            "generation_id": 1,
            "protocol_name": "range",
            "leader": "c1-1",
            "member_id": "c1-1",
            "members": [{"member_id": "c1-1", "group_instance_id": None, "metadata": "m"}],
        },
    }
    event = event_from_json(old)
    assert isinstance(event, Receive)
    assert event.unrecorded == ("protocol_type", "skip_assignment")
    assert checker.feed(event) is None
    again = event_from_json(json.loads(json.dumps(event_to_json(event))))
    assert again == event  # still not judged once written back
    # a trace that did record them is judged on them
    recorded = dict(
        old, response=dict(old["response"], protocol_type="other", skip_assignment=False)
    )
    fresh = Checker(model)
    fresh.feed(events[0])
    assert fresh.feed(event_from_json(recorded)) is not None
