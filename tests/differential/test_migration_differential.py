"""Both protocols on one group id (``kgc check --protocol migration``) against a real broker: on
Apache Kafka 4.x, started with ``group.consumer.migration.policy=disabled``, every answer must be
one ``MigratingGroupModel`` allows, and the search must cross from each protocol's group to the
other's. A broker without the consumer protocol (the CI's 3.9.2 pass) is refused before any
example with a one-line reason, and so is a broker whose policy converts groups with members
(the session broker runs Kafka's default, ``bidirectional``): the model does not cover it yet."""

from __future__ import annotations

import pytest
from kgc.conformance.errors import ProtocolUnsupported
from kgc.conformance.session import description_of
from kgc.conformance.suite import run_suite
from kgc.engine.coverage import summarise

pytestmark = pytest.mark.broker


def _major(broker) -> int:  # noqa: ANN001
    version = str(description_of(broker).get("version") or "4")
    return int(version.split(".")[0]) if version[:1].isdigit() else 4


def _suite(broker, tmp_path, seed: int = 1, profile: str = "ci"):  # noqa: ANN001
    return run_suite(
        bootstrap_servers=broker.bootstrap_servers,
        description=description_of(broker),
        profile=profile,
        seed=seed,
        traces_dir=tmp_path,
        protocol="migration",
    )


def test_mixed_protocol_suite_agrees_with_the_model(kgc_migration_broker, tmp_path):
    if _major(kgc_migration_broker) < 4:
        with pytest.raises(ProtocolUnsupported, match="ConsumerGroupHeartbeat"):
            _suite(kgc_migration_broker, tmp_path, profile="quick")
        return
    try:
        result = _suite(kgc_migration_broker, tmp_path)
    except ProtocolUnsupported as exc:
        if description_of(kgc_migration_broker).get("version") not in (None, "unknown"):
            raise  # an Apache Kafka 4.x that kgc started must run it
        pytest.skip(f"the broker at --kgc-bootstrap-server cannot run this suite: {exc}")
    assert result.ok, result.message[:4000]
    assert result.examples >= 12 and result.commands > 100
    cov = summarise(result.coverage, protocol="migration")
    print(f"migration: {cov['reached']} of {cov['cells']} crossing cells; never {cov['never']}")
    reached = {c for c, n in result.coverage.items() if n}
    # both directions were crossed on the broker, not only on the model
    assert any(s.startswith("classic/") and r == "ConsumerGroupHeartbeat" for s, r, _ in reached)
    assert any(s.startswith("consumer/") and r == "JoinGroup" for s, r, _ in reached)


def test_a_policy_that_converts_groups_with_members_is_refused_in_one_line(kgc_broker, tmp_path):
    if _major(kgc_broker) < 4:
        with pytest.raises(ProtocolUnsupported, match="ConsumerGroupHeartbeat"):
            _suite(kgc_broker, tmp_path, profile="quick")
        return
    if description_of(kgc_broker).get("version") in (None, "unknown"):
        pytest.skip("a broker kgc did not start may run any policy")
    with pytest.raises(ProtocolUnsupported) as info:
        _suite(kgc_broker, tmp_path, profile="quick")
    message = str(info.value)
    assert "\n" not in message
    assert "group.consumer.migration.policy=bidirectional" in message
    assert "(this broker's: read)" in message
