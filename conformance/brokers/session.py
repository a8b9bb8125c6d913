"""Open the broker a front end was asked for: the embedded Apache Kafka, or one the user runs.

Both front ends (``kgc check`` / ``kgc replay`` and the pytest plugin) get a broker the same way, so
"a broker the suite did not start" is handled in one place: it is only ever touched under the
``kgc-`` prefix and never has faults injected (``can_inject_faults`` is false).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgc.conformance.brokers.providers import KafkaProvider
    from kgc.conformance.wire.security import ClientSecurity


@contextmanager
def open_broker(
    *,
    bootstrap_server: str | None = None,
    kafka_version: str | None = None,
    mode: str | None = None,
    nodes: int = 1,
    implementation: str | None = None,
    config: dict[str, str] | None = None,
    security: str | None = None,
    client_security: ClientSecurity | None = None,
) -> Iterator[Any]:
    """Yield a started broker provider (``bootstrap_servers``, ``describe()``, …); stop it after
    if this function started it. Bad input raises a one-line ``KgcError``. ``implementation``
    names a Kafka-compatible broker kgc launches itself (``IMPLEMENTATIONS``). ``config``: broker
    settings for an embedded Apache Kafka (ignored for any other broker). ``security``: start the
    embedded broker secured (``secure.KINDS``); ``client_security``: how kgc connects to a broker
    given by ``bootstrap_server`` (``--command-config``)."""
    if implementation not in (None, "apache-kafka"):
        from kgc.conformance.brokers.implementations import launched

        with launched(implementation) as other:
            yield other
        return
    if bootstrap_server is not None:  # an empty one is a bad address, not "start one"
        from kgc.conformance.brokers.providers import ExternalKafka

        broker: Any = ExternalKafka(bootstrap_server, security=client_security)
    else:
        from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION
        from kgc.conformance.brokers.embedded import EmbeddedKafka

        version = kafka_version or DEFAULT_KAFKA_VERSION
        broker = EmbeddedKafka(
            version=version, nodes=nodes, mode=mode, config=config, security=security
        )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def description_of(broker: Any) -> dict[str, Any]:
    d = dict(broker.describe())
    d.setdefault("bootstrap_servers", broker.bootstrap_servers)
    return d


def fault_runner(broker: KafkaProvider) -> Any:
    """A ``(action, node) -> None`` performing nemesis actions on ``broker``, or ``None`` when the
    broker was not started by kgc (then a sequence with faults refuses to run, saying why)."""
    if not broker.can_inject_faults:
        return None
    actions = {
        "kill": broker.kill,
        "pause": broker.pause,
        "resume": broker.resume,
        "restart": broker.restart,
    }

    def perform(action: str, node: int) -> None:
        if action not in actions:
            raise ValueError(
                f"unknown nemesis action {action!r}; expected one of {sorted(actions)}"
            )
        actions[action](node)

    return perform
