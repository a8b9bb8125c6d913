"""KIP-848 server-side assignors against Kafka's documented examples (RangeAssignor javadoc in
group-coordinator, UniformHomogeneousAssignmentBuilder's quota rule) and scenarios from Kafka's
OptimizedUniformAssignmentBuilderTest whose expectations do not depend on HashSet order, worked
out by hand."""

from __future__ import annotations

from kgc.model.assignors import Subscription, TopicPartition, server_range_assign, uniform_assign


def tp(topic: str, *partitions: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic, p) for p in partitions)


def test_server_range_javadoc_co_partitioned() -> None:
    # M0, M1; T1 and T2 with 3 partitions: M0 [T1P0, T1P1, T2P0, T2P1], M1 [T1P2, T2P2].
    subs = {m: Subscription(topics=("T1", "T2")) for m in ("M0", "M1")}
    assert server_range_assign({"T1": 3, "T2": 3}, subs) == {
        "M0": tp("T1", 0, 1) + tp("T2", 0, 1),
        "M1": tp("T1", 2) + tp("T2", 2),
    }


def test_server_range_static_members_keep_their_ranges() -> None:
    # Javadoc: with instance ids I0 and I1 the assignment is I0 [T1P0, T1P1, T2P0, T2P1],
    # I1 [T1P2, T2P2] whatever the member ids (here M3 has I0 and sorts after M2).
    subs = {
        "M3": Subscription(topics=("T1", "T2"), group_instance_id="I0"),
        "M2": Subscription(topics=("T1", "T2"), group_instance_id="I1"),
    }
    result = server_range_assign({"T1": 3, "T2": 3}, subs)
    assert result["M3"] == tp("T1", 0, 1) + tp("T2", 0, 1)
    assert result["M2"] == tp("T1", 2) + tp("T2", 2)


def test_server_range_every_subscriber_gets_a_range_of_each_topic() -> None:
    # Heterogeneous: T1 (4 partitions) has subscribers A, B; T2 (3) has A, B, C.
    subs = {
        "A": Subscription(topics=("T1", "T2")),
        "B": Subscription(topics=("T1", "T2")),
        "C": Subscription(topics=("T2",)),
    }
    assert server_range_assign({"T1": 4, "T2": 3}, subs) == {
        "A": tp("T1", 0, 1) + tp("T2", 0),
        "B": tp("T1", 2, 3) + tp("T2", 1),
        "C": tp("T2", 2),
    }


def test_uniform_quota_11_partitions_3_members() -> None:
    # UniformHomogeneousAssignmentBuilder: "11 partitions among 3 members, each member gets 3
    # (11 / 3) [minQuota] partitions and 2 (11 % 3) members get an extra partition".
    subs = {m: Subscription(topics=("T",)) for m in ("A", "B", "C")}
    result = uniform_assign({"T": 11}, subs)
    assert sorted(len(v) for v in result.values()) == [3, 4, 4]
    assert sorted(p for v in result.values() for p in v) == list(tp("T", *range(11)))


def test_uniform_first_assignment_extra_partition_goes_to_the_last_member() -> None:
    # OptimizedUniformAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks:
    # 5 partitions, 2 members: memberA gets 2, memberB 3 (it must take the extra partition,
    # being among the last remainingMembersToGetAnExtraPartition members).
    subs = {m: Subscription(topics=("topic1", "topic3")) for m in ("memberA", "memberB")}
    result = uniform_assign({"topic1": 3, "topic3": 2}, subs)
    assert (len(result["memberA"]), len(result["memberB"])) == (2, 3)


def test_uniform_unbalanced_previous_assignment() -> None:
    # ...testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment: A owned
    # topic1 {0,1}, topic2 {0,1}; B topic1 {2}, topic2 {2}. Expected A: topic1 {0,1}, topic2 {0};
    # B: topic1 {2}, topic2 {1,2}.
    subs = {
        "A": Subscription(
            topics=("topic1", "topic2"), owned_partitions=tp("topic1", 0, 1) + tp("topic2", 0, 1)
        ),
        "B": Subscription(
            topics=("topic1", "topic2"), owned_partitions=tp("topic1", 2) + tp("topic2", 2)
        ),
    }
    assert uniform_assign({"topic1": 3, "topic2": 3}, subs) == {
        "A": tp("topic1", 0, 1) + tp("topic2", 0),
        "B": tp("topic1", 2) + tp("topic2", 1, 2),
    }


def test_uniform_member_added() -> None:
    # ...testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics:
    # A: topic1 {0,2}, topic2 {0}; B: topic1 {1}, topic2 {1,2}; C joins. Expected A: topic1 {0,2};
    # B: topic1 {1}, topic2 {1}; C: topic2 {0,2}.
    subs = {
        "A": Subscription(
            topics=("topic1", "topic2"), owned_partitions=tp("topic1", 0, 2) + tp("topic2", 0)
        ),
        "B": Subscription(
            topics=("topic1", "topic2"), owned_partitions=tp("topic1", 1) + tp("topic2", 1, 2)
        ),
        "C": Subscription(topics=("topic1", "topic2")),
    }
    assert uniform_assign({"topic1": 3, "topic2": 3}, subs) == {
        "A": tp("topic1", 0, 2),
        "B": tp("topic1", 1) + tp("topic2", 1),
        "C": tp("topic2", 0, 2),
    }


def test_uniform_heterogeneous_documented_shape() -> None:
    # UniformHeterogeneousAssignmentBuilder.balanceTopics javadoc: members 1 and 2 subscribe to
    # the first topic, 2 and 3 to the second; the result is balanced per topic: no subscriber of
    # a topic has two or more partitions fewer than an owner of that topic's partitions.
    subs = {
        "m1": Subscription(topics=("first",)),
        "m2": Subscription(topics=("first", "second")),
        "m3": Subscription(topics=("second",)),
    }
    result = uniform_assign({"first": 15, "second": 15}, subs)
    loads = {m: len(v) for m, v in result.items()}
    assert sum(loads.values()) == 30
    for topic, members in (("first", ("m1", "m2")), ("second", ("m2", "m3"))):
        owners = {m for m, v in result.items() if any(p.topic == topic for p in v)}
        assert owners <= set(members)
        assert max(loads[m] for m in owners) <= min(loads[m] for m in members) + 1


def test_uniform_keeps_a_balanced_assignment() -> None:
    # In the spirit of Kafka's testReassignmentStickinessWhenAlreadyBalanced: a balanced target
    # assignment is kept as it is.
    subs = {
        "A": Subscription(topics=("t1", "t2"), owned_partitions=tp("t1", 0, 2) + tp("t2", 1)),
        "B": Subscription(topics=("t1", "t2"), owned_partitions=tp("t1", 1) + tp("t2", 0, 2)),
    }
    assert uniform_assign({"t1": 3, "t2": 3}, subs) == {
        "A": tp("t1", 0, 2) + tp("t2", 1),
        "B": tp("t1", 1) + tp("t2", 0, 2),
    }
