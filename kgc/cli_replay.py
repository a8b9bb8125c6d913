"""``kgc replay TRACE… [--bootstrap-server …]``: re-send saved traces to a broker and the model.

Each trace's command sequence (requests and ticks, in order) is sent again on a fresh group with
the suite's prefix; every response is checked against the model as in the live suite. Per trace:
FIXED (it failed when recorded and now passes), STILL FAILING, PASSES (it passed and still does),
NOW FAILING, or KNOWN KAFKA BUG (only a Kafka bug the model knows by name explains the broker:
``model/known_bugs.py``; not a failure). All traces are loaded before anything is sent: a bad
file stops the run with one line and nothing is written. ``--save DIR`` keeps each replay's own
trace (never over an existing file).

Traces with nemesis faults (the fault-mixed suite, ``kgc.conformance.drivers.fault_suite``) are
replayed on an embedded cluster of the recorded shape (version, mode, node count, broker settings)
that this command starts and stops, with the same faults at the same steps, on a group the same node
coordinates when the replay starts; against ``--bootstrap-server`` they are refused (exit 2):
kgc never injects faults into a broker it did not start.
"""

from __future__ import annotations

import argparse
from typing import Any

from kgc.cli import UserError, add_command_config, client_security_from, load_traces
from kgc.conformance.brokers.implementations import IMPLEMENTATIONS as LAUNCHABLE


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", nargs="+", help="trace files (.json/.jsonl) or folders of them")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-server", help="replay against a broker you run")
    where.add_argument(
        "--kafka-version", help="embedded Apache Kafka version (default: the trace's)"
    )
    where.add_argument(
        "--implementation",
        choices=LAUNCHABLE,
        default=None,
        help="a broker kgc launches (default: the one the traces were recorded against, "
        "if kgc can launch it; else the embedded Apache Kafka)",
    )
    p.add_argument("--mode", choices=("kraft", "zookeeper"), default=None)
    add_command_config(p)
    p.add_argument("--save", default=None, help="folder to save each replay's trace in")
    p.add_argument("--verbose", "-v", action="store_true", help="print failing replays' steps")


def replay_broker(
    loaded: list[tuple[Any, Any]],
    *,
    bootstrap_server: str | None,
    kafka_version: str | None,
    implementation: str | None,
) -> tuple[str | None, str | None]:
    """The broker a replay launches, as ``(implementation, Apache Kafka version)``: what the
    user named, else the implementation the traces were recorded against when kgc launches it,
    and the Apache Kafka version they were recorded against (None: the pinned release). A trace
    of another implementation names no Apache Kafka version: replayed on Apache Kafka, it runs
    on the pinned release. Traces of several implementations or versions are refused."""
    version = kafka_version
    if bootstrap_server is None and version is None and implementation is None:
        recorded = {t.manifest.get("target", {}).get("implementation") for _, t in loaded}
        launchable = recorded & set(LAUNCHABLE[1:])
        if launchable and len(recorded) > 1:
            raise UserError(
                f"traces were recorded against several implementations "
                f"({', '.join(sorted(map(str, recorded)))}); replay them separately"
            )
        implementation = launchable.pop() if launchable else None
    if implementation not in (None, "apache-kafka"):
        version = ""  # not an Apache Kafka version: the launcher knows its own
    if bootstrap_server is None and version is None:
        # the Apache Kafka version the traces were recorded against: another implementation's
        # version (kfake's module version, the mock's librdkafka) is none, and such traces are
        # replayed on the pinned release
        versions = {
            t.manifest.get("target", {}).get("version")
            for _, t in loaded
            if t.manifest.get("target", {}).get("implementation") in (None, "apache-kafka")
        }
        versions.discard(None)
        versions.discard("unknown")
        if len(versions) > 1:
            raise UserError(
                f"traces were recorded against several versions ({', '.join(sorted(versions))}); "
                "replay them separately or pass --kafka-version"
            )
        version = versions.pop() if versions else None
    return implementation, version


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.session import open_broker
    from kgc.conformance.drivers.suite import replay_on_broker
    from kgc.conformance.wire.client import Cluster
    from kgc.model.commands import NotModelled

    loaded = load_traces(args.traces)
    implementation, version = replay_broker(
        loaded,
        bootstrap_server=args.bootstrap_server,
        kafka_version=args.kafka_version,
        implementation=args.implementation,
    )
    acting = [(p, t) for p, t in loaded if _acl_actions_only(t)]
    if acting:
        if args.bootstrap_server is not None:
            raise UserError(
                f"{acting[0][0]} denies and allows operations on its principal (ACL actions), "
                "which kgc does as the super user of a secured broker it starts: drop "
                "--bootstrap-server"
            )
        if len(acting) != len(loaded):
            raise UserError("replay traces with ACL actions and traces without them separately")
        return _replay_with_acls(args, loaded, version)
    faulty = [(p, t) for p, t in loaded if _has_faults(t)]
    if faulty:
        if args.bootstrap_server is not None:
            raise UserError(
                f"{faulty[0][0]} injects faults (kill/pause/restart); kgc injects faults only "
                "into a cluster it starts: drop --bootstrap-server"
            )
        if len(faulty) != len(loaded):
            raise UserError("replay traces with faults and traces without them separately")
        return _replay_with_faults(args, faulty)
    failing = 0
    client_security = client_security_from(args)
    with open_broker(
        bootstrap_server=args.bootstrap_server,
        client_security=client_security,
        kafka_version=version or None,
        mode=args.mode,
        implementation=implementation,
    ) as broker:
        cluster = Cluster(
            broker.bootstrap_servers, client_id="kgc-replay", security=client_security
        )
        try:
            for path, trace in loaded:
                try:
                    done = replay_on_broker(broker, cluster, trace)
                except NotModelled as exc:
                    raise UserError(f"{path}: a request its model does not judge: {exc}") from None
                failing += _report(args, path, trace, done)
        finally:
            cluster.close()
    print(f"{len(loaded) - failing} passed, {failing} failed")
    return 1 if failing else 0


def _report(args, path, trace, done) -> int:  # noqa: ANN001
    """Print a replay's verdict line (and for a fault replay, its faults), its steps if it failed
    and ``--verbose``, where ``--save`` put it; 1 if it failed, else 0."""
    from kgc.conformance.faults.nemesis import fault_steps
    from kgc.engine.traces import render, save

    div = done.engine.divergence
    hit = done.engine.known_bug
    extra = "" if div is None else f" at step {div.event.step}: {div.reason}"
    if div is None and hit is not None:
        bug = hit.world.bug
        extra = (
            f" from step {done.trace.events[hit.since].step}: {bug.key}, Kafka {bug.releases} "
            f"(fixed in {bug.fixed_in}; proof: {bug.proof})"
        )
    print(f"{done.verdict:13} {path}{extra}")
    if _has_faults(trace):
        same = fault_steps(done.trace.events) == fault_steps(trace.events)
        faults = ", ".join(f"{a} {n}@{s}" for s, a, n in fault_steps(done.trace.events))
        print(f"              faults: {faults or 'none'}" + ("" if same else " (NOT as recorded)"))
    if not done.ok and args.verbose:
        print(render(done.trace))
    if args.save:
        print(f"              saved {save(done.trace, f'{args.save}/{path.stem}.replay.json')}")
    return 0 if done.ok else 1


def _has_faults(trace) -> bool:  # noqa: ANN001
    return any(e.kind == "fault" for e in trace.events)


def _acl_actions_only(trace) -> bool:  # noqa: ANN001
    """Whether every fault event of ``trace`` is an ACL action (and it has one)."""
    from kgc.model.classic.authorization import acl_change

    actions = [e.action for e in trace.events if e.kind == "fault"]
    return bool(actions) and all(acl_change(a) is not None for a in actions)


def _replay_with_acls(args, loaded, version: str | None) -> int:  # noqa: ANN001
    """Replay on a secured broker kgc starts (the recorded kind, else SASL_SSL) as its limited
    principal, the ACL actions carried out as its super user (``conformance/wire/acls.py``)."""
    from kgc.conformance.brokers import secure
    from kgc.conformance.brokers.session import open_broker
    from kgc.conformance.drivers.suite import replay_on_broker
    from kgc.conformance.wire.acls import AclAdmin
    from kgc.conformance.wire.client import Cluster

    kinds = {(t.manifest.get("target") or {}).get("security") or "sasl_ssl" for _, t in loaded}
    if len(kinds) > 1:
        raise UserError("traces were recorded on differently secured brokers; replay them apart")
    failing = 0
    with open_broker(kafka_version=version, mode=args.mode, security=kinds.pop()) as broker:
        user = broker.security_setup.client(secure.USER, "SCRAM-SHA-512")
        cluster = Cluster(broker.bootstrap_servers, client_id="kgc-replay", security=user)
        try:
            for path, trace in loaded:
                cluster.acl_admin = AclAdmin(
                    broker.bootstrap_servers,
                    admin=broker.security,
                    principal=user.principal,
                    topic="",  # named by ``replay_on_broker``
                    poller=cluster.poller,
                )
                failing += _report(args, path, trace, replay_on_broker(broker, cluster, trace))
                cluster.acl_admin.close()
                cluster.acl_admin = None
        finally:
            cluster.close()
    print(f"{len(loaded) - failing} passed, {failing} failed")
    return 1 if failing else 0


def _shape(trace) -> tuple[str, str, int, dict]:  # noqa: ANN001
    """(version, mode, nodes, broker settings) of the cluster a trace was recorded on."""
    from kgc.conformance.artifacts.releases import default_mode
    from kgc.conformance.brokers.embedded import RESERVED_KEYS

    t = trace.manifest.get("target") or {}
    version = t.get("version")
    nodes = t.get("nodes")
    if not isinstance(version, str) or not isinstance(nodes, int):
        raise UserError(
            "field 'manifest.target': a trace with faults must name the cluster's version and "
            "node count; re-record it with this kgc"
        )
    config = {k: v for k, v in (t.get("config") or {}).items() if k not in RESERVED_KEYS}
    return version, str(t.get("mode") or default_mode(version)), nodes, config


def _replay_with_faults(args, loaded) -> int:  # noqa: ANN001
    from kgc.conformance.brokers.embedded import EmbeddedKafka
    from kgc.conformance.drivers.fault_suite import replay_faulty

    shapes = {_shape(t)[:3] for _, t in loaded}
    if len(shapes) > 1:
        raise UserError(
            "traces were recorded on clusters of different shapes; replay them separately"
        )
    version, mode, nodes, config = _shape(loaded[0][1])
    if args.kafka_version:
        version = args.kafka_version
    failing = 0
    cluster = EmbeddedKafka(version, nodes=nodes, mode=args.mode or mode, config=config)
    cluster.start(timeout_s=240)
    try:
        for path, trace in loaded:
            failing += _report(args, path, trace, replay_faulty(cluster, trace))
    finally:
        cluster.stop()
    print(f"{len(loaded) - failing} passed, {failing} failed")
    return 1 if failing else 0
