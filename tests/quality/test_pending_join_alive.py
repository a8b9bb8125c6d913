"""Quality, hand-written: a member parked in JoinGroup stays alive past its session timeout.

The rule matters only for an *existing* member (a new member's first join is guarded by the
5-minute new-member timeout) that rejoins while another member does not rejoin, and the join phase
outlasts the rejoiner's session. The random search reaches it through ``form_group``'s
"reconfigure" and a deadline-aimed tick (``test_broken_models.py``); this hand-written history
documents the anomaly itself, against the broker, through the same engine and checker as the suite:

  c1 (session 2000) and c2 (session 1000) form generation 2; c2 rejoins (parked, its session
  deadline 1000 ms away, the join deadline 2000 ms away); c1 keeps heartbeating without rejoining;
  after 1300 ms DescribeGroups must still list c2, and at the join deadline c2's parked join is
  answered (c1, which never rejoined, is dropped) — Kafka counts a parked member as alive
  (``ClassicGroupMember.hasSatisfiedHeartbeat`` / ``MemberMetadata.hasSatisfiedHeartbeat``).

With the ``pending-join-not-alive`` variant the model drops c2 at its deadline, and the checker
reports the broker's answer as a divergence; with the real model the same history passes.
"""

from __future__ import annotations

import json
import secrets

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.engine.broken import broken
from kgc.engine.loop import Engine
from kgc.engine.registry import build, model_manifest
from kgc.engine.traces import Trace, render, result_of
from kgc.model.commands import (
    Assignment,
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    Protocol,
    SyncGroup,
    Tick,
)


def _history(topic: str) -> list:
    meta = json.dumps({"topics": [topic]})
    protos = (Protocol(name="range", metadata=meta),)

    changed = protos + (Protocol(name="roundrobin", metadata=meta),)

    def join(c, member, session, protocols=protos):  # noqa: ANN001
        return JoinGroup(
            client=c,
            member_id=member,
            session_timeout_ms=session,
            rebalance_timeout_ms=2000,
            protocols=protocols,
            version=3,
        )

    def sync(c, member, gen, leader):  # noqa: ANN001
        assignments = (
            (
                Assignment(member_id="c1-1", assignment=json.dumps({topic: [0, 2]})),
                Assignment(member_id="c2-1", assignment=json.dumps({topic: [1]})),
            )
            if leader and gen == 2
            else (Assignment(member_id="c1-1", assignment=json.dumps({topic: [0, 1, 2]})),)
            if leader
            else ()
        )
        return SyncGroup(
            client=c, member_id=member, generation_id=gen, assignments=assignments, version=3
        )

    return [
        join("c1", "", 2000),
        sync("c1", "c1-1", 1, True),  # generation 1: c1
        join("c2", "", 1000),
        join("c1", "c1-1", 2000),  # generation 2: c1, c2
        sync("c1", "c1-1", 2, True),
        sync("c2", "c2-1", 2, False),
        # c2 rejoins with changed protocols (an unchanged follower would just get its assignment
        # back in Stable): a rebalance starts and c2 is parked until c1 rejoins or times out
        join("c2", "c2-1", 1000, changed),
        Heartbeat(client="c1", member_id="c1-1", generation_id=2, version=3),
        Tick(ms=1300),  # past c2's deadline
        Heartbeat(client="c1", member_id="c1-1", generation_id=2, version=3),
        DescribeGroups(client="c1", version=5),  # c2 must still be there
    ]


def _run(broker):  # noqa: ANN001
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-quality")
    description = {**description_of(broker), **facts(cluster)}
    group_id = f"kgc-pending-{secrets.token_hex(4)}"
    topic = f"{group_id}-t"
    cluster.create_topic(topic, partitions=3)
    target = BrokerTarget(cluster, group_id, description=description)
    engine = Engine(target, build(model_manifest(description), group_id))
    try:
        engine.run(_history(topic))
        # let the parked join finish so nothing is left pending on the broker's side
        engine.run([Tick(ms=1500)])
    finally:
        target.close()
        cluster.close()
    trace = Trace(
        manifest={"target": description, "group_id": group_id},
        events=engine.events,
        extras=engine.extras,
        result=result_of(engine),
    )
    return engine, trace


@pytest.mark.broker
@pytest.mark.quality
def test_parked_member_outlives_its_session_and_the_broken_model_is_caught(kgc_broker):
    engine, trace = _run(kgc_broker)
    assert engine.divergence is None, "the real model disagrees:\n" + render(trace)
    with broken("pending-join-not-alive"):
        engine, trace = _run(kgc_broker)
    assert engine.divergence is not None, "the broken model was not caught:\n" + render(trace)
    # caught where the broker shows c2 alive: its parked join answered at the join deadline
    # (request 6), or c2 still listed by DescribeGroups (request 9) — not anywhere earlier
    assert getattr(engine.divergence.event, "request_id", None) in (6, 9), render(trace)
