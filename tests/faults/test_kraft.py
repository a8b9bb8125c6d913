"""KRaft under faults: quorum leader failover (KIP-595) and broker fencing (KIP-631), live.

Each test pauses one node of a real 3-node cluster and compares what the cluster reports with
:mod:`kgc.model.controller`: the leader epochs every node logs and DescribeQuorum reports must
satisfy the quorum rules (no node's epoch goes back, at most one leader per epoch, a new leader
with a higher epoch, the resumed old leader steps down), and every fenced/unfenced reading of the
paused broker must be one :func:`~kgc.model.controller.allowed_fenced` allows at that moment.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kgc.conformance.faults.controlplane import (
    controller_address,
    describe_quorum_leader,
    fenced_brokers,
    quorum_transitions_of,
)
from kgc.conformance.wire.client import ClientError, Connection
from kgc.model.controller import (
    LivenessConfig,
    LivenessEvent,
    QuorumObservation,
    QuorumRules,
    allowed_fenced,
    check_quorum_observations,
    quorum,
)

pytestmark = [pytest.mark.broker, pytest.mark.faults]


def _conn(cluster: Any, node: int) -> Connection:
    host, port = cluster.broker_address(node)
    return Connection(host, port, "kgc-faults", timeout_s=2.0)


def _leader(cluster: Any, nodes: list[int], timeout_s: float = 30.0) -> QuorumObservation:
    """DescribeQuorum on each node's CONTROLLER listener in turn until one claims leadership
    (a broker listener would forward to the active controller, and hang while it is paused)."""
    end = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < end:
        for node in nodes:
            try:
                host, port = controller_address(cluster, node)
                with Connection(host, port, "kgc-faults", timeout_s=2.0) as conn:
                    return describe_quorum_leader(conn, 2.0)
            except ClientError as exc:
                last = exc
        time.sleep(0.2)
    raise AssertionError(f"no DescribeQuorum answer in {timeout_s} s: {last}")


def test_paused_quorum_leader_is_replaced_and_steps_down_on_resume(
    kraft3: Any, kraft_nemesis: Any, say: Any
) -> None:
    nodes = list(kraft3.node_ids)
    before = _leader(kraft3, nodes)
    old, old_epoch = before.node, before.epoch
    survivors = [n for n in nodes if n != old]
    observed: list[QuorumObservation] = [before]

    kraft_nemesis.pause(old)
    t_pause = time.monotonic()
    new = before
    while new.node == old or new.epoch <= old_epoch:
        assert time.monotonic() - t_pause < 30, f"no new leader 30 s after pausing {old}"
        new = _leader(kraft3, survivors, timeout_s=30)
        observed.append(new)
        time.sleep(0.2)
    say(
        f"leader {old}@{old_epoch} paused; {new.node}@{new.epoch} after "
        f"{time.monotonic() - t_pause:.1f} s"
    )
    assert new.node in survivors and new.epoch > old_epoch

    # the model allows exactly this: the two survivors are a majority and elect one of them
    rules = QuorumRules()
    q = rules.pause(quorum(nodes), old)
    q = rules.start_election(q, new.node)
    for v in survivors:
        q = rules.request_vote(q, new.node, v)
    q = rules.become_leader(q, new.node)
    assert q.leaders() == {new.node: q.voter(new.node).epoch}

    kraft_nemesis.resume(old)
    t_resume = time.monotonic()
    while True:
        mine = [o for o in quorum_transitions_of([kraft3.log_path(old)]) if o.node == old]
        last = max(mine, key=lambda o: o.at_ms)
        if last.epoch >= new.epoch and last.leader != old:
            break
        assert time.monotonic() - t_resume < 30, (
            f"node {old} still at {last} 30 s after resume; expected it to follow epoch {new.epoch}"
        )
        time.sleep(0.2)
    say(f"old leader {old} stepped down to {last.source} epoch {last.epoch} leader {last.leader}")
    observed.append(_leader(kraft3, nodes))

    transitions = quorum_transitions_of(kraft3.log_path(n) for n in nodes)
    assert transitions, "no QuorumState transitions in the node logs (log4j config changed?)"
    violations = check_quorum_observations(transitions + observed)
    assert violations == [], "\n".join(f"{v.rule}: {v.detail}" for v in violations)


def test_paused_broker_is_fenced_then_unfenced(
    kraft3: Any, kraft_nemesis: Any, kraft_config: dict[str, Any], say: Any
) -> None:
    nodes = list(kraft3.node_ids)
    controller = _leader(kraft3, nodes).node
    victim = next(n for n in nodes if n != controller)
    observer = next(n for n in nodes if n not in (victim,))
    config = LivenessConfig(
        session_timeout_ms=kraft_config["broker.session.timeout.ms"],
        heartbeat_interval_ms=kraft_config["broker.heartbeat.interval.ms"],
        # on a loaded 2-core machine a heartbeat round trip can take most of a second
        heartbeat_slack_ms=1000.0,
    )
    t0 = time.monotonic()

    def now_ms() -> float:
        return (time.monotonic() - t0) * 1000.0

    events: list[LivenessEvent] = []
    readings: list[tuple[float, bool]] = []
    conn = _conn(kraft3, observer)

    def read() -> bool:
        nonlocal conn
        sent = now_ms()
        # (a 3.x broker lists unfenced brokers only: missing is fenced)
        try:
            fenced = fenced_brokers(conn, 2.0).get(victim, True)
        except ClientError:
            conn = _conn(kraft3, observer)
            fenced = fenced_brokers(conn, 2.0).get(victim, True)
        at = (sent + now_ms()) / 2
        allowed = allowed_fenced(events, at, config)
        readings.append((at, fenced))
        assert fenced in allowed, (
            f"at {at:.0f} ms node {victim} read fenced={fenced}; the model allows "
            f"{sorted(allowed)} after {events}"
        )
        return fenced

    try:
        assert read() is False
        events.append(LivenessEvent(at_ms=now_ms(), action="pause"))
        kraft_nemesis.pause(victim)
        must_by = config.fence_check_factor * config.session_timeout_ms + config.propagation_ms
        while now_ms() - events[-1].at_ms < must_by + 1000:
            read()
            time.sleep(0.2)
        assert readings[-1][1] is True
        events.append(LivenessEvent(at_ms=now_ms(), action="resume"))
        kraft_nemesis.resume(victim)
        while now_ms() - events[-1].at_ms < config.unfence_ms + 1000:
            if not read() and now_ms() - events[-1].at_ms > 2000:
                break
            time.sleep(0.2)
        assert readings[-1][1] is False
    finally:
        conn.close()
    fenced_at = [at for at, f in readings if f]
    say(
        f"node {victim}: paused at {events[0].at_ms:.0f} ms, first read fenced at "
        f"{fenced_at[0]:.0f} ms, resumed at {events[1].at_ms:.0f} ms, last fenced read "
        f"{fenced_at[-1]:.0f} ms ({len(readings)} readings)"
    )
