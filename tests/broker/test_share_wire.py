"""KIP-932's ShareGroupHeartbeat (76) and ShareGroupDescribe (77) against a real broker, sent as
the suite sends them: the model's records through ``BrokerTarget`` (``wire.encode`` to the
group's coordinator, ``wire.decode`` back into the records). Every expectation is Kafka 4.3.1's
documented behaviour, gathered with line citations in docs/share-groups.md (§2 the heartbeat and
its validation table, §3 the describe, §4 DeleteGroups and a classic group's id); the session
broker is kgc's embedded 4.3.1 with the suite's share settings (``embedded.default_config``).

Share groups never expire (§2), so every group a test makes is emptied and deleted after it.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import group_settings
from kgc.conformance.wire.client import (
    Cluster,
    delete_groups,
    error_name,
    join_group,
    share_group_heartbeat,
    sync_group,
)
from kgc.model import commands as m
from kgc.properties.machine import TOPIC_PARTITIONS

pytestmark = pytest.mark.broker

ASSIGNED_WITHIN_S = 20.0  # bound on the share coordinator's initialization of a group's topic
_request_ids = itertools.count(1)


# ------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def share_topic(kgc_broker: Any) -> Iterator[str]:
    """A topic of ``TOPIC_PARTITIONS`` partitions, the share coordinator warmed up on it as the
    share workload does before its first example (``workloads.prepare_share``)."""
    from kgc.conformance.drivers.workloads import prepare_share

    topic = f"kgc-share-wire-{secrets.token_hex(4)}"
    with Cluster(kgc_broker.bootstrap_servers, client_id="kgc-test") as cluster:
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        description: dict[str, Any] = {}
        took, partitions = prepare_share(cluster, description, topic=topic)
        print(f"share warm-up: {took:.2f} s")
        assert partitions == TOPIC_PARTITIONS
        versions = description["request_versions"]
        assert (versions["ShareGroupHeartbeat"], versions["ShareGroupDescribe"]) == ([1], [1])
        # and the group-admin requests the share machine sends beside them, at every version
        # kgc draws that the broker offers: Kafka 4.3.1 offers ListGroups v0-5, DeleteGroups v0-2
        assert sorted(versions["ListGroups"]) == [0, 1, 2, 3, 4, 5]
        assert sorted(versions["DeleteGroups"]) == [0, 1, 2]
        assert set(versions) == {
            "ShareGroupHeartbeat",
            "ShareGroupDescribe",
            "ListGroups",
            "DeleteGroups",
        }
        assert not description.get("fact_notes"), description["fact_notes"]
    yield topic


class Share:
    """One share group on the broker, spoken to through ``BrokerTarget`` (one connection per
    client ``cK``, client id ``kgc-cK``), emptied and deleted by :meth:`close`."""

    def __init__(self, cluster: Cluster, topic: str) -> None:
        self.cluster = cluster
        self.topic = topic
        self.group_id = f"kgc-share-wire-{secrets.token_hex(4)}"
        self.target = BrokerTarget(cluster, self.group_id, description={})
        self.epochs: dict[str, int] = {}  # member id -> last epoch answered

    def ask(self, command: m.Request, timeout_s: float = 10.0) -> Any:
        request_id = next(_request_ids)
        self.target.prepare(command.client)
        self.target.send(request_id, command)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for arrival in self.target.poll(100):
                if arrival.request_id == request_id:
                    response = arrival.response
                    if isinstance(response, m.ShareGroupHeartbeatResponse) and (
                        response.error == "NONE"
                    ):
                        self.epochs[command.member_id] = response.member_epoch
                    return response
        raise AssertionError(f"no answer to {command} in {timeout_s} s")

    def heartbeat(
        self,
        client: str,
        member_id: str,
        epoch: int,
        *,
        topics: tuple[str, ...] | None = None,
    ) -> m.ShareGroupHeartbeatResponse:
        command = m.ShareGroupHeartbeat(
            client=client,
            member_id=member_id,
            member_epoch=epoch,
            subscribed_topic_names=topics,
            version=1,
        )
        response = self.ask(command)
        assert isinstance(response, m.ShareGroupHeartbeatResponse)
        return response

    def join(self, client: str, member_id: str) -> m.ShareGroupHeartbeatResponse:
        return self.heartbeat(client, member_id, 0, topics=(self.topic,))

    def describe(self, client: str = "c9") -> m.ShareGroupDescribeResponse:
        response = self.ask(m.ShareGroupDescribe(client=client, version=1))
        assert isinstance(response, m.ShareGroupDescribeResponse)
        return response

    def until_assigned(
        self, client: str, member_id: str, wanted: int
    ) -> tuple[m.ShareGroupHeartbeatResponse, tuple[m.TopicPartition, ...]]:
        """Heartbeat (every 100 ms, within the 500 ms interval) until the member holds
        ``wanted`` partitions: the last answer and the assignment it holds."""
        deadline = time.monotonic() + ASSIGNED_WITHIN_S
        held: tuple[m.TopicPartition, ...] = ()
        while True:
            answer = self.heartbeat(client, member_id, self.epochs[member_id])
            assert answer.error == "NONE", answer
            if answer.assignment is not None:
                held = answer.assignment
            if len(held) == wanted:
                return answer, held
            assert time.monotonic() < deadline, f"{member_id} holds {held} after the bound"
            time.sleep(0.1)

    def delete(self) -> str:
        conn = self.cluster.connection(self.target._group.coordinator_id)
        results = self.cluster._request(conn, delete_groups(conn, [self.group_id])).results
        assert [r.group_id for r in results] == [self.group_id]
        return error_name(results[0].error_code)

    def close(self) -> None:
        for member_id, epoch in self.epochs.items():
            if epoch >= 0:
                self.heartbeat("c9", member_id, -1)
        self.delete()
        self.target.close()


@pytest.fixture
def share(kgc_broker: Any, share_topic: str) -> Iterator[Any]:
    """A factory of :class:`Share` groups on the session broker, each closed after the test."""
    made: list[Share] = []
    with Cluster(kgc_broker.bootstrap_servers, client_id="kgc-test") as cluster:

        def make() -> Share:
            made.append(Share(cluster, share_topic))
            return made[-1]

        try:
            yield make
        finally:
            for group in made:
                group.close()


def everything(topic: str) -> tuple[m.TopicPartition, ...]:
    return tuple(m.TopicPartition(topic=topic, partition=p) for p in range(TOPIC_PARTITIONS))


# ----------------------------------------------------------------------------------------- tests


def test_a_join_is_answered_then_assigned_every_partition_and_described(
    kgc_broker: Any, share: Any
) -> None:
    group = share()
    interval = group_settings(group.cluster)["group.share.heartbeat.interval.ms"]
    if description_of(kgc_broker).get("implementation") == "apache-kafka":
        assert interval == 500  # the suite's setting (docs/share-groups.md §1)
    joined = group.join("c1", "c1-1")
    # §2: the member id echoed; a new group at epoch 1 is bumped for the new member's topics
    assert (joined.error, joined.member_id, joined.heartbeat_interval_ms) == (
        "NONE",
        "c1-1",
        interval,
    )
    assert joined.member_epoch >= 2
    assert joined.assignment is not None  # a join is a full request: the assignment is sent
    answer, held = group.until_assigned("c1", "c1-1", TOPIC_PARTITIONS)
    assert held == everything(group.topic) and answer.member_epoch >= joined.member_epoch
    described = group.describe()
    assert described == m.ShareGroupDescribeResponse(
        error="NONE",
        group_state="Stable",
        group_epoch=answer.member_epoch,
        assignment_epoch=answer.member_epoch,
        assignor_name="simple",
        members=(
            m.ShareMember(
                member_id="c1-1",
                member_epoch=answer.member_epoch,
                client_id="kgc-c1",
                subscribed_topic_names=(group.topic,),
                assignment=everything(group.topic),
            ),
        ),
    )


def test_a_second_member_gets_its_share_at_once_and_the_first_the_rest(share: Any) -> None:
    group = share()
    group.join("c1", "c1-1")
    first, _ = group.until_assigned("c1", "c1-1", TOPIC_PARTITIONS)
    second = group.join("c2", "c2-1")
    # §2 "typical trace": the group epoch is bumped for the new member, whose share comes with
    # its join; no revocation phase
    assert second.error == "NONE" and second.member_epoch == first.member_epoch + 1
    assert second.assignment
    again = group.heartbeat("c1", "c1-1", first.member_epoch)
    assert again.error == "NONE" and again.member_epoch == second.member_epoch
    assert again.assignment is not None
    # M <= P: every partition to exactly one member (§2, "Assignor")
    assert not set(again.assignment) & set(second.assignment)
    assert set(again.assignment) | set(second.assignment) == set(everything(group.topic))
    described = group.describe()
    assert (described.group_state, described.group_epoch) == ("Stable", second.member_epoch)
    assert [(x.member_id, x.member_epoch, x.client_id) for x in described.members] == [
        ("c1-1", second.member_epoch, "kgc-c1"),
        ("c2-1", second.member_epoch, "kgc-c2"),
    ]


@pytest.mark.parametrize(
    ("member_id", "epoch", "topics", "why"),
    [
        ("c1-1", 0, None, "epoch 0 without topics: validation rule 7"),
        ("c1-1", 0, (), "epoch 0 with no topics: validation rule 7"),
        ("", 0, "topic", "an empty member id: validation rule 3"),
        ("x" * 37, 0, "topic", "a member id of 37 characters: validation rule 3"),
    ],
)
def test_invalid_heartbeats_are_refused_with_the_error_alone(
    share: Any, member_id: str, epoch: int, topics: Any, why: str
) -> None:
    group = share()
    named = (group.topic,) if topics == "topic" else topics
    answer = group.heartbeat("c1", member_id, epoch, topics=named)
    # §2: an error answer carries only its code (MemberId null, epoch 0, interval 0)
    assert answer == m.ShareGroupHeartbeatResponse(error="INVALID_REQUEST"), why
    assert group.describe().error == "GROUP_ID_NOT_FOUND"  # nothing was created


def test_a_member_id_of_36_characters_is_accepted(share: Any) -> None:
    group = share()
    member_id = "y" * 36  # KafkaApis.scala l.3055-3058: 1 to 36 characters
    answer = group.join("c1", member_id)
    assert (answer.error, answer.member_id) == ("NONE", member_id)


def test_a_heartbeat_at_epoch_1_for_an_unknown_group_is_group_id_not_found(share: Any) -> None:
    group = share()
    answer = group.heartbeat("c1", "c1-1", 1)
    assert answer == m.ShareGroupHeartbeatResponse(error="GROUP_ID_NOT_FOUND")  # rule 11
    assert group.describe() == m.ShareGroupDescribeResponse(error="GROUP_ID_NOT_FOUND")


def test_an_unknown_member_and_a_wrong_epoch_are_refused_and_the_member_stays(share: Any) -> None:
    group = share()
    joined = group.join("c1", "c1-1")
    unknown = group.heartbeat("c2", "c2-1", 3)
    assert unknown == m.ShareGroupHeartbeatResponse(error="UNKNOWN_MEMBER_ID")  # rule 14
    ahead = group.heartbeat("c1", "c1-1", joined.member_epoch + 1)
    assert ahead == m.ShareGroupHeartbeatResponse(error="FENCED_MEMBER_EPOCH")  # rule 15
    # the member stays: its own epoch is still answered
    later = group.heartbeat("c1", "c1-1", group.epochs["c1-1"])
    assert later.error == "NONE" and later.member_id == "c1-1"
    assert [x.member_id for x in group.describe().members] == ["c1-1"]


def test_delete_groups_refuses_a_share_group_with_members_and_deletes_it_empty(
    share: Any,
) -> None:
    group = share()
    group.join("c1", "c1-1")
    group.until_assigned("c1", "c1-1", TOPIC_PARTITIONS)
    group.join("c2", "c2-1")
    assert group.delete() == "NON_EMPTY_GROUP"  # §4, DeleteGroups
    for client, member_id in (("c1", "c1-1"), ("c2", "c2-1")):
        left = group.heartbeat(client, member_id, -1)
        # §2 "Leave": the request's member id, epoch -1, interval 0, no assignment
        assert left == m.ShareGroupHeartbeatResponse(
            error="NONE", member_id=member_id, member_epoch=-1
        )
    empty = group.describe()
    assert (empty.error, empty.group_state, empty.members) == ("NONE", "Empty", ())
    assert group.delete() == "NONE"
    assert group.describe() == m.ShareGroupDescribeResponse(error="GROUP_ID_NOT_FOUND")


def test_a_classic_groups_id_is_not_a_share_group(share: Any) -> None:
    group = share()
    cluster = group.cluster
    conn = cluster.connection(group.target._group.coordinator_id)
    fields = {"session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000}
    protocols = [("range", b"")]
    first = cluster._request(conn, join_group(conn, group.group_id, protocols=protocols, **fields))
    assert error_name(first.error_code) == "MEMBER_ID_REQUIRED"
    joined = cluster._request(
        conn,
        join_group(conn, group.group_id, member_id=first.member_id, protocols=protocols, **fields),
    )
    assert error_name(joined.error_code) == "NONE"
    synced = cluster._request(
        conn,
        sync_group(
            conn,
            group.group_id,
            member_id=joined.member_id,
            generation_id=joined.generation_id,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[(joined.member_id, b"")],
        ),
    )
    assert error_name(synced.error_code) == "NONE"
    # §2 validation rule 12: an id held by a classic group, even at epoch 0
    answer = group.join("c1", "c1-1")
    assert answer == m.ShareGroupHeartbeatResponse(error="GROUP_ID_NOT_FOUND")
    assert group.describe() == m.ShareGroupDescribeResponse(error="GROUP_ID_NOT_FOUND")  # §3
    left = cluster._request(
        conn, share_group_heartbeat(conn, group.group_id, "c1-1", -1, version=1)
    )
    assert error_name(left.error_code) == "GROUP_ID_NOT_FOUND"  # §2 "Leave", another type


@pytest.mark.slow
def test_share_workload_refuses_a_broker_without_share_groups(tmp_path: Any) -> None:
    from kgc.conformance.brokers.embedded import EmbeddedKafka
    from kgc.conformance.drivers.workloads import share_workload
    from kgc.conformance.errors import ProtocolUnsupported

    with (
        EmbeddedKafka("3.9.2") as broker,
        Cluster(broker.bootstrap_servers, client_id="kgc-test") as cluster,
    ):
        topic = f"kgc-share-wire-{secrets.token_hex(4)}"
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        with pytest.raises(ProtocolUnsupported) as caught:
            share_workload(cluster, {}, topic=topic)
    message = str(caught.value)
    assert "ShareGroupHeartbeat" in message and "\n" not in message
