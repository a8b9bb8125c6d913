"""Coordinator discovery (model/coordinator.py). Expected hashes and partitions were computed with
Java 17's ``String.hashCode`` and Kafka's ``Utils.abs`` rule, not with the code under test."""

from __future__ import annotations

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.coordinator import (
    coordinator_for,
    errors_while_moving,
    find_coordinator_outcomes,
    java_string_hash,
    needs_rediscovery,
    partition_for,
    utils_abs,
)

# (group id, String.hashCode(), abs % 50, abs % 10, abs % 7) from a Java 17 program
JAVA = [
    ("", 0, 0, 0, 0),
    ("a", 97, 47, 7, 6),
    ("hello", 99162322, 22, 2, 0),
    ("polygenelubricants", -2147483648, 0, 0, 0),  # hashCode == Integer.MIN_VALUE
    ("kgc-group", -1947768903, 3, 3, 3),  # negative hash: int32 overflow
    ("kgc-test-join-0001", -746527921, 21, 1, 6),
    ("my-consumer-group", 1513705513, 13, 3, 5),
    ("\U0001f600grp", 1276929186, 36, 6, 1),  # outside the BMP: two UTF-16 surrogates
    ("Ünïcödé-group", 1187475847, 47, 7, 5),
]


@pytest.mark.parametrize(("group", "h", "p50", "p10", "p7"), JAVA)
def test_partition_matches_java(group: str, h: int, p50: int, p10: int, p7: int) -> None:
    assert java_string_hash(group) == h
    assert partition_for(group, 50) == p50
    assert partition_for(group, 10) == p10
    assert partition_for(group, 7) == p7


def test_utils_abs_maps_min_value_to_zero_unlike_math_abs() -> None:
    # Math.abs(Integer.MIN_VALUE) is still negative in Java; Kafka's Utils.abs returns 0 instead,
    # so "polygenelubricants" lands on partition 0 rather than on a negative index.
    assert utils_abs(-(2**31)) == 0
    assert utils_abs(-5) == 5


def test_coordinator_is_the_leader_of_the_groups_partition() -> None:
    # "kgc-group" -> partition 3 of 10; node 7 leads it.
    leaders = [1, 1, 2, 7, 2, 1, 2, 1, 2, 1]
    assert coordinator_for("kgc-group", 10, leaders) == 7
    leaders[3] = -1  # leaderless partition: no coordinator
    assert coordinator_for("kgc-group", 10, leaders) is None
    assert find_coordinator_outcomes("kgc-group", 10, leaders, ()) == (
        ("COORDINATOR_NOT_AVAILABLE", -1),
    )


def test_find_coordinator_without_a_leader_map_allows_any_known_node() -> None:
    assert find_coordinator_outcomes("g", 50, None, (3, 1)) == (("NONE", 1), ("NONE", 3))
    assert find_coordinator_outcomes("g", 50, None, ()) == (("NONE", -1),)


def test_errors_while_the_coordinator_moves_differ_for_sync_group() -> None:
    # 3.9 turns COORDINATOR_LOAD_IN_PROGRESS into REBALANCE_IN_PROGRESS for SyncGroup
    # (GroupCoordinator.handleSyncGroup); 4.x passes it through.
    assert "COORDINATOR_LOAD_IN_PROGRESS" in errors_while_moving("SyncGroup", KAFKA_4_X)
    assert "COORDINATOR_LOAD_IN_PROGRESS" not in errors_while_moving("SyncGroup", KAFKA_3_9)
    assert "REBALANCE_IN_PROGRESS" in errors_while_moving("SyncGroup", KAFKA_3_9)
    # Heartbeats answered while loading are NONE in both.
    for p in (KAFKA_4_X, KAFKA_3_9):
        hb = errors_while_moving("Heartbeat", p)
        assert "NONE" in hb and "COORDINATOR_LOAD_IN_PROGRESS" not in hb


def test_rediscovery_rule() -> None:
    # NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE: find the coordinator again; loading: retry it.
    assert needs_rediscovery("NOT_COORDINATOR")
    assert needs_rediscovery("COORDINATOR_NOT_AVAILABLE")
    assert not needs_rediscovery("COORDINATOR_LOAD_IN_PROGRESS")
    assert not needs_rediscovery("REBALANCE_IN_PROGRESS")
