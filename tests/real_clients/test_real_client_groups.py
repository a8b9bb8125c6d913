"""Real consumers (kafka-python and confluent-kafka/librdkafka processes) in one group on a real
broker, driven through joins, leaves, crashes (SIGKILL) and stalls (SIGSTOP) past the session
timeout. Every Stable generation is checked with Z3 (``assignment_z3``), range and round robin
against the model's assignors, membership against what the scenario expects, and the consumers'
own ownership intervals for double ownership (``conformance/drivers/real_clients.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from kgc.conformance.drivers.real_clients import RealGroup, Verification

pytestmark = pytest.mark.broker

SESSION_MS = 2000  # the embedded broker allows sessions down to 500 ms


def group(broker: Any, group_id: str, topics: dict[str, int]) -> RealGroup:
    return RealGroup(
        broker.bootstrap_servers,
        group_id,
        topics,
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=400,
        max_poll_interval_ms=20_000,
    )


def assert_verified(v: Verification, *, generations: int) -> None:
    report = "\n".join([*v.problems, "-- checks:", *v.checks, "-- notes:", *v.notes])
    assert v.ok, report
    assert v.generations >= generations, report
    assert "consumer ownership timeline: pass" in v.checks, report


def test_range_mixed_libraries_join_and_leave(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    topics = {kgc_topic: 6, f"{kgc_topic}-b": 3}
    with group(kgc_broker, kgc_group_id, topics) as g:
        g.start("c1", "kafka-python", "range")
        g.start("c2", "confluent-kafka", "range")
        g.start("c3", "kafka-python", "range")
        g.wait_settled()
        g.leave("c2")  # LeaveGroup: the others rebalance at once, no session timeout
        g.wait_settled(expected={"c1", "c3"})
        v = g.verify("range")
    assert_verified(v, generations=2)
    assert sum("equals the model's range assignment" in c for c in v.checks) >= 2


def test_roundrobin_survives_a_crashed_member(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    topics = {kgc_topic: 5, f"{kgc_topic}-b": 4}
    with group(kgc_broker, kgc_group_id, topics) as g:
        g.start("c1", "confluent-kafka", "roundrobin")
        g.start("c2", "confluent-kafka", "roundrobin")
        g.start("c3", "kafka-python", "roundrobin")
        g.wait_settled()
        g.kill("c1")  # SIGKILL: no LeaveGroup; the coordinator expires it after the session
        g.wait_settled(expected={"c2", "c3"}, timeout_s=60)
        v = g.verify("roundrobin")
    assert_verified(v, generations=2)
    assert sum("equals the model's roundrobin assignment" in c for c in v.checks) >= 2


def test_roundrobin_with_different_subscriptions_matches_the_model(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    # RoundRobinAssignor javadoc's second example, on real clients: c1 subscribes to one topic,
    # c2 to two, c3 to three (1, 2 and 3 partitions). The leader computes the assignment, and
    # kafka-python 3.0.12's roundrobin assignor raises KeyError on exactly this input
    # (tests/findings/test_kafka_python_roundrobin.py), so confluent-kafka's c2 joins first and
    # leads: Kafka keeps a leader that rejoins, and the kafka-python members only follow.
    t0, t1, t2 = (f"{kgc_topic}-{i}" for i in range(3))
    with group(kgc_broker, kgc_group_id, {t0: 1, t1: 2, t2: 3}) as g:
        g.start("c2", "confluent-kafka", "roundrobin", topics=[t0, t1])
        g.wait_settled()
        g.start("c1", "kafka-python", "roundrobin", topics=[t0])
        g.start("c3", "kafka-python", "roundrobin", topics=[t0, t1, t2])
        g.wait_settled()
        v = g.verify("roundrobin")
    assert_verified(v, generations=2)
    assert any("equals the model's roundrobin assignment" in c for c in v.checks)


def test_cooperative_sticky_incremental_joins(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    with group(kgc_broker, kgc_group_id, {kgc_topic: 6}) as g:
        for name, lib in (("c1", "kafka-python"), ("c2", "confluent-kafka"),
                          ("c3", "confluent-kafka")):  # fmt: skip
            g.start(name, lib, "cooperative-sticky")
            g.wait_settled()
        v = g.verify("cooperative-sticky")
    assert_verified(v, generations=3)


def test_cooperative_sticky_member_stalled_past_session_timeout(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    with group(kgc_broker, kgc_group_id, {kgc_topic: 6}) as g:
        g.start("c1", "kafka-python", "cooperative-sticky")
        g.start("c2", "confluent-kafka", "cooperative-sticky")
        g.start("c3", "kafka-python", "cooperative-sticky")
        g.wait_settled()
        g.pause("c2")  # SIGSTOP: no heartbeats; expelled after the session timeout
        g.wait_settled(expected={"c1", "c3"}, timeout_s=60)
        g.resume("c2")  # it finds itself fenced, loses its partitions and rejoins
        g.wait_settled(expected={"c1", "c2", "c3"}, timeout_s=60)
        v = g.verify("cooperative-sticky")
    assert_verified(v, generations=3)


def test_sticky_eager_leave_and_join(kgc_broker: Any, kgc_group_id: str, kgc_topic: str) -> None:
    # librdkafka has no eager "sticky": kafka-python only.
    with group(kgc_broker, kgc_group_id, {kgc_topic: 7}) as g:
        for name in ("c1", "c2", "c3"):
            g.start(name, "kafka-python", "sticky")
        g.wait_settled()
        g.leave("c1")
        g.wait_settled(expected={"c2", "c3"})
        g.start("c4", "kafka-python", "sticky")
        g.wait_settled(expected={"c2", "c3", "c4"})
        v = g.verify("sticky")
    assert_verified(v, generations=3)


def test_range_member_stalled_past_session_timeout_then_rejoins(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    with group(kgc_broker, kgc_group_id, {kgc_topic: 4}) as g:
        g.start("c1", "confluent-kafka", "range")
        g.start("c2", "kafka-python", "range")
        g.wait_settled()
        g.pause("c1")
        g.wait_settled(expected={"c2"}, timeout_s=60)
        g.resume("c1")
        g.wait_settled(expected={"c1", "c2"}, timeout_s=60)
        v = g.verify("range")
    assert_verified(v, generations=3)
