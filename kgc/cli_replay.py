"""``kgc replay TRACE… [--bootstrap-server …]``: re-send saved traces to a broker and the model.

Each trace's command sequence (requests and ticks, in order) is sent again on a fresh group with
the suite's prefix; every response is checked against the model as in the live suite. Per trace:
FIXED (it failed when recorded and now passes), STILL FAILING, PASSES (it passed and still does) or
NOW FAILING. All traces are loaded before anything is sent: a bad file stops the run with one line
and nothing is written. ``--save DIR`` keeps each replay's own trace (never over an existing file).
"""

from __future__ import annotations

import argparse
import secrets

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
    from kgc.conformance.session import description_of, fault_runner
    from kgc.conformance.target import BrokerTarget
    from kgc.model.checker import CheckerConfig
    from kgc.properties.engine import Engine
    from kgc.properties.models import model_from_manifest
    from kgc.properties.traces import Trace, new_manifest, result_of

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
    from kgc.properties.traces import TraceError, load_many, render, save

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
                was = (trace.result or {}).get("verdict", "unrecorded")
                now_ok = engine.divergence is None
                label = {
                    (True, "divergence"): "FIXED",
                    (False, "divergence"): "STILL FAILING",
                    (True, "pass"): "PASSES",
                    (False, "pass"): "NOW FAILING",
                }.get((now_ok, was), "PASSES" if now_ok else "FAILING")
                failing += 0 if now_ok else 1
                extra = (
                    ""
                    if now_ok
                    else f" at step {engine.divergence.event.step}: {engine.divergence.reason}"
                )
                print(f"{label:13} {path}{extra}")
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


def _topic_of(trace) -> str | None:  # noqa: ANN001
    for c in trace.commands:
        for o in getattr(c, "offsets", ()) or getattr(c, "partitions", ()) or ():
            return o.topic
    return None
