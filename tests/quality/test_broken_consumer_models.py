"""Quality for the KIP-848 consumer protocol and online migration: each broken consumer-group
variant (``kgc.engine.broken.CONSUMER_VARIANTS``, searched with ``--protocol consumer``) and each
broken migration variant (``MIGRATION_VARIANTS``, ``--protocol migration``, the session broker's
default ``group.consumer.migration.policy``) is caught against the session broker (Kafka 4.x),
shrunk to a trace of at most 10 commands that fails again on replay with the variant in force,
and passes on replay with the real model — as ``test_broken_models.py`` does for the classic
protocol."""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import replay_on_broker, run_suite
from kgc.conformance.wire.client import Cluster
from kgc.engine.broken import CONSUMER_VARIANTS, MIGRATION_VARIANTS, broken
from kgc.engine.traces import load, render

MAX_COMMANDS = 10
SEED = 1


def _replay(broker, trace):  # noqa: ANN001
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-quality")
    try:
        return replay_on_broker(broker, cluster, trace)
    finally:
        cluster.close()


@pytest.mark.broker
@pytest.mark.quality
@pytest.mark.parametrize(
    ("variant", "protocol"),
    [(v, "consumer") for v in sorted(CONSUMER_VARIANTS)]
    + [(v, "migration") for v in sorted(MIGRATION_VARIANTS)],
)
def test_consumer_suite_catches_broken_model(variant, protocol, kgc_broker, tmp_path):
    version = str(description_of(kgc_broker).get("version") or "4")
    if version[:1].isdigit() and int(version.split(".")[0]) < 4:
        pytest.skip(f"Kafka {version} has no KIP-848 consumer protocol")
    with broken(variant):
        result = run_suite(
            bootstrap_servers=kgc_broker.bootstrap_servers,
            description=description_of(kgc_broker),
            profile="quality",
            seed=SEED,
            traces_dir=tmp_path,
            shrink_budget_s=30,
            minimize_budget_s=60,
            protocol=protocol,
        )
    assert result.failure == "divergence", (
        f"{variant}: expected a divergence, got {result.failure}: {result.message[:2000]}"
    )
    assert len(result.saved) == 1
    trace = load(result.saved[0])
    print(f"{variant}: {result.examples} examples, {len(trace.commands)} commands\n{render(trace)}")
    assert len(trace.commands) <= MAX_COMMANDS, render(trace)
    with broken(variant):
        again = _replay(kgc_broker, trace)
    assert again.engine.divergence is not None, f"replay did not fail:\n{render(again.trace)}"
    real = _replay(kgc_broker, trace)
    assert real.engine.divergence is None, f"the real model diverges too:\n{render(real.trace)}"
