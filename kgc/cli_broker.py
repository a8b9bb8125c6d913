"""``kgc broker start|status|stop``: an embedded Apache Kafka that outlives the command.

``fetch`` downloads a version's jars into the cache (``$KGC_CACHE_DIR`` or ``~/.cache/kgc``);
``start`` brings up a detached :class:`~kgc.conformance.brokers.embedded.EmbeddedKafka`, prints its
bootstrap servers as the only line on stdout and returns with the JVMs running; ``status`` reads
the state files (``$KGC_STATE_DIR`` or ``~/.cache/kgc/run``) and also lists kgc-started JVMs no
state file accounts for; ``stop`` kills a named broker (or ``--all``) and removes its state and
data.
"""

from __future__ import annotations

import argparse
import json
import sys

from kgc.cli import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    start = sub.add_parser(
        "start", help="start a detached embedded broker; print bootstrap servers"
    )
    which = start.add_mutually_exclusive_group()
    which.add_argument("--kafka-version", default=None, help="Apache Kafka version (default 4.3.1)")
    which.add_argument(
        "--implementation",
        default=None,
        help="a Kafka-compatible broker kgc launches instead of Apache Kafka: tansu, kfake or "
        "librdkafka-mock (one node on loopback; stop it with kgc broker stop)",
    )
    start.add_argument("--nodes", type=int, default=1, help="number of nodes (default 1)")
    start.add_argument(
        "--mode",
        choices=("kraft", "zookeeper"),
        default=None,
        help="metadata mode (default: kraft from 3.3 on, zookeeper before)",
    )
    start.add_argument(
        "--offsets-partitions", type=int, default=10, help="offsets.topic.num.partitions"
    )
    start.add_argument("--name", default="default", help="instance name (default 'default')")
    start.add_argument(
        "--port", type=int, default=None, help="PLAINTEXT port of node 1 (node k gets PORT+k-1)"
    )
    start.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="broker setting override (repeatable)",
    )
    start.add_argument(
        "--security",
        choices=("sasl_ssl", "ssl", "sasl_plaintext"),
        default=None,
        help="secure the client listener (TLS and/or SASL: PLAIN, SCRAM, OAUTHBEARER) and turn "
        "on ACLs; writes client.properties for the super user kgc-admin and the limited "
        "kgc-user (KRaft, Kafka 3.5 on)",
    )
    start.add_argument("--heap-mb", type=int, default=512, help="JVM heap per node (default 512)")
    start.add_argument("--timeout", type=float, default=120, help="seconds to wait for ready")

    fetch = sub.add_parser(
        "fetch", help="download a Kafka version's jars into kgc's cache; print the jar folder"
    )
    fetch.add_argument(
        "versions", nargs="*", metavar="VERSION", help="Apache Kafka versions (default 4.3.1 3.9.2)"
    )
    fetch.add_argument(
        "--kafka-version", action="append", default=[], help="same as VERSION (repeatable)"
    )

    status = sub.add_parser("status", help="list running kgc brokers")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.add_argument(
        "--strays",
        action="store_true",
        help="list only kgc JVMs nobody will stop (owner gone, no state file); exit 1 if any",
    )

    stop = sub.add_parser("stop", help="stop a detached broker")
    which = stop.add_mutually_exclusive_group()
    which.add_argument("--name", default="default", help="instance name (default 'default')")
    which.add_argument(
        "--all",
        action="store_true",
        help="stop every detached broker and every orphaned kgc JVM",
    )


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.errors import KgcError

    try:
        actions = {"start": _start, "fetch": _fetch, "status": _status, "stop": _stop}
        return actions[args.action](args)
    except KgcError as exc:
        raise UserError(str(exc)) from None


def _start(args: argparse.Namespace) -> int:
    from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, ZOOKEEPER_KAFKA_VERSION
    from kgc.conformance.brokers import runstate
    from kgc.conformance.brokers.embedded import EmbeddedKafka

    if not args.name or not all(c.isalnum() or c in "-_." for c in args.name):
        raise UserError(f"bad --name {args.name!r}; use letters, digits, '-', '_' or '.'")
    if args.nodes < 1:
        raise UserError(f"--nodes must be at least 1, got {args.nodes}")
    config = {}
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"bad --config {item!r}; use KEY=VALUE, e.g. group.max.size=10")
        config[key.strip()] = value.strip()
    existing = runstate.load(args.name)
    if existing is not None:
        if existing.alive_pids:
            raise UserError(
                f"a broker named {args.name!r} already runs at {existing.bootstrap_servers}; "
                f"stop it with 'kgc broker stop --name {args.name}' or pick another --name"
            )
        runstate.stop_detached(existing)  # stale state file: clean it up
    if args.implementation not in (None, "apache-kafka"):
        return _start_implementation(args)
    default_version = ZOOKEEPER_KAFKA_VERSION if args.mode == "zookeeper" else DEFAULT_KAFKA_VERSION
    ports = None
    if args.port is not None:
        ports = [args.port + i for i in range(args.nodes)]
        if not all(0 < p < 65536 for p in ports):
            raise UserError(f"--port {args.port} is out of range; use 1..{65536 - args.nodes}")
    broker = EmbeddedKafka(
        version=args.kafka_version or default_version,
        nodes=args.nodes,
        mode=args.mode,
        config=config,
        heap_mb=args.heap_mb,
        offsets_partitions=args.offsets_partitions,
        ports=ports,
        name=args.name,
        detached=True,
        security=args.security,
    )
    broker.start(timeout_s=args.timeout)
    print(
        f"kgc broker: {args.name!r} (Apache Kafka {broker.version}, {broker.mode}, "
        f"{args.nodes} node(s)) ready in {broker.start_s:.1f} s; "
        f"stop with 'kgc broker stop --name {args.name}'",
        file=sys.stderr,
    )
    setup = broker.security_setup
    if setup is not None:
        print(
            f"kgc broker: {setup.kind} with ACLs; client settings for --command-config: "
            f"{setup.properties_path('kgc-user')} (limited: kgc-* topics, groups and "
            f"transactional ids) and {setup.properties_path('kgc-admin')} (super user)",
            file=sys.stderr,
        )
    print(broker.bootstrap_servers)
    return 0


def _start_implementation(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.implementations import start_detached

    if args.nodes != 1 or args.mode or args.config or args.port is not None or args.security:
        raise UserError(
            f"--implementation {args.implementation} runs one node on loopback; drop --nodes, "
            "--mode, --config, --port and --security"
        )
    state = start_detached(args.implementation, args.name, timeout_s=max(args.timeout, 600))
    print(
        f"kgc broker: {args.name!r} ({args.implementation} {state['version']}) ready; "
        f"stop with 'kgc broker stop --name {args.name}'",
        file=sys.stderr,
    )
    print(state["bootstrap_servers"])
    return 0


def _product(state: dict) -> str:
    """``Apache Kafka`` or the implementation a detached broker's state file names."""
    return str(state.get("implementation") or "Apache Kafka")


def _fetch(args: argparse.Namespace) -> int:
    from kgc.conformance.artifacts.maven import (
        DEFAULT_KAFKA_VERSION,
        ZOOKEEPER_KAFKA_VERSION,
        find_java,
        resolve_kafka,
    )

    find_java()
    versions = [*args.versions, *args.kafka_version]
    for version in versions or [DEFAULT_KAFKA_VERSION, ZOOKEEPER_KAFKA_VERSION]:
        print(resolve_kafka(version))
    return 0


def _status(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers import runstate

    brokers = runstate.list_detached()
    strays = runstate.strays()
    if args.strays:
        orphans = [s for s in strays if not s["owner_alive"]]
        for s in orphans:
            print(
                f"orphaned JVM pid {s['pid']} instance={s['instance']} {s['main']}: "
                "no owner or state file ('kgc broker stop --all' kills it)"
            )
        if not orphans:
            print("no stray kgc JVMs")
        return 1 if orphans else 0
    if args.json:
        json.dump(
            {
                "brokers": [
                    {
                        "name": b.name,
                        "implementation": _product(b.state),
                        "version": b.state.get("version"),
                        "mode": b.state.get("mode"),
                        "bootstrap_servers": b.bootstrap_servers,
                        "alive_pids": list(b.alive_pids),
                        "dead_pids": list(b.dead_pids),
                        "workdir": b.state.get("workdir"),
                    }
                    for b in brokers
                ],
                "strays": strays,
            },
            sys.stdout,
            sort_keys=True,
        )
        sys.stdout.write("\n")
        return 0
    if not brokers and not strays:
        print("no kgc brokers running")
        return 0
    for b in brokers:
        total = len(b.alive_pids) + len(b.dead_pids)
        health = "running" if not b.dead_pids else f"DEGRADED ({len(b.dead_pids)} of {total} dead)"
        if not b.alive_pids:
            health = "dead (stale state; 'kgc broker stop --name NAME' cleans it)"
        print(
            f"{b.name}: {_product(b.state)} {b.state.get('version')} {b.state.get('mode')} "
            f"{b.bootstrap_servers} {health} pids={','.join(map(str, b.alive_pids)) or '-'}"
        )
    for s in strays:
        if s["owner_alive"] and s["owner"] == 0:
            print(
                f"detached JVM pid {s['pid']} instance={s['instance']} {s['main']}: "
                f"recorded in {s['state_file']} (another KGC_STATE_DIR)"
            )
        elif s["owner_alive"]:
            print(
                f"attached JVM pid {s['pid']} instance={s['instance']} {s['main']}: "
                f"owned by running pid {s['owner']} (stops with it)"
            )
        else:
            print(
                f"orphaned JVM pid {s['pid']} instance={s['instance']} {s['main']}: "
                "no owner or state file ('kgc broker stop --all' kills it)"
            )
    return 0


def _stop(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers import runstate

    if args.all:
        stopped = []
        for b in runstate.list_detached():
            stopped += runstate.stop_detached(b)
        orphans = [s for s in runstate.strays() if not s["owner_alive"]]
        stopped += runstate.terminate(
            [s["pid"] for s in orphans], {s["pid"]: s["instance"] for s in orphans}
        )
        print(f"kgc broker: stopped {len(stopped)} JVM(s)", file=sys.stderr)
        return 0
    broker = runstate.load(args.name)
    if broker is None:
        raise UserError(
            f"no broker named {args.name!r} (see 'kgc broker status'; --all stops every one)"
        )
    stopped = runstate.stop_detached(broker)
    what = "JVM(s)" if not broker.state.get("implementation") else "process(es)"
    print(f"kgc broker: stopped {args.name!r} ({len(stopped)} {what})", file=sys.stderr)
    return 0
