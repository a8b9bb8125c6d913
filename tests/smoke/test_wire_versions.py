"""Every version of every group API that both the broker and kafka-python speak, through ``wire``.

For each API and each version in (broker's range ∩ kafka-python's range), a fresh single-member
group is brought to Stable with the negotiated versions of the other APIs, then the API under test
is sent at that version and its decoded model response is compared with what Kafka's rules say.
This catches version-specific layouts (LeaveGroup v3 batches, FindCoordinator v4 batches,
OffsetFetch v8 groups, topic ids in OffsetCommit/OffsetFetch v10) against a real broker.
"""

from __future__ import annotations

import pytest
from kgc.conformance.wire import client as kc
from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.brokerconfig import kafka_client_host
from kgc.model import commands as m

WAIT_S = 20.0
PROTOCOL_TYPE = "kgc-smoke"  # see test_smoke.PROTOCOL_TYPE: metadata stays opaque to the broker


class Single:
    """One member ``c1`` of a fresh group, Stable after join + sync."""

    def __init__(self, cluster: kc.Cluster, group_id: str, topic_ids=None) -> None:
        self.group_id = group_id
        self.group = cluster.group(group_id)
        self.ids = wire.MemberIds()
        self.topic_ids = topic_ids

    def v(self, api: str) -> int:
        return self.group.member("c1").version_for(wire.REQUEST_CLASSES[api])

    def ask(self, cmd: m.Request):
        request, version = wire.encode(cmd, self.group_id, self.ids, topic_ids=self.topic_ids)
        h = self.group.member(cmd.client).send(request, version)
        assert self.group.poller.wait([h], WAIT_S) == [h], f"{cmd.type} v{cmd.version} unanswered"
        return wire.decode(cmd, h.result(), self.ids, topic_ids=self.topic_ids)

    def join(self, member_id: str = "", version: int | None = None) -> m.JoinGroupResponse:
        """JoinGroup, answered once: no resend on COORDINATOR_LOAD_IN_PROGRESS (the load once met
        here came from a test writing into the shared ``__consumer_offsets``, fixed and guarded
        by ``make test``), so a broker that answers so without cause fails here."""
        return self._join(member_id, version)

    def _join(self, member_id: str, version: int | None) -> m.JoinGroupResponse:
        return self.ask(
            m.JoinGroup(
                client="c1",
                member_id=member_id,
                session_timeout_ms=10_000,
                rebalance_timeout_ms=10_000,
                protocol_type=PROTOCOL_TYPE,
                protocols=(m.Protocol(name="range", metadata="meta"),),
                version=self.v("JoinGroup") if version is None else version,
            )
        )

    def stable(self) -> tuple[str, int]:
        r = self.join()
        if r.error == "MEMBER_ID_REQUIRED":
            r = self.join(r.member_id)
        assert r.error == "NONE", r
        v = self.v("SyncGroup")
        s = self.ask(self.sync(r.member_id, r.generation_id, v))
        assert s == synced(v)
        return r.member_id, r.generation_id

    def client_host(self) -> str:
        """Where the broker sees ``c1`` connect from, as Kafka writes it (``/127.0.0.1``)."""
        return kafka_client_host(self.group.member("c1").local_address)

    def sync(self, member_id: str, generation: int, version: int) -> m.SyncGroup:
        return m.SyncGroup(
            client="c1",
            member_id=member_id,
            generation_id=generation,
            protocol_type=PROTOCOL_TYPE,
            protocol_name="range",
            assignments=(m.Assignment(member_id=member_id, assignment="mine"),),
            version=version,
        )


def synced(v: int) -> m.SyncGroupResponse:
    """The Stable SyncGroup answer: v5+ names the group's protocol (KIP-559)."""
    return m.SyncGroupResponse(
        error="NONE",
        protocol_type=PROTOCOL_TYPE if v >= 5 else None,
        protocol_name="range" if v >= 5 else None,
        assignment="mine",
    )


def common_versions(cluster: kc.Cluster, api: str) -> range:
    cls = wire.REQUEST_CLASSES[api]
    conn = cluster.connection(next(iter(cluster.brokers)))
    lo, hi = conn.broker_versions[cls.API_KEY]
    ours_lo, ours_hi = cls.valid_versions
    versions = range(max(lo, ours_lo), min(hi, ours_hi) + 1)
    assert len(versions) > 0, f"{api}: broker v{lo}-v{hi}, kafka-python v{ours_lo}-v{ours_hi}"
    return versions


@pytest.mark.broker
def test_join_group_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "JoinGroup"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        r = g.join(version=v)
        if v >= 4:  # KIP-394
            assert r.error == "MEMBER_ID_REQUIRED" and r.member_id == "c1-1", (v, r)
            r = g.join(r.member_id, version=v)
        assert (r.error, r.generation_id, r.leader, r.member_id) == ("NONE", 1, "c1-1", "c1-1"), v
        assert r.protocol_name == "range"
        assert r.protocol_type == (PROTOCOL_TYPE if v >= 7 else None), v  # KIP-559
        assert r.skip_assignment is False, v
        assert r.members == (m.JoinedMember(member_id="c1-1", metadata="meta"),)


@pytest.mark.broker
def test_sync_group_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "SyncGroup"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        r = g.join()
        r = g.join(r.member_id) if r.error == "MEMBER_ID_REQUIRED" else r
        s = g.ask(g.sync(r.member_id, r.generation_id, v))
        assert s == synced(v), v
        bad = g.ask(g.sync(r.member_id, r.generation_id + 1, v))  # an error names no protocol
        assert bad == m.SyncGroupResponse(error="ILLEGAL_GENERATION"), v


@pytest.mark.broker
def test_heartbeat_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "Heartbeat"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        me, gen = g.stable()
        hb = m.Heartbeat(client="c1", member_id=me, generation_id=gen, version=v)
        assert g.ask(hb) == m.HeartbeatResponse(error="NONE"), v
        stale = m.Heartbeat(client="c1", member_id=me, generation_id=gen + 1, version=v)
        assert g.ask(stale) == m.HeartbeatResponse(error="ILLEGAL_GENERATION"), v


@pytest.mark.broker
def test_describe_groups_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "DescribeGroups"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        g.stable()
        d = g.ask(m.DescribeGroups(client="c1", version=v))
        assert d == m.DescribeGroupsResponse(
            error="NONE",
            group_state="Stable",
            protocol_type=PROTOCOL_TYPE,
            protocol_data="range",
            members=(
                m.DescribedMember(
                    member_id="c1-1",
                    client_id=m.client_id_of("c1"),
                    client_host=g.client_host(),
                    metadata="meta",
                    assignment="mine",
                ),
            ),
        ), v


@pytest.mark.broker
def test_find_coordinator_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "FindCoordinator"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        r = g.ask(m.FindCoordinator(client="c1", version=v))
        assert r == m.FindCoordinatorResponse(error="NONE", node_id=g.group.coordinator_id), v


@pytest.mark.broker
def test_leave_group_every_version(kgc_client, kgc_group_id):
    for v in common_versions(kgc_client, "LeaveGroup"):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}")
        me, _ = g.stable()
        members = (m.MemberIdentity(member_id=me),)
        if v >= 3:  # batch form: an id the group never had is answered per member
            members += (m.MemberIdentity(member_id="stranger"),)
        r = g.ask(m.LeaveGroup(client="c1", members=members, version=v))
        if v >= 3:
            assert r == m.LeaveGroupResponse(
                error="NONE",
                members=(
                    m.MemberResult(member_id="c1-1", error="NONE"),
                    m.MemberResult(member_id="stranger", error="UNKNOWN_MEMBER_ID"),
                ),
            ), v
        else:
            assert r == m.LeaveGroupResponse(error="NONE"), v
        d = g.ask(m.DescribeGroups(client="c1", version=g.v("DescribeGroups")))
        assert (d.group_state, d.members) == ("Empty", ()), v


@pytest.mark.broker
def test_offset_commit_and_fetch_every_version(kgc_client, kgc_group_id, kgc_topic):
    kgc_client.create_topic(kgc_topic, partitions=2)
    topic_ids = kgc_client.topic_ids([kgc_topic])
    commit_versions = common_versions(kgc_client, "OffsetCommit")
    fetch_versions = common_versions(kgc_client, "OffsetFetch")
    for i, v in enumerate(commit_versions):
        g = Single(kgc_client, f"{kgc_group_id}-v{v}", topic_ids=topic_ids)
        me, gen = g.stable()
        offsets = (
            m.TopicPartitionOffset(
                topic=kgc_topic, partition=1, offset=100 + v, metadata=f"v{v}", leader_epoch=7
            ),
            m.TopicPartitionOffset(topic=kgc_topic, partition=0, offset=v),
        )
        r = g.ask(
            m.OffsetCommit(client="c1", member_id=me, generation_id=gen, offsets=offsets, version=v)
        )
        assert r == m.OffsetCommitResponse(
            partitions=(
                m.PartitionError(topic=kgc_topic, partition=0, error="NONE"),
                m.PartitionError(topic=kgc_topic, partition=1, error="NONE"),
            )
        ), v
        fv = fetch_versions[i % len(fetch_versions)]
        parts = (m.TopicPartition(topic=kgc_topic, partition=p) for p in (0, 1))
        f = g.ask(m.OffsetFetch(client="c1", partitions=tuple(parts), version=fv))
        # CommittedLeaderEpoch: sent from commit v6, answered from fetch v5 (-1: none)
        epoch = (7 if v >= 6 else -1) if fv >= 5 else None
        none = -1 if fv >= 5 else None
        assert f == m.OffsetFetchResponse(
            error="NONE",
            partitions=(
                m.FetchedOffset(
                    topic=kgc_topic, partition=0, offset=v, leader_epoch=none, metadata=""
                ),
                m.FetchedOffset(
                    topic=kgc_topic,
                    partition=1,
                    offset=100 + v,
                    leader_epoch=epoch,
                    metadata=f"v{v}",
                ),
            ),
        ), (v, fv)
    for fv in fetch_versions:  # every fetch version, on the last group's commits
        parts = (m.TopicPartition(topic=kgc_topic, partition=p) for p in (0, 1))
        f = g.ask(m.OffsetFetch(client="c1", partitions=tuple(parts), version=fv))
        assert [p.offset for p in f.partitions] == [v, 100 + v], fv


@pytest.mark.broker
def test_static_leader_rejoin_is_told_to_skip_the_assignment(kgc_client, kgc_group_id):
    """KIP-814 (JoinGroup v9+): a static leader that joins anew with unchanged protocols while
    the group is Stable replaces its old id without a rebalance and is told to skip the
    assignment, with the member list (4.x ``updateStaticMemberThenRebalanceOrCompleteJoin``,
    3.9 ``updateStaticMemberAndRebalance``; model ``join.py`` rule 5). Lines without v9 send
    nothing here."""
    for v in (v for v in common_versions(kgc_client, "JoinGroup") if v >= 9):
        g = Single(kgc_client, f"{kgc_group_id}-static-v{v}")
        join = m.JoinGroup(
            client="c1",
            group_instance_id="c1-instance",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocol_type=PROTOCOL_TYPE,
            protocols=(m.Protocol(name="range", metadata="meta"),),
            version=v,
        )
        first = g.ask(join)
        assert (first.error, first.member_id, first.skip_assignment) == ("NONE", "c1-1", False)
        sv = g.v("SyncGroup")
        assert g.ask(g.sync("c1-1", first.generation_id, sv)) == synced(sv)
        again = g.ask(join)
        assert again == m.JoinGroupResponse(
            error="NONE",
            generation_id=first.generation_id,
            protocol_type=PROTOCOL_TYPE,
            protocol_name="range",
            leader="c1-2",
            member_id="c1-2",
            members=(
                m.JoinedMember(member_id="c1-2", group_instance_id="c1-instance", metadata="meta"),
            ),
            skip_assignment=True,
        ), v
