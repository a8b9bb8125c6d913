"""Synthetic trace corpora from the model alone (no broker), at any size, on Spark.

Each trace is what a perfectly conforming broker would have produced: the engine
(``engine/loop.py``) drives a :class:`~kgc.engine.target.ModelTarget` — the reference
model answering on a virtual clock — with commands a seeded random client driver picks from what
each client has learned from its own responses (member id, generation, leadership), the way the
Hypothesis state machine (``properties/machine.py``) does, sometimes deliberately wrong (stale
generation, a stranger's member id). The engine records the history exactly as it records a real
run (``group_state`` on every request, ``latency_ms`` on responses) and checks it, so the
``result`` line is the checker's real verdict; the trace is written by
``engine/traces.py``'s own JSONL writer. Same seed, same trace.

A fraction of traces (``divergence_rate``) get one planted disagreement: after the run, one
recorded response is replaced by a different, plausible one (another error name), and the
history is re-checked with :func:`kgc.model.checker.check` to record its honest verdict. These let
a report show divergence groups at scale.

Targets are labelled ``implementation: kgc-synthetic`` with the Kafka version whose model profile
generated them, so a corpus is never mistaken for broker recordings.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

IMPLEMENTATION = "kgc-synthetic"
VERSIONS = ("4.3.1", "3.9.2")
TOPIC = "kgc-synthetic"
GROUP_CONFIG = {  # what kgc's embedded broker sets (conformance/brokers/embedded.py default_config)
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 500,
    "offsets.topic.num.partitions": 10,
}
ERRORS = (
    "NONE",
    "UNKNOWN_MEMBER_ID",
    "ILLEGAL_GENERATION",
    "REBALANCE_IN_PROGRESS",
    "COORDINATOR_NOT_AVAILABLE",
)


def target_description(version: str) -> dict[str, Any]:
    return {
        "implementation": IMPLEMENTATION,
        "version": version,
        "mode": "model",
        "nodes": 1,
        "config": {k: str(v) for k, v in GROUP_CONFIG.items()},
        "group_config": dict(GROUP_CONFIG),
        "offsets_partition_leaders": [1] * GROUP_CONFIG["offsets.topic.num.partitions"],
        "node_ids": [1],
    }


class _Driver:
    """A seeded random client population; each client acts only on what it has learned."""

    def __init__(self, rng: random.Random, engine: Any) -> None:
        from kgc.model.client_view import ClientView, subscription
        from kgc.properties.machine import PROTOCOL_SETS, REBALANCE_TIMEOUTS_MS, SESSION_TIMEOUTS_MS

        self.rng = rng
        self.engine = engine
        self.views: dict[str, Any] = {}
        for i in range(rng.randint(1, 3)):
            name = f"c{i + 1}"
            session = rng.choice(SESSION_TIMEOUTS_MS)
            self.views[name] = ClientView(
                client=name,
                session_timeout_ms=session,
                rebalance_timeout_ms=max(rng.choice(REBALANCE_TIMEOUTS_MS), session),
                group_instance_id=f"{name}-instance" if rng.random() < 0.2 else None,
                protocols=rng.choice(PROTOCOL_SETS),
                metadata=subscription([TOPIC]),
            )

    def version(self, api: str) -> int:
        from kgc.properties.machine import DEFAULT_VERSIONS, line_versions

        model = getattr(self.engine, "model", None)
        versions = (line_versions(model) if model is not None else {}) or DEFAULT_VERSIONS
        return self.rng.choice(versions[api])

    def learn(self, request: Any, response: Any) -> None:
        v = self.views.get(request.client)
        if v is not None:
            v.learn(response)

    def command(self) -> Any:
        """The next command: which request, its version and choices drawn here; the request
        itself built from what the client knows (``kgc.model.client_view``)."""
        from kgc.model import commands as c
        from kgc.properties.machine import TICKS_MS, assignment_for

        rng = self.rng
        idle = [n for n in self.views if not self.engine.target.in_flight(n)]
        if not idle or rng.random() < 0.18:
            return c.Tick(ms=rng.choice(TICKS_MS))
        v = self.views[rng.choice(idle)]
        kind = rng.choices(
            ("join", "sync", "heartbeat", "commit", "fetch", "describe", "leave", "find"),
            weights=(5 if v.generation_id < 0 else 1.5, 3, 4, 2, 1, 1, 0.6, 0.4),
        )[0]
        if kind == "join":
            version = self.version("JoinGroup")
            fresh = v.generation_id < 0 and rng.random() < 0.5
            return v.join_group(version=version, member_id=c.NO_MEMBER_ID if fresh else None)
        generation = "stale" if rng.random() < 0.15 else "current"
        if kind == "sync":
            assignments = v.assignments(lambda members: assignment_for(members, TOPIC))
            return v.sync_group(
                version=self.version("SyncGroup"), generation=generation, assignments=assignments
            )
        if kind == "heartbeat":
            return v.heartbeat(version=self.version("Heartbeat"), generation=generation)
        if kind == "commit":
            offsets = (
                c.TopicPartitionOffset(topic=TOPIC, partition=0, offset=rng.randint(0, 999)),
            )
            return v.offset_commit(
                version=self.version("OffsetCommit"), offsets=offsets, generation=generation
            )
        if kind == "fetch":
            partitions = (c.TopicPartition(topic=TOPIC, partition=0),)
            return v.offset_fetch(version=self.version("OffsetFetch"), partitions=partitions)
        if kind == "describe":
            return v.describe_groups(version=self.version("DescribeGroups"))
        if kind == "find":
            return v.find_coordinator(version=self.version("FindCoordinator"))
        who = "stranger" if rng.random() < 0.15 else "self"
        if not v.can_leave(who):
            return c.Tick(ms=rng.choice(TICKS_MS))
        return v.leave_group(version=self.version("LeaveGroup"), who=who)


def _plant(trace: Any, rng: random.Random) -> bool:
    """Replace one recorded response's error with another; re-check for the honest verdict."""
    from kgc.engine.registry import model_from_manifest
    from kgc.engine.traces import result_of_divergence
    from kgc.model.checker import CheckerConfig, check
    from kgc.model.commands import OffsetCommitResponse
    from kgc.model.history import Receive

    receives = [  # an OffsetCommitResponse's errors are its partitions'
        i
        for i, e in enumerate(trace.events)
        if isinstance(e, Receive) and not isinstance(e.response, OffsetCommitResponse)
    ]
    if not receives:
        return False
    i = rng.choice(receives)
    event = trace.events[i]
    other = rng.choice([e for e in ERRORS if e != event.response.error])
    trace.events[i] = dataclasses.replace(
        event, response=dataclasses.replace(event.response, error=other)
    )
    config = CheckerConfig.from_manifest(trace.manifest)
    divergence = check(model_from_manifest(trace.manifest), trace.events, config)
    if divergence is None:
        trace.result = {**(trace.result or {}), "verdict": "pass", "divergence": None}
    else:
        trace.result = result_of_divergence(trace, divergence)
    return True


def make_trace(
    seed: int,
    *,
    version: str | None = None,
    divergence_rate: float = 0.0,
    min_steps: int = 8,
    max_steps: int = 24,
) -> Any:
    """One synthetic :class:`~kgc.engine.traces.Trace`, a pure function of its arguments."""
    from kgc.engine.loop import Engine
    from kgc.engine.registry import model_for
    from kgc.engine.target import ModelTarget
    from kgc.engine.traces import Trace, new_manifest, result_of
    from kgc.model.checker import CheckerConfig

    rng = random.Random(seed)
    version = version or VERSIONS[seed % len(VERSIONS)]
    description = target_description(version)
    new_model, model_record = model_for(description)
    group_id = f"kgc-synthetic-{seed}"
    model = new_model(group_id)
    target = ModelTarget(
        model,
        latency_ms=round(rng.uniform(0.3, 4.0), 2),
        description={
            k: description[k] for k in ("implementation", "version", "mode", "nodes", "config")
        },
    )
    checker_config = CheckerConfig()
    engine = Engine(target, new_model(group_id), checker_config=checker_config)
    driver = _Driver(rng, engine)
    for _ in range(rng.randint(min_steps, max_steps)):
        result = engine.execute(driver.command())
        for rid, response in result.received:
            driver.learn(engine.requests[rid], response)
        if result.divergence is not None:  # the model disagreeing with itself: a model bug
            break
    manifest = new_manifest(
        target=target.describe(),
        group_id=group_id,
        seed=seed,
        profile="synthetic",
        scenario="synthetic",
        model=model_record,
        checker={k: v for k, v in dataclasses.asdict(checker_config).items() if k != "max_states"},
    )
    manifest["trace_id"] = f"{seed:016x}"
    manifest["created_at"] = "1970-01-01T00:00:00+00:00"  # reproducible: same seed, same bytes
    trace = Trace(
        manifest=manifest,
        events=list(engine.events),
        extras=list(engine.extras),
        result=result_of(engine),
    )
    if divergence_rate > 0 and rng.random() < divergence_rate:
        _plant(trace, rng)
    return trace


def trace_lines(seed: int, **kwargs: Any) -> list[str]:
    from kgc.engine.traces import dumps_jsonl

    return dumps_jsonl(make_trace(seed, **kwargs)).splitlines()


# --------------------------------------------------------------------------------------- Spark


def _to_rows(kwargs: dict[str, Any]) -> Any:
    """mapInArrow body: seeds in, ``traces`` rows (via the converter's own parser) out."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from kgc.pipeline.convert import parse_lines
        from kgc.pipeline.schema import PARSED
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(PARSED)
        for batch in batches:
            rows = []
            for seed in batch.column(0).to_pylist():
                source = f"synthetic:seed={seed}"
                for kind, row in parse_lines(source, trace_lines(seed, **kwargs)):
                    rows.append({kind: row})
            yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run


def _to_text(kwargs: dict[str, Any]) -> Any:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            lines: list[str] = []
            for seed in batch.column(0).to_pylist():
                lines += trace_lines(seed, **kwargs)
            yield pa.RecordBatch.from_pydict({"value": lines})

    return run


def seeds(spark: Any, n: int, *, first_seed: int = 0, partitions: int | None = None) -> Any:
    parts = partitions or max(2, spark.sparkContext.defaultParallelism * 4)
    return spark.range(first_seed, first_seed + n, 1, parts).selectExpr("id AS seed")


def write_parquet(
    spark: Any,
    n: int,
    out_dir: str,
    *,
    first_seed: int = 0,
    partitions: int | None = None,
    **kwargs: Any,
) -> str:
    """``n`` synthetic traces straight into a converted corpus at ``out_dir`` (``traces/``,
    ``problems.jsonl``), through the same parser and schema as ``convert.py``. Returns the traces
    path."""
    from kgc.pipeline.convert import write_parsed
    from kgc.pipeline.schema import PARSED

    parsed = seeds(spark, n, first_seed=first_seed, partitions=partitions).mapInArrow(
        _to_rows(kwargs), PARSED
    )
    n_written, problems = write_parsed(parsed, out_dir)
    if n_written != n or problems:
        raise RuntimeError(
            f"synthetic corpus: wrote {n_written} of {n} traces, {len(problems)} problems "
            f"(first: {problems[:1]})"
        )
    return str(Path(out_dir) / "traces")


def write_jsonl(
    spark: Any,
    n: int,
    out_dir: str,
    *,
    first_seed: int = 0,
    files: int | None = None,
    **kwargs: Any,
) -> list[str]:
    """``n`` synthetic traces as JSONL files (several traces back to back per file)."""
    out = Path(out_dir)
    tmp = out / "_spark_text"
    text = seeds(spark, n, first_seed=first_seed, partitions=files).mapInArrow(
        _to_text(kwargs), "value string"
    )
    text.write.mode("overwrite").text(str(tmp))
    written = []
    for i, part in enumerate(sorted(tmp.glob("part-*"))):
        target = out / f"synthetic-{first_seed}-{i:05d}.jsonl"
        part.rename(target)
        written.append(str(target))
    for leftover in tmp.iterdir():
        leftover.unlink()
    tmp.rmdir()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="synthetic.py", description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, required=True, help="how many traces")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--divergence-rate", type=float, default=0.0)
    parser.add_argument("--master", default=None)
    args = parser.parse_args(argv)
    from kgc.pipeline import spark as ks

    spark = ks.session(app_name="kgc-synthetic", master=args.master)
    try:
        kw = {"divergence_rate": args.divergence_rate}
        if args.format == "jsonl":
            files = write_jsonl(spark, args.traces, args.out, first_seed=args.first_seed, **kw)
            print(f"{args.traces} traces in {len(files)} files under {args.out}")
        else:
            path = write_parquet(spark, args.traces, args.out, first_seed=args.first_seed, **kw)
            print(f"{args.traces} traces in {path}")
    finally:
        ks.stop(spark)
    return 0


if __name__ == "__main__":
    from kgc.pipeline import synthetic as _synthetic  # executors must see the package module

    sys.exit(_synthetic.main())
