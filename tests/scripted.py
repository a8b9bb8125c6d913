"""Scripted scenarios on the session broker: engines on fresh groups of one workload, each
answer checked by the workload's model as the search's are
(``tests/migration/test_migration_scenarios.py``,
``tests/consumer/test_consumer_regex_scenarios.py``)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.conformance.wire.negotiate import negotiate_with
from kgc.engine.loop import Engine
from kgc.engine.registry import model_manifest
from kgc.model import PROFILES
from kgc.model.checker import CheckerConfig
from kgc.model.commands import Tick
from kgc.model.history import Receive
from kgc.properties.machine import TOPIC_PARTITIONS


def engines(
    broker: Any, workload: Callable[..., Any], prefix: str
) -> Iterator[tuple[Callable[[], Engine], str]]:
    """Yield (open an engine on a fresh ``prefix…`` group, the run's topic) for ``workload``
    (``consumer_workload``, ``migration_workload``) on ``broker``; closes them after."""
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-test")
    description = {**description_of(broker), **facts(cluster, None)}
    negotiated = negotiate_with(cluster, PROFILES[model_manifest(description)["profile"]])
    description["request_versions"] = {k: list(v) for k, v in negotiated.versions.items()}
    topic = f"{prefix}{secrets.token_hex(3)}"
    cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
    chosen = workload(cluster, description, topic=topic)
    opened: list[Engine] = []

    def open_engine() -> Engine:
        group = f"{prefix}{secrets.token_hex(4)}"
        engine = Engine(chosen.open_target(group), chosen.new_model(group), CheckerConfig())
        opened.append(engine)
        return engine

    try:
        yield open_engine, topic
    finally:
        for engine in opened:
            engine.target.close()
        cluster.close()


def answer(engine: Engine, command: Any) -> Any:
    """Send ``command``, wait for its answer (the model checks it), return the broker's answer."""
    rid = engine.execute(command).request_id
    for _ in range(50):
        assert engine.divergence is None, engine.divergence
        for event in engine.events:
            if isinstance(event, Receive) and event.request_id == rid:
                return event.response
        engine.execute(Tick(ms=20))
    raise AssertionError(f"no answer to {command}")
