"""Both protocols on one group id (``kgc check --protocol migration``) against a real broker: on
Apache Kafka 4.x every answer must be one ``MigratingGroupModel`` allows, under Kafka's default
``group.consumer.migration.policy`` (``bidirectional``: the session broker) and with the policy
``disabled`` (a broker of this module's own), and the search must cross from each protocol's group
to the other's. A broker without the consumer protocol (the CI's 3.9.2 pass) is refused before
any example with a one-line reason, not a traceback."""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import run_suite
from kgc.conformance.errors import ProtocolUnsupported
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


def _check(broker, tmp_path, policy: str, profile: str) -> None:  # noqa: ANN001
    if _major(broker) < 4:
        with pytest.raises(ProtocolUnsupported, match="ConsumerGroupHeartbeat"):
            _suite(broker, tmp_path, profile="quick")
        return
    try:
        result = _suite(broker, tmp_path, profile=profile)
    except ProtocolUnsupported as exc:
        if description_of(broker).get("version") not in (None, "unknown"):
            raise  # an Apache Kafka 4.x that kgc started must run it
        pytest.skip(f"the broker at --kgc-bootstrap-server cannot run this suite: {exc}")
    if description_of(broker).get("version") not in (None, "unknown"):
        assert result.target["group_config"]["group.consumer.migration.policy"] == policy
    assert result.ok, result.message[:4000]
    assert result.examples >= 12 and result.commands > 100
    cov = summarise(result.coverage, protocol="migration", target=result.target)
    print(
        f"migration ({policy}): {cov['reached']} of {cov['cells']} crossing cells; "
        f"never {cov['never']}"
    )
    reached = {c for c, n in result.coverage.items() if n}
    # both directions were crossed on the broker, not only on the model
    assert any(s.startswith("classic/") and r == "ConsumerGroupHeartbeat" for s, r, _ in reached)
    assert any(s.startswith("consumer/") and r == "JoinGroup" for s, r, _ in reached)


def test_mixed_protocols_under_kafkas_default_policy(kgc_broker, tmp_path):
    """Online upgrade and downgrade (``bidirectional``, the session broker's)."""
    _check(kgc_broker, tmp_path, "bidirectional", "ci")


def test_mixed_protocols_with_migration_disabled(kgc_migration_broker, tmp_path):
    """No conversion of a group with members: each side refuses the other's members."""
    _check(kgc_migration_broker, tmp_path, "disabled", "ci")
