"""The share machine's exact check of a settled target (``simple_target_problem``) against the
promises of Kafka's ``simple`` share assignor (``SimpleHomogeneousAssignmentBuilder``, 4.3.1;
docs/share-groups.md §2 "Assignor"): with M members and P partitions, M <= P gives every
partition to exactly one member with loads within one; M > P shares a partition among at most
``ceil(M / P)`` members; before the partitions are initialized nothing is assigned."""

from __future__ import annotations

from kgc.model.commands import TopicPartition
from kgc.properties.share_machine import simple_target_problem

T = "kgc-suite"


def tps(*ps: int, topic: str = T) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic=topic, partition=p) for p in ps)


def test_targets_the_assignor_can_give_pass() -> None:
    assert simple_target_problem({"a": tps(0, 1, 2)}, T, 3) is None
    assert simple_target_problem({"a": tps(0, 2), "b": tps(1)}, T, 3) is None
    assert simple_target_problem({"a": tps(1), "b": tps(0), "c": tps(2)}, T, 3) is None
    # nothing initialized yet: every assignment empty
    assert simple_target_problem({"a": (), "b": ()}, T, 3) is None
    # four members over three partitions: desiredSharing = ceil(4/3) = 2
    assert simple_target_problem({"a": tps(0), "b": tps(1), "c": tps(2), "d": tps(0)}, T, 3) is None


def test_targets_the_assignor_cannot_give_fail() -> None:
    shared = simple_target_problem({"a": tps(0, 1), "b": tps(1, 2)}, T, 3)
    assert shared is not None and "shared" in shared
    missing = simple_target_problem({"a": tps(0), "b": tps(1)}, T, 3)
    assert missing is not None and "unassigned" in missing
    unbalanced = simple_target_problem({"a": tps(0, 1, 2), "b": ()}, T, 3)
    assert unbalanced is not None and "unbalanced" in unbalanced
    foreign = simple_target_problem({"a": tps(0, 1, 2, topic="other")}, T, 3)
    assert foreign is not None and "not a partition" in foreign
    beyond = simple_target_problem({"a": tps(0, 1, 2, 3)}, T, 3)
    assert beyond is not None
    twice = simple_target_problem({"a": tps(0, 0, 1, 2)}, T, 3)
    assert twice is not None and "twice" in twice
    # four members over three partitions may share a partition two ways, never three
    over = simple_target_problem({"a": tps(0), "b": tps(0), "c": tps(0), "d": tps(1, 2)}, T, 3)
    assert over is not None and "more than 2" in over
