"""Scripted scenarios on the session broker: engines on fresh groups of one workload, each
answer checked by the workload's model as the search's are
(``tests/migration/test_migration_scenarios.py``,
``tests/consumer/test_consumer_regex_scenarios.py``)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.conformance.wire.negotiate import negotiate_with
from kgc.engine.loop import Engine
from kgc.engine.registry import build, model_manifest
from kgc.engine.traces import Trace, result_of
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


@dataclass(frozen=True)
class Classic:
    """What a scripted classic history is written for: its group, its topics (created, each of
    ``partitions`` partitions), and the broker's initial rebalance delay."""

    group_id: str
    topics: tuple[str, ...]
    delay_ms: int
    record: dict[str, Any]

    @property
    def topic(self) -> str:
        return self.topics[0]


def classic_run(
    broker: Any,
    prefix: str,
    history: Callable[[Classic], list[Any]],
    *,
    topics: tuple[str, ...] = ("topic",),
    partitions: int = TOPIC_PARTITIONS,
    client_id: str = "kgc-test",
    security: Any = None,
    admin: Any = None,
) -> tuple[Engine, Trace, list[Any]]:
    """Run ``history`` (given its :class:`Classic`) on a fresh ``prefix…`` group of ``broker``
    with the classic model checking every answer; return the engine, the trace (for ``render``
    in a failing assertion) and the broker's answers in order. ``security``: the run's principal
    (``ClientSecurity``); with ``admin`` (a secured broker's super user) the settings are read as
    it and the history's ACL actions (``FaultStep``) are carried out as it
    (``conformance/wire/acls.py``) on the first topic."""
    cluster = Cluster(broker.bootstrap_servers, client_id=client_id, security=security)
    if admin is None:
        description = {**description_of(broker), **facts(cluster)}
    else:
        with Cluster(broker.bootstrap_servers, security=admin) as reader:
            description = {**description_of(broker), **facts(reader)}
        description["authorization"] = {
            "principal": security.principal,
            "foreign_group_refused": True,
            "acl_actions": True,
        }
    group_id = f"{prefix}{secrets.token_hex(4)}"
    names = tuple(f"{group_id}-{t}" for t in topics)
    for name in names:
        cluster.create_topic(name, partitions=partitions)
    if admin is not None:
        from kgc.conformance.wire.acls import AclAdmin

        cluster.acl_admin = AclAdmin(
            broker.bootstrap_servers,
            admin=admin,
            principal=security.principal,
            topic=names[0],
            poller=cluster.poller,
        )
    config = description.get("group_config") or {}
    delay_ms = int(config.get("group.initial.rebalance.delay.ms", 0))
    record = model_manifest(description)
    target = BrokerTarget(cluster, group_id, description=description)
    engine = Engine(target, build(record, group_id))

    def act(action: str, node: int) -> None:
        target.alter_acl(action)

    try:
        engine.run(
            history(Classic(group_id, names, delay_ms, record)),
            faults=act if admin is not None else None,
        )
    finally:
        target.close()
        cluster.close()
    trace = Trace(
        manifest={"target": description, "group_id": group_id},
        events=engine.events,
        extras=engine.extras,
        result=result_of(engine),
    )
    answers = [e.response for e in engine.events if isinstance(e, Receive)]
    return engine, trace, answers


def opt_in_search(
    broker: Any, opt_in: tuple[str, ...], *, prefix: str, examples: int, steps: int, seed: int
) -> Any:
    """The classic machine's search on ``broker`` with the ``opt_in`` request types drawn too
    (each must be negotiated), on fresh ``prefix…`` groups and a topic of its own, unshrunk;
    returns its :class:`~kgc.properties.machine.SuiteContext` (coverage, counts)."""
    from kgc.conformance.wire.broker_target import BrokerTarget
    from kgc.properties.machine import SuiteContext, machine_for, search, time_scale_for

    cluster = Cluster(broker.bootstrap_servers, client_id=f"{prefix}test")
    try:
        description = {**description_of(broker), **facts(cluster)}
        record = model_manifest(description)
        negotiated = negotiate_with(cluster, PROFILES[record["profile"]], opt_in)
        assert set(opt_in) <= set(negotiated.versions), negotiated.unsupported
        run = f"{prefix}{secrets.token_hex(3)}"
        topic = f"{run}-topic"
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        counter = iter(range(10**6))
        ctx = SuiteContext(
            open_target=lambda gid: BrokerTarget(cluster, gid, description=description),
            new_model=lambda gid: build(record, gid),
            versions=negotiated.versions,
            opt_in=frozenset(opt_in),
            topic=topic,
            time_scale=time_scale_for(description.get("group_config") or {}),
        )
        ctx.new_group_id = lambda: f"{run}-{next(counter)}"
        search(machine_for(ctx), examples=examples, steps=steps, seed=seed, shrink=False)
    finally:
        cluster.close()
    return ctx
