"""Finding: kafka-python 3.0.12's roundrobin assignor raises KeyError when subscriptions differ.

``RoundRobinPartitionAssignor.assign`` deals the sorted partitions to the members in a circle and,
when the member whose turn it is does not subscribe to the partition's topic, moves on with
``member_id = next(member_iter)`` — but the circle holds ``(group_instance_id, member_id)`` pairs,
so the next lookup ``member_topics[member_id]`` raises ``KeyError: (None, '<member id>')``. A
kafka-python consumer that leads such a group cannot finish the rebalance. Seen first on real
consumers (``tests/real_clients``: the RoundRobinAssignor javadoc's second example crashed the
kafka-python leader); reproduced here on the assignor alone, with the javadoc's own input.

The expectation is Kafka's: ``RoundRobinAssignor.java``'s javadoc gives the assignment, and the
model's port (``kgc.model.assignors.roundrobin_assign``, cross-checked against the Java class in
``tests/assignors``) computes it. Strict xfail while the installed kafka-python is a known broken
version: the day it is fixed this XPASSes and fails, so the note is removed, not left stale.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kgc.model.assignors import Subscription, roundrobin_assign

kafka = pytest.importorskip("kafka", reason="kafka-python is part of the clients extra")
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402

KNOWN_BROKEN = {"3.0.12"}
PARTITIONS = {"t0": 1, "t1": 2, "t2": 3}
TOPICS = {"c0": ("t0",), "c1": ("t0", "t1"), "c2": ("t0", "t1", "t2")}


class _Cluster:
    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(PARTITIONS[topic]))


@pytest.mark.xfail(
    kafka.__version__ in KNOWN_BROKEN,
    raises=KeyError,
    strict=True,
    reason="kafka-python roundrobin: member_id = next(member_iter) takes an (instance id, "
    "member id) pair when a member skips a topic it does not subscribe to",
)
def test_roundrobin_with_different_subscriptions_matches_kafka() -> None:
    members = [
        SimpleNamespace(
            member_id=m, group_instance_id=None, metadata=SimpleNamespace(topics=list(t))
        )
        for m, t in TOPICS.items()
    ]
    got = RoundRobinPartitionAssignor.assign(_Cluster(), members)
    want = roundrobin_assign(PARTITIONS, {m: Subscription(topics=t) for m, t in TOPICS.items()})
    as_pairs = {
        m: sorted((topic, p) for topic, ps in a.assigned_partitions for p in ps)
        for m, a in got.items()
    }
    expected = {m: sorted((tp.topic, tp.partition) for tp in tps) for m, tps in want.items()}
    assert as_pairs == expected
