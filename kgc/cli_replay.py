"""``kgc replay TRACE… [--bootstrap-server …]``: re-send saved traces to a broker and the model.

Each trace's command sequence (requests and ticks, in order) is sent again on a fresh group with
the suite's prefix; every response is checked against the model as in the live suite. Per trace:
FIXED (it failed when recorded and now passes), STILL FAILING, PASSES (it passed and still does) or
NOW FAILING. All traces are loaded before anything is sent: a bad file stops the run with one line
and nothing is written. ``--save DIR`` keeps each replay's own trace (never over an existing file).

Traces with nemesis faults (the fault-mixed suite, ``kgc.conformance.fault_suite``) are replayed
on an embedded cluster of the recorded shape (version, mode, node count, broker settings) that
this command starts and stops, with the same faults at the same steps, on a group the same node
coordinates when the replay starts; against ``--bootstrap-server`` they are refused (exit 2):
kgc never injects faults into a broker it did not start.
"""

from __future__ import annotations

import argparse
import secrets
import time

from kgc.cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", nargs="+", help="trace files (.json/.jsonl) or folders of them")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-server", help="replay against a broker you run")
    where.add_argument(
        "--kafka-version", help="embedded Apache Kafka version (default: the trace's)"
    )
    p.add_argument("--mode", choices=("kraft", "zookeeper"), default=None)
    p.add_argument("--save", default=None, help="folder to save each replay's trace in")
    p.add_argument("--verbose", "-v", action="store_true", help="print failing replays' steps")


def replay_one(broker, cluster, trace, *, group_prefix: str = "kgc-replay-"):  # noqa: ANN001
    """Replay one trace on a fresh group; returns (engine, new trace)."""
    from kgc.conformance.broker_target import BrokerTarget
    from kgc.conformance.session import description_of, fault_runner
    from kgc.engine.loop import Engine
    from kgc.engine.registry import model_from_manifest
    from kgc.engine.traces import Trace, new_manifest, result_of
    from kgc.model.checker import CheckerConfig

    description = description_of(broker)
    group_id = f"{group_prefix}{secrets.token_hex(4)}"
    known = {"early_ms", "late_ms", "latency_bound_ms", "max_states"}
    cfg = CheckerConfig(
        **{k: v for k, v in (trace.manifest.get("checker") or {}).items() if k in known}
    )
    target = BrokerTarget(cluster, group_id, description=description)
    engine = Engine(target, model_from_manifest(trace.manifest), checker_config=cfg)
    try:
        engine.run(
            trace.commands_with_faults(), stop_at_divergence=True, faults=fault_runner(broker)
        )
    finally:
        target.close()
    manifest = new_manifest(
        target=description,
        group_id=group_id,
        seed=trace.manifest.get("seed"),
        profile="replay",
        scenario=trace.manifest.get("scenario", "replay"),
        model=trace.manifest.get("model", {}),
        checker=trace.manifest.get("checker", {}),
    )
    manifest["replay_of"] = trace.manifest.get("trace_id")
    new = Trace(
        manifest=manifest, events=engine.events, extras=engine.extras, result=result_of(engine)
    )
    return engine, new


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.client import Cluster
    from kgc.conformance.session import open_broker
    from kgc.engine.traces import TraceError, load_many, render, save

    try:
        loaded = load_many(args.traces)
    except TraceError as exc:
        raise UserError(str(exc)) from None
    if not loaded:
        raise UserError("no trace files found in " + ", ".join(args.traces))
    version = args.kafka_version
    if not args.bootstrap_server and version is None:
        versions = {t.manifest.get("target", {}).get("version") for _, t in loaded}
        versions.discard(None)
        versions.discard("unknown")
        if len(versions) > 1:
            raise UserError(
                f"traces were recorded against several versions ({', '.join(sorted(versions))}); "
                "replay them separately or pass --kafka-version"
            )
        version = versions.pop() if versions else None
    faulty = [(p, t) for p, t in loaded if _has_faults(t)]
    if faulty:
        if args.bootstrap_server:
            raise UserError(
                f"{faulty[0][0]} injects faults (kill/pause/restart); kgc injects faults only "
                "into a cluster it starts: drop --bootstrap-server"
            )
        if len(faulty) != len(loaded):
            raise UserError("replay traces with faults and traces without them separately")
        return _replay_with_faults(args, faulty)
    failing = 0
    with open_broker(
        bootstrap_server=args.bootstrap_server, kafka_version=version, mode=args.mode
    ) as broker:
        cluster = Cluster(broker.bootstrap_servers, client_id="kgc-replay")
        try:
            from kgc.properties.machine import TOPIC_PARTITIONS

            for path, trace in loaded:
                topic = _topic_of(trace)
                if topic:
                    cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
                engine, new = replay_one(broker, cluster, trace)
                now_ok = _report(path, trace, engine)
                failing += 0 if now_ok else 1
                if not now_ok and args.verbose:
                    print(render(new))
                if args.save:
                    print(
                        f"              saved {save(new, f'{args.save}/{path.stem}.replay.json')}"
                    )
        finally:
            cluster.close()
    print(f"{len(loaded) - failing} passed, {failing} failed")
    return 1 if failing else 0


def _report(path, trace, engine) -> bool:  # noqa: ANN001
    """Print the replay's verdict line (FIXED / STILL FAILING / PASSES / NOW FAILING, against the
    verdict the trace recorded); True if the replay passed."""
    was = (trace.result or {}).get("verdict", "unrecorded")
    now_ok = engine.divergence is None
    label = {
        (True, "divergence"): "FIXED",
        (False, "divergence"): "STILL FAILING",
        (True, "pass"): "PASSES",
        (False, "pass"): "NOW FAILING",
    }.get((now_ok, was), "PASSES" if now_ok else "FAILING")
    extra = "" if now_ok else f" at step {engine.divergence.event.step}: {engine.divergence.reason}"
    print(f"{label:13} {path}{extra}")
    return now_ok


def _topic_of(trace) -> str | None:  # noqa: ANN001
    for c in trace.commands:
        for o in getattr(c, "offsets", ()) or getattr(c, "partitions", ()) or ():
            return o.topic
    return None


def _has_faults(trace) -> bool:  # noqa: ANN001
    return any(e.kind == "fault" for e in trace.events)


def _shape(trace) -> tuple[str, str, int, dict]:  # noqa: ANN001
    """(version, mode, nodes, broker settings) of the cluster a trace was recorded on."""
    from kgc.conformance.broker import RESERVED_KEYS

    t = trace.manifest.get("target") or {}
    version = t.get("version")
    nodes = t.get("nodes")
    if not isinstance(version, str) or not isinstance(nodes, int):
        raise UserError(
            "field 'manifest.target': a trace with faults must name the cluster's version and "
            "node count; re-record it with this kgc"
        )
    config = {k: v for k, v in (t.get("config") or {}).items() if k not in RESERVED_KEYS}
    return version, str(t.get("mode") or "kraft"), nodes, config


def _replay_with_faults(args, loaded) -> int:  # noqa: ANN001
    from kgc.conformance.broker import EmbeddedKafka
    from kgc.conformance.nemesis import fault_steps
    from kgc.engine.traces import render, save

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
            engine, new = replay_faulty(cluster, trace)
            now_ok = _report(path, trace, engine)
            failing += 0 if now_ok else 1
            same = fault_steps(new.events) == fault_steps(trace.events)
            faults = ", ".join(f"{a} {n}@{s}" for s, a, n in fault_steps(new.events))
            print(
                f"              faults: {faults or 'none'}" + ("" if same else " (NOT as recorded)")
            )
            if not now_ok and args.verbose:
                print(render(new))
            if args.save:
                print(f"              saved {save(new, f'{args.save}/{path.stem}.replay.json')}")
    finally:
        cluster.stop()
    print(f"{len(loaded) - failing} passed, {failing} failed")
    return 1 if failing else 0


def replay_faulty(broker, trace):  # noqa: ANN001
    """Replay a fault-mixed trace on ``broker`` (a cluster kgc started): a fresh group the same
    node coordinates, the same commands, the same faults at the same steps (each followed by the
    suite's settle wait). Returns (engine, new trace)."""
    from kgc.conformance.brokerconfig import facts
    from kgc.conformance.client import Cluster
    from kgc.conformance.fault_suite import FailoverBrokerTarget, settle, settling_runner, warm_up
    from kgc.conformance.nemesis import Nemesis
    from kgc.conformance.session import description_of
    from kgc.engine.loop import Engine, FaultStep
    from kgc.engine.registry import build_cluster, cluster_manifest
    from kgc.engine.traces import Trace, new_manifest, result_of
    from kgc.model.checker import CheckerConfig
    from kgc.properties.machine import TOPIC_PARTITIONS

    record = trace.manifest.get("model") or {}
    if record.get("name") != "ClusterGroupModel":
        raise UserError(
            f"field 'manifest.model.name': {record.get('name')!r}: only fault-mixed suite traces "
            "(ClusterGroupModel) replay with faults here; failover-driver traces replay with "
            "GroupDriver.replay"
        )
    want = record.get("coordinator")
    nemesis = Nemesis(broker)
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-replay")
    engine = None
    try:
        description = {**description_of(broker), **facts(cluster)}
        leaders = description["offsets_partition_leaders"]
        if want is not None and want not in leaders:
            # a node restarted by an earlier fault leads nothing until a preferred-leader
            # election (no automatic rebalance on the fault clusters): ask for one
            leaders = _lead_again(cluster, want)
            description = {**description_of(broker), **facts(cluster)}
        partitions = len(leaders)
        group_id = _group_on(want, leaders, partitions)
        # the group's partition led, fully in sync and loaded, as the suite starts an example
        # (an election just now, or a node healed by an earlier replay, may still be settling)
        settle(cluster, group_id, partitions, set(), coordinator_hit=True)
        warm_up(cluster, group_id, partitions)
        topic = _topic_of(trace)
        if topic:
            cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        target = FailoverBrokerTarget(cluster, group_id, description=description, nemesis=nemesis)
        model_record = cluster_manifest(description, target.coordinator_id)
        known = {"early_ms", "late_ms", "latency_bound_ms", "max_states"}
        cfg = CheckerConfig(
            **{k: v for k, v in (trace.manifest.get("checker") or {}).items() if k in known}
        )
        engine = Engine(target, build_cluster(model_record, group_id), checker_config=cfg)
        runner = settling_runner(nemesis, cluster, group_id, partitions)
        try:
            for c in trace.commands_with_faults():
                if isinstance(c, FaultStep):
                    engine.inject(c, runner)
                elif c.type == "Tick" or not target.in_flight(c.client):
                    engine.execute(c)
                else:
                    engine._drain(c.client)
                    engine.execute(c)
                if engine.divergence is not None:
                    break
        finally:
            target.close()
    finally:
        try:
            nemesis.heal()
        finally:
            cluster.close()
    manifest = new_manifest(
        target=description,
        group_id=group_id,
        seed=trace.manifest.get("seed"),
        profile="replay",
        scenario=trace.manifest.get("scenario", "replay"),
        model=model_record,
        checker=trace.manifest.get("checker", {}),
    )
    manifest["replay_of"] = trace.manifest.get("trace_id")
    new = Trace(
        manifest=manifest, events=engine.events, extras=engine.extras, result=result_of(engine)
    )
    return engine, new


def _lead_again(cluster, node: int, timeout_s: float = 30.0) -> list[int]:  # noqa: ANN001
    """Preferred-leader elections on ``__consumer_offsets`` until ``node`` leads a partition;
    the partitions' leaders then."""
    from kgc.conformance.brokerconfig import facts

    deadline = time.monotonic() + timeout_s
    while True:
        cluster.elect_preferred_leaders("__consumer_offsets")
        leaders = list(facts(cluster)["offsets_partition_leaders"])
        if node in leaders or time.monotonic() > deadline:
            return leaders
        time.sleep(1.0)


def _group_on(node, leaders, partitions: int) -> str:  # noqa: ANN001
    """A fresh ``kgc-replay-…`` group id whose ``__consumer_offsets`` partition ``node`` leads."""
    from kgc.model.coordinator import partition_for

    for _ in range(10_000):
        group_id = f"kgc-replay-{secrets.token_hex(4)}"
        if node is None or leaders[partition_for(group_id, partitions)] == node:
            return group_id
    raise UserError(f"node {node} leads no __consumer_offsets partition on this cluster")
