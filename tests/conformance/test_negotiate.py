"""Request versions are what the broker, kafka-python and the judging rules all speak."""

from __future__ import annotations

from kgc.conformance.wire.negotiate import API_KEYS, negotiate
from kgc.model.profiles import KAFKA_3_9 as RULES_3_9
from kgc.model.profiles import KAFKA_4_X
from kgc.properties.machine import DEFAULT_VERSIONS

# ApiVersions of the group APIs as the embedded Apache Kafka 4.3.1 and 3.9.2 answered them
KAFKA_4_3 = {8: (2, 10), 9: (1, 10), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5),
             15: (0, 6)}  # fmt: skip
KAFKA_3_9 = {8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5),
             15: (0, 5)}  # fmt: skip
# librdkafka 2.16.1's mock cluster: no DescribeGroups, JoinGroup up to v6, SyncGroup up to v4
RDKAFKA_MOCK = {8: (0, 9), 9: (0, 6), 10: (0, 3), 11: (0, 6), 12: (0, 5), 13: (0, 4), 14: (0, 4)}


def test_apache_kafka_gets_every_version_both_sides_speak() -> None:
    got = negotiate(KAFKA_4_3, KAFKA_4_X)
    assert got.unsupported == {}
    assert got.versions == DEFAULT_VERSIONS  # kafka-python's ranges are 4.3.1's
    # v0, with no rebalance timeout, too; the versions drawn before every one was come first
    assert got.versions["JoinGroup"] == (3, 5, 7, 0, 1, 2, 4, 6, 8, 9)
    assert sorted(got.versions["OffsetCommit"]) == list(range(2, 11))  # KIP-896: 4.x has no v0-1
    got = negotiate(KAFKA_3_9, RULES_3_9)
    assert got.unsupported == {}
    assert got.versions["DescribeGroups"] == (4, 5, 0, 1, 2, 3)  # 3.9 has no v6
    assert sorted(got.versions["OffsetCommit"]) == list(range(2, 10))  # 3.9: v0-9, kafka-python v2+
    assert sorted(got.versions["OffsetFetch"]) == list(range(1, 10))  # v0 is ZooKeeper's (v1+)


def test_a_broker_with_fewer_versions_gets_the_common_ones_and_loses_what_it_lacks() -> None:
    got = negotiate(RDKAFKA_MOCK, RULES_3_9)
    assert got.versions["JoinGroup"] == (3, 5, 0, 1, 2, 4, 6)  # v7+ is beyond the broker's v6
    assert (
        "DescribeGroups" in got.unsupported and "not offered" in got.unsupported["DescribeGroups"]
    )
    assert set(got.versions) | set(got.unsupported) == set(API_KEYS)


def test_without_the_first_versions_the_others_come_oldest_first() -> None:
    old = {**KAFKA_4_3, 12: (0, 2)}  # Heartbeat v0-2 only: not the v3/v4 drawn first elsewhere
    assert negotiate(old, RULES_3_9).versions["Heartbeat"] == (0, 1, 2)


def test_no_common_version_switches_the_request_type_off() -> None:
    odd = {**KAFKA_4_3, 11: (20, 21)}
    got = negotiate(odd, KAFKA_4_X)
    assert "JoinGroup" not in got.versions and "no common version" in got.unsupported["JoinGroup"]
