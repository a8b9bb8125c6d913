"""Real KIP-848 consumers: confluent-kafka (librdkafka) processes with ``group.protocol=consumer``
on a Kafka 4.x broker. The coordinator computes the assignment; every settled target it describes
(ConsumerGroupDescribe) is checked with Z3 against its assignor's promises, and the consumers' own
ownership intervals (their rebalance callbacks) for a partition with two owners at once."""

from __future__ import annotations

from typing import Any

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.real_clients import RealGroup

pytestmark = pytest.mark.broker
LIB = "confluent-kafka-848"


def _needs_4x(broker: Any) -> None:
    version = str(description_of(broker).get("version") or "4")
    if version[:1].isdigit() and int(version.split(".")[0]) < 4:
        pytest.skip(f"Kafka {version} has no KIP-848 consumer protocol")


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_consumer_protocol_group_joins_and_leaves(
    assignor: str, kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    _needs_4x(kgc_broker)
    with RealGroup(kgc_broker.bootstrap_servers, kgc_group_id, {kgc_topic: 6}) as g:
        g.start("a", LIB, assignor)
        first = g.wait_consumer_group_settled()
        assert first.assignor == assignor
        g.start("b", LIB, assignor)
        g.start("c", LIB, assignor)
        three = g.wait_consumer_group_settled()
        assert sorted(len(t) for t in three.target.values()) == [2, 2, 2]
        g.leave("b")
        two = g.wait_consumer_group_settled()
        assert sorted(len(t) for t in two.target.values()) == [3, 3]
        assert two.group_epoch > three.group_epoch > first.group_epoch
        v = g.verify_consumer_group()
    report = "\n".join([*v.problems, "-- checks:", *v.checks])
    assert v.ok, report
    assert v.generations == 3 and "ownership timeline: pass" in v.checks, report


def test_consumer_protocol_member_killed_is_fenced_at_its_session(
    kgc_broker: Any, kgc_group_id: str, kgc_topic: str
) -> None:
    # a SIGKILLed consumer never leaves: the coordinator removes it when its session
    # (group.consumer.session.timeout.ms, 2 s on the embedded broker) runs out, and its
    # partitions go to the others only then
    _needs_4x(kgc_broker)
    with RealGroup(kgc_broker.bootstrap_servers, kgc_group_id, {kgc_topic: 4}) as g:
        for name in ("a", "b"):
            g.start(name, LIB, "uniform")
        g.wait_consumer_group_settled()
        g.kill("b")
        alone = g.wait_consumer_group_settled(expected=["a"])
        assert sum(len(t) for t in alone.target.values()) == 4
        v = g.verify_consumer_group()
    assert v.ok, "\n".join([*v.problems, *v.checks])
