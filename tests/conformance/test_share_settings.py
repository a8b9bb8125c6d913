"""The share workload's broker side, with no broker: which versions it negotiates from an
ApiVersions answer, the share settings kgc gives the brokers it starts, and the checks on share
settings read or given. Against real brokers: ``tests/broker/test_share_wire.py``."""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.embedded import default_config
from kgc.conformance.drivers.workloads import (
    SHARE,
    WORKLOADS,
    _share_admin_versions,
    _share_versions,
    workload_named,
)
from kgc.conformance.errors import ProtocolUnsupported
from kgc.conformance.wire.brokerconfig import ASSUMED, GROUP_SETTINGS, settings_problem

SHARE_KEYS = {"ShareGroupHeartbeat": 76, "ShareGroupDescribe": 77}  # ApiKeys.java


def test_the_share_workload_is_named_as_the_cli_names_it():
    assert workload_named("share") is SHARE is WORKLOADS["share"]
    assert SHARE.scenario == "share"
    # the share machine's own requests, and the group-admin ones it sends beside them
    assert SHARE.negotiates == frozenset(SHARE_KEYS) | {"ListGroups", "DeleteGroups"}


def test_group_admin_requests_are_sent_only_where_the_broker_offers_them():
    # ListGroups is API key 16, DeleteGroups 42 (ApiKeys.java). Kafka 4.3.1 offers ListGroups
    # v0-5 and DeleteGroups v0-2; librdkafka's mock cluster neither (it closes the connection
    # on a request it does not offer: seen with DeleteGroups on seed 1 of its share search)
    versions, missing = _share_admin_versions({16: (0, 5), 42: (0, 2)})
    assert missing == {} and versions["DeleteGroups"] and versions["ListGroups"]
    assert set(versions["ListGroups"]) <= set(range(6)) and 5 in versions["ListGroups"]
    versions, missing = _share_admin_versions({76: (1, 1)})
    assert versions == {"ListGroups": [], "DeleteGroups": []}
    assert missing == {
        "ListGroups": "the broker does not offer ListGroups (API key 16)",
        "DeleteGroups": "the broker does not offer DeleteGroups (API key 42)",
    }
    versions, missing = _share_admin_versions({16: (9, 9), 42: (0, 2)})
    assert versions["ListGroups"] == [] and missing["ListGroups"].startswith(
        "the broker offers ListGroups v9-9, kgc sends v"
    )


def test_v1_is_negotiated_where_the_broker_offers_it():
    # Kafka 4.1-4.3 advertise both at v1 (ShareGroupHeartbeatRequest.json: "validVersions": "1")
    assert _share_versions({76: (1, 1), 77: (1, 1), 68: (0, 1)}) == (
        {"ShareGroupHeartbeat": [1], "ShareGroupDescribe": [1]},
        {},
    )


def test_a_broker_without_share_group_describe_is_searched_with_heartbeats():
    # librdkafka's mock cluster offers ShareGroupHeartbeat v1 and no ShareGroupDescribe
    versions, missing = _share_versions({76: (1, 1)})
    assert versions == {"ShareGroupHeartbeat": [1], "ShareGroupDescribe": []}
    assert list(missing) == ["ShareGroupDescribe"]
    assert "API key 77" in missing["ShareGroupDescribe"]


@pytest.mark.parametrize(
    ("advertised", "named"),
    [
        ({}, "ShareGroupHeartbeat (API key 76)"),  # 3.9, or 4.0 without early access
        ({77: (1, 1)}, "ShareGroupHeartbeat (API key 76)"),
        ({76: (0, 0), 77: (0, 0)}, "ShareGroupHeartbeat v0-0"),  # 4.0's early-access v0 only
    ],
)
def test_a_broker_without_what_kgc_speaks_is_refused_in_one_line(advertised, named):
    with pytest.raises(ProtocolUnsupported) as caught:
        _share_versions(advertised)
    assert named in str(caught.value) and "\n" not in str(caught.value)


SUITE_SHARE = {
    "group.share.min.session.timeout.ms": "500",
    "group.share.session.timeout.ms": "2000",
    "group.share.min.heartbeat.interval.ms": "100",
    "group.share.heartbeat.interval.ms": "500",
    "group.share.max.size": "3",
}


def _share_part(version: str) -> dict[str, str]:
    return {k: v for k, v in default_config(version, "kraft", 1, 4).items() if "group.share" in k}


def test_the_suite_share_settings_go_only_where_kafka_defines_them():
    # docs/share-groups.md §1; group.share.assignment.interval.ms exists from 4.3 only
    # (GroupCoordinatorConfig), the others from 4.0
    assert _share_part("4.3.1") == {**SUITE_SHARE, "group.share.assignment.interval.ms": "0"}
    assert _share_part("4.4.0") == {**SUITE_SHARE, "group.share.assignment.interval.ms": "0"}
    for version in ("4.0.2", "4.1.2", "4.2.2"):
        assert _share_part(version) == SUITE_SHARE, version
    assert _share_part("3.9.2") == {}


def test_the_share_facts_are_read_under_kafkas_keys_with_kafkas_defaults():
    # GroupCoordinatorConfig.java l.264-309 (4.3.1): the defaults of a broker that does not say
    for key, default in {
        "group.share.session.timeout.ms": 45000,
        "group.share.heartbeat.interval.ms": 5000,
        "group.share.max.size": 200,
        "group.share.assignment.interval.ms": 1000,
    }.items():
        assert key in GROUP_SETTINGS
        assert ASSUMED[key] == default


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"group.share.heartbeat.interval.ms": 2000, "group.share.session.timeout.ms": 2000},
         "must be less than"),
        ({"group.share.max.size": 0}, "between 1 and 1000"),
        ({"group.share.assignment.interval.ms": -1}, "at least 0"),
    ],
)  # fmt: skip
def test_share_settings_kafka_would_refuse_are_named(given, named):
    # GroupCoordinatorConfig.java l.438 (size 1-1000), l.628-631 (heartbeat < session), l.440
    problem = settings_problem(dict(ASSUMED) | given)
    assert problem is not None and named in problem


def test_the_suite_share_settings_hold_together():
    launched = {k: int(v) for k, v in _share_part("4.3.1").items()}
    assert settings_problem(dict(ASSUMED) | launched) is None
