"""Which consumer-group rules each Apache Kafka 4.x line is held to (``engine/registry.py``
``consumer_manifest``). Each switch was read in that line's kafka-group-coordinator jar and shown by
the suite on a live broker of the older line (see the switches' comments in
``model/consumer/group.py``)."""

from __future__ import annotations

import pytest
from kgc.engine.registry import build_consumer, consumer_manifest


@pytest.mark.parametrize(
    ("version", "first_epoch", "zero_rejoins", "pending_in_describe"),
    [
        ("4.0.2", 0, False, False),
        ("4.1.2", 0, False, False),
        ("4.2.1", 0, True, False),
        ("4.3.0", 1, True, True),
        ("4.3.1", 1, True, True),
        ("unknown", 1, True, True),  # a broker that does not say: the default profile's (4.3)
    ],
)
def test_each_line_gets_its_own_consumer_rules(
    version: str, first_epoch: int, zero_rejoins: bool, pending_in_describe: bool
) -> None:
    record = consumer_manifest({"version": version}, {"t": 3})
    config = build_consumer(record, "g").config
    assert config.initial_group_epoch == first_epoch
    assert config.epoch_zero_rejoins is zero_rejoins
    assert config.describe_includes_pending_revocation is pending_in_describe


@pytest.mark.parametrize(
    ("version", "reconciles", "zero_bumps", "drop_bumps", "refresh_interval"),
    [
        ("4.0.2", False, True, False, None),
        ("4.1.2", False, True, True, 600_000),
        ("4.2.1", True, True, True, 600_000),
        ("4.3.1", True, False, True, 600_000),
        ("4.4.0", True, False, True, 600_000),
        ("unknown", True, False, True, 600_000),  # the default profile's line, 4.3
    ],
)
def test_each_line_gets_its_own_regex_rules(
    version: str,
    reconciles: bool,
    zero_bumps: bool,
    drop_bumps: bool,
    refresh_interval: int | None,
) -> None:
    # rule 12's switches: ``consumerGroupHeartbeat`` and ``maybeUpdateRegularExpressions`` as
    # read in the 4.0.2, 4.1.2, 4.2.1 and 4.3.1 jars
    implementation = "unknown" if version == "unknown" else "apache-kafka"
    description = {"version": version, "implementation": implementation}
    config = build_consumer(consumer_manifest(description, {"t": 3}), "g").config
    assert config.subscription_change_reconciles is reconciles
    assert config.epoch_zero_group_bumps is zero_bumps
    assert config.regex_drop_bumps is drop_bumps
    assert config.regex_refresh_interval_ms == refresh_interval
    assert config.full_group_spares_static is (version == "4.4.0")
    assert config.empty_group_assignment_catches_up is (version == "4.4.0")
    assert config.assignor_change_bumps is (version == "4.4.0")
    # a broker kgc started (an implementation it names) has no one else making topics on it;
    # one it did not start ("unknown") may
    assert config.topics_may_appear is (version == "unknown")


@pytest.mark.parametrize(
    ("version", "error"), [("4.3.1", "GROUP_MAX_SIZE_REACHED"), ("4.4.0", "UNRELEASED_INSTANCE_ID")]
)
def test_a_full_group_lets_a_known_instance_id_through_from_4_4(version: str, error: str) -> None:
    from dataclasses import replace

    from kgc.model.commands import ConsumerGroupHeartbeat

    record = consumer_manifest({"version": version, "implementation": "apache-kafka"}, {"t": 3})
    model = build_consumer(record, "g")
    model.config = replace(model.config, max_size=1)
    join = ConsumerGroupHeartbeat(
        client="c1",
        member_id="c1-1",
        member_epoch=0,
        instance_id="i1",
        rebalance_timeout_ms=1000,
        subscribed_topic_names=("t",),
        topic_partitions=(),
        version=1,
    )
    (s,) = model.apply(model.initial(), 1, join, 0.0)
    # the same instance under a new member id while the first is still in the (full) group
    (s2,) = model.apply(s, 2, replace(join, member_id="c1-2"), 10.0)
    assert model.outbox(s2)[2][0].error == error


def test_a_broker_of_unknown_version_takes_the_consumer_rules_of_the_line_it_is_judged_by() -> None:
    # --rules kafka-4.4 holds an unknown broker to 4.4's rules, classic and consumer alike
    described = {"version": "unknown", "implementation": "unknown", "model_profile": "kafka-4.4"}
    config = build_consumer(consumer_manifest(described, {"t": 3}), "g").config
    assert config.assignor_change_bumps and config.full_group_spares_static


def test_a_record_without_a_later_switch_keeps_its_lines_rule() -> None:
    # a trace recorded on 4.3.1 before the 4.4 switches existed replays by 4.3's rules
    old = {"name": "ConsumerGroupModel", "profile": "kafka-4.3", "config": {"topics": [["t", 3]]}}
    config = build_consumer(old, "g").config
    assert not config.assignor_change_bumps and not config.full_group_spares_static


def test_searches_sharing_a_broker_keep_each_others_topics_possible() -> None:
    # kgc check --workers N: every search makes its topic when it starts, while others run
    described = {"version": "4.3.1", "implementation": "apache-kafka", "searches": 2}
    config = build_consumer(consumer_manifest(described, {"t": 3}), "g").config
    assert config.topics_may_appear
