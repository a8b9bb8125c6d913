"""Trace corpora (JSONL / JSON, trace format v1) to Parquet, with the explicit schema of
``schema.py``.

Input is any mix of files and directories (searched recursively for ``*.jsonl`` and ``*.json``).
A ``.jsonl`` file holds one or more traces back to back: a ``manifest`` line opens a trace, event
lines follow (:func:`kgc.model.history.event_to_json` plus optional extra keys), a ``result`` line
closes it. A ``.json`` file is one document ``{"manifest", "events", "result"}`` (a saved minimal
failing case, ``engine/traces.py``).

Nothing is dropped silently. A line that is not JSON, not a valid event, or sits outside any trace
becomes a *problem* row naming the file and the 1-based line; the trace it belongs to is kept but
marked incomplete (``complete = false``, ``corrupt_lines`` counted) so the re-check does not judge
a history with a hole in it. A trace whose manifest is unusable cannot be attributed to an
implementation: its manifest line is reported, and its event lines are reported as one problem.

Parsing is plain Python (:func:`parse_text`, testable without Spark); :func:`convert` runs it in
Spark, one task per group of files, so line numbers are exact.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.engine.coverage import error_of
from kgc.model.commands import TraceFormatError
from kgc.model.history import Fault, Invoke, Receive, Tick, event_from_json
from kgc.pipeline.schema import FORMAT_VERSION

EXCERPT_CHARS = 160
TRACE_SUFFIXES = (".jsonl", ".json")


# ------------------------------------------------------------------------------ plain-Python parse


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."


def _problem(
    source: str,
    line: int | None,
    message: str,
    excerpt: str | None = None,
    trace_id: str | None = None,
) -> dict[str, Any]:
    return {
        "source_file": source,
        "line": line,
        "trace_id": trace_id,
        "message": message,
        "excerpt": None if excerpt is None else _excerpt(excerpt),
    }


def manifest_problem(manifest: Any) -> str | None:
    """Why a manifest cannot be used, or None. Names the field, as TraceFormatError does."""
    if not isinstance(manifest, dict):
        return "field 'manifest': expected a JSON object"
    if manifest.get("format_version") != FORMAT_VERSION:
        return (
            f"field 'format_version': {manifest.get('format_version')!r} is not supported "
            f"(this kgc reads version {FORMAT_VERSION}); re-record the trace with this kgc"
        )
    if not isinstance(manifest.get("trace_id"), str) or not manifest["trace_id"]:
        return "field 'trace_id': missing or not a string"
    target = manifest.get("target")
    if not isinstance(target, dict):
        return "field 'target': missing or not an object"
    for key in ("implementation", "version"):
        if not isinstance(target.get(key), str) or not target[key]:
            return f"field 'target.{key}': missing or not a string"
    return None


@dataclass(slots=True)
class _OpenTrace:
    manifest: dict[str, Any]
    source: str
    first_line: int | None
    last_line: int | None
    events: list[dict[str, Any]]
    requests: dict[int, tuple[str, str]]  # request id -> (request type, client)
    invoked_at: dict[int, float]
    corrupt: int = 0


def _event_row(t: _OpenTrace, obj: dict[str, Any], raw: str, line: int | None) -> dict[str, Any]:
    """Validate one event (raises TraceFormatError) and flatten it into the EVENT struct."""
    event = event_from_json(obj)
    row: dict[str, Any] = {
        "index": len(t.events),
        "line": line,
        "kind": event.kind,
        "step": event.step,
        "at_ms": event.at_ms,
        "request_id": None,
        "request_type": None,
        "client": None,
        "api_version": None,
        "member_id": None,
        "generation_id": None,
        "error": None,
        "latency_ms": None,
        "group_state": _str(obj.get("group_state")),
        "tick_ms": None,
        "fault_action": None,
        "fault_node": None,
        "event_json": raw,
    }
    if isinstance(event, Invoke):
        c = event.command
        row["request_id"] = event.request_id
        row["request_type"] = c.type
        row["client"] = c.client
        row["api_version"] = c.version
        member = getattr(c, "member_id", None)
        if member is None and c.type == "LeaveGroup" and c.members:  # type: ignore[union-attr]
            member = c.members[0].member_id  # type: ignore[union-attr]
        row["member_id"] = member
        row["generation_id"] = getattr(c, "generation_id", None)
        t.requests[event.request_id] = (c.type, c.client)
        t.invoked_at[event.request_id] = event.at_ms
    elif isinstance(event, Receive):
        rtype, client = t.requests.get(
            event.request_id, (event.response.type.removesuffix("Response"), None)
        )
        row["request_id"] = event.request_id
        row["request_type"] = rtype
        row["client"] = client
        row["error"] = error_of(event.response)
        latency = _num(obj.get("latency_ms"))
        if latency is None and event.request_id in t.invoked_at:
            latency = event.at_ms - t.invoked_at[event.request_id]
        row["latency_ms"] = latency
    elif isinstance(event, Tick):
        row["tick_ms"] = event.ms
    elif isinstance(event, Fault):
        row["fault_action"] = event.action
        row["fault_node"] = event.node
    return row


def _trace_row(t: _OpenTrace, result: dict[str, Any] | None) -> dict[str, Any]:
    m = t.manifest
    target = m["target"]
    model = m.get("model") if isinstance(m.get("model"), dict) else {}
    checker = m.get("checker") if isinstance(m.get("checker"), dict) else {}
    div = (result or {}).get("divergence")
    div = div if isinstance(div, dict) else {}
    allowed = div.get("allowed")
    observed = div.get("observed")
    seed = _int(m.get("seed"))
    if seed is not None and not -(2**63) <= seed < 2**63:
        seed = None
    return {
        "trace_id": m["trace_id"],
        "group_id": _str(m.get("group_id")),
        "source_file": t.source,
        "first_line": t.first_line,
        "last_line": t.last_line,
        "scenario": _str(m.get("scenario")),
        "seed": seed,
        "profile": _str(m.get("profile")),
        "created_at": _str(m.get("created_at")),
        "kgc_version": _str(m.get("kgc_version")),
        "format_version": _int(m.get("format_version")),
        "mode": _str(target.get("mode")),
        "nodes": _int(target.get("nodes")),
        "target_config_json": json.dumps(target.get("config"), sort_keys=True),
        "model_profile": _str(model.get("profile")),
        "model_config_json": json.dumps(model.get("config"), sort_keys=True),
        "checker_early_ms": _num(checker.get("early_ms")),
        "checker_late_ms": _num(checker.get("late_ms")),
        "checker_latency_bound_ms": _num(checker.get("latency_bound_ms")),
        "manifest_json": json.dumps({k: v for k, v in m.items() if k != "kind"}, sort_keys=True),
        "event_count": len(t.events),
        "corrupt_lines": t.corrupt,
        "complete": result is not None and t.corrupt == 0,
        "verdict": _str((result or {}).get("verdict")),
        "result_events": _int((result or {}).get("events")),
        "peak_states": _int((result or {}).get("peak_states")),
        "divergence_index": _int(div.get("index")),
        "divergence_step": _int(div.get("step")),
        "divergence_reason": _str(div.get("reason")),
        "divergence_allowed": [str(a) for a in allowed] if isinstance(allowed, list) else None,
        "divergence_observed_json": None
        if observed is None
        else json.dumps(observed, sort_keys=True),
        "events": t.events,
        "implementation": target["implementation"],
        "version": target["version"],
    }


def parse_lines(source: str, lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Parse JSONL trace text. Yields ``("trace", row)`` and ``("problem", row)`` pairs."""
    open_trace: _OpenTrace | None = None
    orphans: list[int] = []  # event lines with no usable manifest before them
    orphan_reason = "no manifest line before it"

    def flush_orphans() -> Iterator[tuple[str, dict[str, Any]]]:
        if orphans:
            first, last = orphans[0], orphans[-1]
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            yield (
                "problem",
                _problem(
                    source, first, f"{len(orphans)} event line(s) ({span}) skipped: {orphan_reason}"
                ),
            )
            orphans.clear()

    def close(result: dict[str, Any] | None) -> Iterator[tuple[str, dict[str, Any]]]:
        assert open_trace is not None
        if result is None:
            yield (
                "problem",
                _problem(
                    source,
                    open_trace.last_line,
                    "trace ends without a result line (truncated?); kept as incomplete",
                    trace_id=open_trace.manifest["trace_id"],
                ),
            )
        yield "trace", _trace_row(open_trace, result)

    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = getattr(exc, "msg", "too deeply nested")
            tid = open_trace.manifest["trace_id"] if open_trace else None
            yield "problem", _problem(source, lineno, f"bad JSON: {msg}", text, tid)
            if open_trace is not None:
                open_trace.corrupt += 1
                open_trace.last_line = lineno
            continue
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind == "manifest":
            if open_trace is not None:
                yield from close(None)
                open_trace = None
            yield from flush_orphans()
            why = manifest_problem(obj)
            if why is not None:
                yield "problem", _problem(source, lineno, f"unusable manifest: {why}", text)
                orphan_reason = f"their trace's manifest (line {lineno}) is unusable"
                continue
            open_trace = _OpenTrace(obj, source, lineno, lineno, [], {}, {})
        elif kind == "result":
            if open_trace is None:
                yield from flush_orphans()
                yield "problem", _problem(source, lineno, "result line outside any trace", text)
                continue
            open_trace.last_line = lineno
            yield from close(obj)
            open_trace = None
        elif open_trace is None:
            if not orphans:
                orphan_reason = "no manifest line before it"
            orphans.append(lineno)
        else:
            open_trace.last_line = lineno
            try:
                if not isinstance(obj, dict):
                    raise TraceFormatError(f"expected a JSON object, got {type(obj).__name__}")
                open_trace.events.append(_event_row(open_trace, obj, text, lineno))
            except TraceFormatError as exc:
                open_trace.corrupt += 1
                yield (
                    "problem",
                    _problem(
                        source,
                        lineno,
                        f"not a valid event: {exc}",
                        text,
                        open_trace.manifest["trace_id"],
                    ),
                )
    if open_trace is not None:
        yield from close(None)
    yield from flush_orphans()
    if lineno == 0:
        yield "problem", _problem(source, None, "empty file")


def parse_document(source: str, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Parse a ``.json`` trace document (one trace). Event problems name ``events[i]``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        yield "problem", _problem(source, exc.lineno, f"bad JSON: {exc.msg}")
        return
    if not isinstance(doc, dict) or "manifest" not in doc:
        yield (
            "problem",
            _problem(source, None, "not a trace document: expected 'manifest' and 'events'"),
        )
        return
    manifest = doc["manifest"]
    why = manifest_problem(manifest)
    if why is not None:
        yield "problem", _problem(source, None, f"unusable manifest: {why}")
        return
    t = _OpenTrace(manifest, source, None, None, [], {}, {})
    raw_events = doc.get("events")
    if not isinstance(raw_events, list):
        yield "problem", _problem(source, None, "field 'events': expected a list")
        raw_events = []
        t.corrupt += 1
    for i, obj in enumerate(raw_events):
        try:
            if not isinstance(obj, dict):
                raise TraceFormatError(f"expected a JSON object, got {type(obj).__name__}")
            raw = json.dumps(obj, sort_keys=True, separators=(",", ":"))
            t.events.append(_event_row(t, obj, raw, None))
        except TraceFormatError as exc:
            t.corrupt += 1
            yield (
                "problem",
                _problem(
                    source,
                    None,
                    f"events[{i}]: not a valid event: {exc}",
                    trace_id=manifest["trace_id"],
                ),
            )
    result = doc.get("result")
    if not isinstance(result, dict):
        yield (
            "problem",
            _problem(
                source,
                None,
                "trace has no result; kept as incomplete",
                trace_id=manifest["trace_id"],
            ),
        )
        result = None
    yield "trace", _trace_row(t, result)


def parse_file(path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Parse one trace file; unreadable files become a problem, never an exception."""
    try:
        with open(path, encoding="utf-8") as f:
            if path.endswith(".json"):
                yield from parse_document(path, f.read())
            else:
                yield from parse_lines(path, f)
    except (OSError, UnicodeDecodeError) as exc:
        yield "problem", _problem(path, None, f"cannot read: {exc}")


def expand(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Trace files under ``paths`` (directories searched recursively), sorted, absolute."""
    out: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(
                str(q.resolve()) for q in p.rglob("*") if q.suffix in TRACE_SUFFIXES and q.is_file()
            )
        elif p.is_file():
            out.append(str(p.resolve()))
    return out


# -------------------------------------------------------------------------------------- in Spark

ARROW_BATCH_TRACES = 2000


def _parse_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow body: file paths in, ``{"trace": …}`` / ``{"problem": …}`` rows out."""
    import pyarrow as pa
    from kgc.pipeline.schema import PARSED
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(PARSED)
    rows: list[dict[str, Any]] = []
    for batch in batches:
        for path in batch.column(0).to_pylist():
            for kind, row in parse_file(path):
                rows.append({"trace": row} if kind == "trace" else {"problem": row})
                if len(rows) >= ARROW_BATCH_TRACES:
                    yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)
                    rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConvertSummary:
    files: int
    traces: int
    problems: list[dict[str, Any]]
    traces_path: str
    problems_path: str


def is_parquet_corpus(path: str | os.PathLike[str]) -> bool:
    """A directory this module wrote (it holds ``traces/`` with ``implementation=`` partitions)."""
    return (Path(path) / "traces" / "_SUCCESS").exists()


def parsed_frame(spark: Any, files: list[str]) -> Any:
    """DataFrame of PARSED rows (one per trace or problem) for ``files``."""
    from kgc.pipeline.schema import PARSED

    sc = spark.sparkContext
    n = max(1, min(len(files), sc.defaultParallelism * 4))
    paths = spark.createDataFrame(sc.parallelize([(f,) for f in files], n), "path string")
    return paths.mapInArrow(_parse_batches, PARSED)


def write_parsed(parsed: Any, out_dir: str | os.PathLike[str]) -> tuple[int, list[dict[str, Any]]]:
    """Write a PARSED DataFrame as ``out_dir/traces`` (Parquet, partitioned by implementation and
    version) and ``out_dir/problems.jsonl``. Returns (traces written, problems). Two Spark jobs."""
    from kgc.pipeline.schema import PARTITION_COLUMNS
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    out = Path(out_dir)
    parsed = parsed.persist(StorageLevel.DISK_ONLY)
    try:
        traces = parsed.where("trace IS NOT NULL").select("trace.*")
        traces.write.mode("overwrite").partitionBy(*PARTITION_COLUMNS).parquet(str(out / "traces"))
        summary = parsed.select(
            F.count("trace").alias("traces"), F.collect_list("problem").alias("problems")
        ).first()
    finally:
        parsed.unpersist()
    problems = sorted(
        (p.asDict() for p in summary["problems"]),
        key=lambda p: (p["source_file"], p["line"] if p["line"] is not None else -1),
    )
    with open(out / "problems.jsonl", "w", encoding="utf-8") as f:
        for p in problems:
            f.write(json.dumps(p, sort_keys=True) + "\n")
    return int(summary["traces"]), problems


def convert(
    spark: Any, inputs: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str]
) -> ConvertSummary:
    """Convert trace files under ``inputs`` into ``out_dir/traces`` and ``out_dir/problems``."""
    inputs = list(inputs)
    files = expand(inputs)
    if not files:
        raise FileNotFoundError(
            "no trace files (*.jsonl, *.json) under: " + ", ".join(str(p) for p in inputs)
        )
    n_traces, problems = write_parsed(parsed_frame(spark, files), out_dir)
    out = Path(out_dir)
    return ConvertSummary(
        files=len(files),
        traces=n_traces,
        problems=problems,
        traces_path=str(out / "traces"),
        problems_path=str(out / "problems.jsonl"),
    )


def read_traces(spark: Any, parquet_dir: str | os.PathLike[str]) -> Any:
    """The ``traces`` dataset of a converted corpus, read with the explicit schema."""
    from kgc.pipeline.schema import TRACE

    return spark.read.schema(TRACE).parquet(str(Path(parquet_dir) / "traces"))


def read_problems(parquet_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The unusable lines recorded when the corpus was converted."""
    path = Path(parquet_dir) / "problems.jsonl"
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
