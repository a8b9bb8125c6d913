"""Traces: the durable record of one run against one group (format version 1).

A trace is data — versioned, self-describing, written atomically and never silently overwritten
(STYLE.md, "Traces"). Two encodings of the same content:

* JSONL (``*.jsonl``): a ``manifest`` line, one line per history event
  (:func:`kgc.model.history.event_to_json`, plus optional extra keys such as ``latency_ms``), and a
  final ``result`` line. Recorded runs and corpora use it, and the Spark pipeline reads it.
* JSON (``*.json``): one document ``{"manifest": …, "events": […], "result": …}``. Minimal failing
  cases are saved this way under ``traces/``.

The manifest names the format version, the kgc version, the target (implementation, version, mode,
nodes, config), the seed and profile, the model profile and the checker's tolerances, so a trace
can be re-checked with no broker (``kgc analyze``) and re-sent to any broker (``kgc replay``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.model.commands import TraceFormatError, to_json
from kgc.model.history import Event, Invoke, Receive, Tick, event_from_json, event_to_json
from kgc.model.profiles import release_of

FORMAT_VERSION = 1
# ``manifest.target.version`` when the target is no Apache Kafka release kgc knows: a broker kgc
# did not start (``ExternalKafka``, ``ContainerKafka``) or the model itself (``ModelTarget``)
UNKNOWN_VERSIONS = ("unknown", "model")
# Kafka-compatible brokers kgc launches (``kgc.conformance.brokers.implementations``): their
# ``manifest.target.version`` is their own release, and the recorded ``model`` picks the rules
LAUNCHED_OTHERS = ("tansu", "kfake", "librdkafka-mock")


class TraceError(Exception):
    """A trace file cannot be used; the message names the file, the line and the field."""


@dataclass(slots=True, kw_only=True)
class Trace:
    manifest: dict[str, Any]
    events: list[Event]
    result: dict[str, Any] | None = None
    extras: list[dict[str, Any]] = field(default_factory=list)  # per-event extra keys, same index

    @property
    def commands(self) -> list[Any]:
        """The command sequence (requests and ticks) in the order the driver issued them."""
        from kgc.engine.loop import FaultStep

        return [c for c in self.commands_with_faults() if not isinstance(c, FaultStep)]

    def commands_with_faults(self) -> list[Any]:
        """Commands and nemesis actions, in order: what ``kgc replay`` re-sends."""
        from kgc.engine.loop import FaultStep
        from kgc.model.commands import Tick as TickCommand
        from kgc.model.history import Fault

        out: list[Any] = []
        for e in self.events:
            if isinstance(e, Invoke):
                out.append(e.command)
            elif isinstance(e, Tick):
                out.append(TickCommand(ms=e.ms))
            elif isinstance(e, Fault):
                out.append(FaultStep(action=e.action, node=e.node))
        return out

    def to_document(self) -> dict[str, Any]:
        events = []
        for i, e in enumerate(self.events):
            obj = event_to_json(e)
            if i < len(self.extras):
                obj.update(self.extras[i])
            events.append(obj)
        return {"manifest": self.manifest, "events": events, "result": self.result}

    def fingerprint(self) -> str:
        """Stable id of what the trace *does*: its command sequence and where it diverged."""
        h = hashlib.sha256()
        for c in self.commands:
            h.update(json.dumps(to_json(c), sort_keys=True).encode())
        if self.result and self.result.get("divergence"):
            h.update(str(self.result["divergence"].get("index")).encode())
        return h.hexdigest()[:12]


# ------------------------------------------------------------------------------------- reading


def _parse_event(obj: Any, where: str) -> tuple[Event, dict[str, Any]]:
    try:
        event = event_from_json(obj)
    except TraceFormatError as exc:
        raise TraceError(f"{where}: {exc}") from None
    known = {"kind", "step", "at_ms", "request_id", "command", "response", "ms", "action", "node"}
    extras = {k: v for k, v in obj.items() if k not in known}
    return event, extras


def _check_manifest(manifest: Any, where: str) -> dict[str, Any]:
    if not isinstance(manifest, dict):
        raise TraceError(f"{where}: field 'manifest': expected a JSON object")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise TraceError(
            f"{where}: field 'manifest.format_version': {version!r} is not supported "
            f"(this kgc reads version {FORMAT_VERSION}); re-record the trace with this kgc"
        )
    target = manifest.get("target")
    kafka_version = target.get("version") if isinstance(target, dict) else None
    implementation = target.get("implementation") if isinstance(target, dict) else None
    if implementation in LAUNCHED_OTHERS:
        if not isinstance(manifest.get("model"), dict):
            raise TraceError(
                f"{where}: field 'manifest.model': required for a trace recorded against "
                f"{implementation} (its version is {implementation}'s own, not Kafka's)"
            )
    elif kafka_version is not None and kafka_version not in UNKNOWN_VERSIONS:
        try:
            release_of(kafka_version)
        except ValueError as exc:
            raise TraceError(
                f"{where}: field 'manifest.target.version': {exc} (or one of "
                f"{', '.join(UNKNOWN_VERSIONS)}); it chooses the model profile and the broker "
                "a replay starts"
            ) from None
    return manifest


def _check_history(events: Sequence[Event], places: Sequence[tuple[str, str]]) -> None:
    """A history the engine could have recorded. ``places[i]`` names event ``i``: where it is
    (file and line, for the error) and a short label (``events[3]``, ``line 5``) for references.

    The driver stamps invokes, ticks, quiets and faults from one monotonic clock as it records
    them, so their times never go backwards; a receive carries the time its bytes arrived
    (recorded later, possibly after another client's invoke), never before its own request was
    sent. Request ids are the engine's counter: each invoked once, answered at most once, and
    only after it was invoked."""
    last: tuple[float, int] | None = None  # (at_ms, index) of the last driver-stamped event
    invoked: dict[int, tuple[float, int]] = {}
    answered: dict[int, int] = {}
    for i, e in enumerate(events):
        where = places[i][0]
        if isinstance(e, Receive):
            rid = e.request_id
            if rid not in invoked:
                raise TraceError(
                    f"{where}: field 'request_id': request {rid} is answered but was never "
                    "invoked before this event"
                )
            if rid in answered:
                raise TraceError(
                    f"{where}: field 'request_id': request {rid} is answered twice "
                    f"(also at {places[answered[rid]][1]})"
                )
            if e.at_ms < invoked[rid][0]:
                raise TraceError(
                    f"{where}: field 'at_ms': time goes backwards: request {rid} answered at "
                    f"{e.at_ms} ms, before it was invoked at {invoked[rid][0]} ms "
                    f"({places[invoked[rid][1]][1]})"
                )
            answered[rid] = i
            continue
        if last is not None and e.at_ms < last[0]:
            raise TraceError(
                f"{where}: field 'at_ms': time goes backwards: {e.at_ms} ms, after "
                f"{last[0]} ms at {places[last[1]][1]}"
            )
        last = (e.at_ms, i)
        if isinstance(e, Invoke):
            if e.request_id in invoked:
                raise TraceError(
                    f"{where}: field 'request_id': duplicate request id {e.request_id} "
                    f"(also invoked at {places[invoked[e.request_id][1]][1]})"
                )
            invoked[e.request_id] = (e.at_ms, i)


def load(path: str | Path) -> Trace:
    """Read a ``.json`` or ``.jsonl`` trace. Raises :class:`TraceError`; never writes anything."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{p}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{p}: not UTF-8 text") from None
    if p.suffix == ".jsonl":
        return _load_jsonl(p, text)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{p}:{exc.lineno}: bad JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise TraceError(f"{p}: expected a JSON object with 'manifest' and 'events'")
    manifest = _check_manifest(doc.get("manifest"), str(p))
    raw_events = doc.get("events")
    if not isinstance(raw_events, list):
        raise TraceError(f"{p}: field 'events': expected a list")
    events, extras = [], []
    places = [(f"{p}: events[{i}]", f"events[{i}]") for i in range(len(raw_events))]
    for obj, (where, _) in zip(raw_events, places, strict=True):
        e, x = _parse_event(obj, where)
        events.append(e)
        extras.append(x)
    _check_history(events, places)
    result = doc.get("result")
    return Trace(manifest=manifest, events=events, result=result, extras=extras)


def _load_jsonl(p: Path, text: str) -> Trace:
    manifest: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    events: list[Event] = []
    extras: list[dict[str, Any]] = []
    places: list[tuple[str, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{where}: bad JSON: {exc.msg}") from None
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if manifest is None:
            if kind != "manifest":
                raise TraceError(f"{where}: field 'kind': the first line must be the manifest")
            manifest = _check_manifest(obj, where)
        elif kind == "result":
            result = obj
        else:
            e, x = _parse_event(obj, where)
            events.append(e)
            extras.append(x)
            places.append((where, f"line {lineno}"))
    if manifest is None:
        raise TraceError(f"{p}: empty trace (no manifest line)")
    _check_history(events, places)
    return Trace(manifest=manifest, events=events, result=result, extras=extras)


# ------------------------------------------------------------------------------------- writing


def _atomic_write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps_jsonl(trace: Trace) -> str:
    doc = trace.to_document()
    lines = [json.dumps({"kind": "manifest", **doc["manifest"]}, sort_keys=True)]
    lines += [json.dumps(e, sort_keys=True) for e in doc["events"]]
    if trace.result is not None:
        lines.append(json.dumps({"kind": "result", **trace.result}, sort_keys=True))
    return "\n".join(lines) + "\n"


def dumps_json(trace: Trace) -> str:
    return json.dumps(trace.to_document(), indent=1, sort_keys=True) + "\n"


def save(trace: Trace, path: str | Path) -> Path:
    """Write atomically. An existing file with the same content is kept; a *different* existing
    file is never overwritten: the new trace goes to ``name-2.json``, ``name-3.json``, …"""
    p = Path(path)
    data = dumps_jsonl(trace) if p.suffix == ".jsonl" else dumps_json(trace)
    candidate, n = p, 1
    while candidate.exists():
        if candidate.read_text(encoding="utf-8") == data:
            return candidate
        n += 1
        candidate = p.with_name(f"{p.stem}-{n}{p.suffix}")
    _atomic_write(candidate, data)
    return candidate


def save_failure(trace: Trace, directory: str | Path, *, scenario: str, check: str) -> Path:
    """Save a minimal failing case as ``<dir>/<scenario>_<check>_<fingerprint>.json``."""
    name = f"{scenario}_{check}_{trace.fingerprint()}.json"
    return save(trace, Path(directory) / name)


def load_many(paths: Iterable[str | Path]) -> list[tuple[Path, Trace]]:
    """Expand directories to their ``*.json``/``*.jsonl`` files and load every trace."""
    out = []
    for path in expand(paths):
        out.append((path, load(path)))
    return out


def expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.suffix in (".json", ".jsonl"))
        else:
            files.append(p)
    return files


def target_label(t: dict[str, Any]) -> str:
    """``apache-kafka 4.3.1 (kraft, 1 node(s))`` for a trace's target; a broker that did not say
    what it is reads as such, not as ``unknown unknown (unknown, …)``."""
    impl, version = t.get("implementation", "?"), t.get("version", "?")
    what = (
        "a broker of unknown implementation and version"
        if impl == "unknown" and version == "unknown"
        else f"{impl} {version}"
    )
    mode = t.get("mode", "?")
    shape = (
        f"{t.get('nodes', '?')} node(s)"
        if mode == "unknown"
        else f"{mode}, {t.get('nodes', '?')} node(s)"
    )
    return f"{what} ({shape})"


def render(trace: Trace, *, width: int = 100) -> str:
    """A failing case as a person reads it: one line per step (cut at ``width``), model vs broker
    side by side; under the first divergence, its reason and what the model allowed instead, in
    full (for a response: the fields that differ, ``broker ≠ model``)."""
    from kgc.model.history import Fault, Quiet, Receive

    div = (trace.result or {}).get("divergence") or {}
    bad = div.get("index")
    known = (trace.result or {}).get("known_bug") or {}
    since, alone = known.get("since_index"), known.get("index")
    lines = []
    t = trace.manifest.get("target", {})
    lines.append(
        f"trace {trace.manifest.get('trace_id', '?')} against {target_label(t)}, "
        f"group {trace.manifest.get('group_id', '?')}, seed {trace.manifest.get('seed', '?')}"
    )
    for i, e in enumerate(trace.events):
        mark = ">>" if i == bad else "~~" if i == since else "  "
        if isinstance(e, Invoke):
            c = to_json(e.command)
            c.pop("type")
            client = c.pop("client", "")
            args = ", ".join(f"{k}={v!r}" for k, v in c.items() if v not in (None, "", (), []))
            text = f"{e.at_ms:9.1f}ms  {client:>4} -> {e.command.type}({args}) #{e.request_id}"
        elif isinstance(e, Receive):
            r = to_json(e.response)
            kind = r.pop("type")
            rest = ", ".join(f"{k}={v!r}" for k, v in r.items() if v not in (None, "", (), []))
            text = f"{e.at_ms:9.1f}ms  {'':>4} <- #{e.request_id} {kind}({rest})"
        elif isinstance(e, Tick):
            text = f"{e.at_ms:9.1f}ms  tick {e.ms} ms"
        elif isinstance(e, Quiet):
            if i not in (bad, alone):
                continue
            # the checker's wait for answers the model had emitted, which never came
            text = f"{e.at_ms:9.1f}ms  (waited for the answers the model expected)"
        elif isinstance(e, Fault):
            text = f"{e.at_ms:9.1f}ms  nemesis: {e.action} node {e.node}"
            if e.served_by is not None and e.served_at_ms is not None:
                text += f" (node {e.served_by} served the group at {e.served_at_ms:.1f}ms)"
        else:  # pragma: no cover - exhaustive
            text = repr(e)
        if len(text) > width:
            text = text[: width - 3] + "..."
        lines.append(f"{mark} {text}")
        if i == bad:
            # whole lines: the checker already wrote the differing fields whole and cut the rest
            lines.append(f"   !! first divergence: {div.get('reason', '')}")
            allowed = div.get("allowed", [])
            for text in allowed[:6]:
                lines.append(f"      model allowed: {text}")
            if len(allowed) > 6:
                lines.append(f"      ... and {len(allowed) - 6} more")
        if i == since:
            lines.append(
                f"   ~~ here Kafka may meet a known bug, {known.get('key')} (Kafka "
                f"{known.get('releases')}, fixed in {known.get('fixed_in')}): {known.get('title')}"
            )
        if i == alone:
            lines.append(
                "   ~~ from here only that bug explains the broker, so nothing after it is judged "
                f"(proof: {known.get('proof')}; {known.get('story')})"
            )
    return "\n".join(lines)


def new_manifest(
    *,
    target: dict[str, Any],
    group_id: str,
    seed: int | None,
    profile: str,
    scenario: str,
    model: dict[str, Any],
    checker: dict[str, Any],
) -> dict[str, Any]:
    import datetime
    import secrets

    import kgc

    return {
        "format_version": FORMAT_VERSION,
        "kgc_version": kgc.__version__,
        "trace_id": secrets.token_hex(8),
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "scenario": scenario,
        "group_id": group_id,
        "seed": seed,
        "profile": profile,
        "target": target,
        "model": model,
        "checker": checker,
    }


def commands_of(events: Sequence[Event]) -> list[Any]:
    return Trace(manifest={}, events=list(events)).commands


def result_of(engine: Any) -> dict[str, Any]:
    """The ``result`` record of a finished (or diverged) engine run: its verdict is ``pass``,
    ``divergence`` or ``known-bug`` (only a Kafka bug the model knows explains the history:
    ``model/known_bugs.py``; the ``known_bug`` record says which, and from which event)."""
    div = engine.divergence
    hit = engine.checker.known_bug
    out: dict[str, Any] = {
        "verdict": "divergence" if div is not None else "pass" if hit is None else "known-bug",
        "events": len(engine.events),
        "peak_states": engine.checker.peak_states,
        "divergence": None,
    }
    if hit is not None:
        out["known_bug"] = known_bug_record(hit, engine.events)
    if div is not None:
        out["divergence"] = {
            "index": div.index,
            "step": div.event.step,
            "reason": div.reason,
            "allowed": list(div.allowed),
            "observed": event_to_json(div.event),
        }
    return out


def known_bug_record(hit: Any, events: list[Event]) -> dict[str, Any]:
    """What a trace's result says of a :class:`~kgc.model.checker.KnownBugHit`."""
    bug = hit.world.bug
    return {
        "key": bug.key,
        "title": bug.title,
        "releases": bug.releases,
        "fixed_in": bug.fixed_in,
        "proof": bug.proof,
        "story": bug.story,
        "since_index": hit.since,
        "since_step": events[hit.since].step if hit.since < len(events) else None,
        "index": hit.index,
    }


def result_of_divergence(trace: Trace, divergence: Any) -> dict[str, Any]:
    """A ``result`` record for a trace re-checked offline (``kgc analyze``)."""
    return {
        "verdict": "pass" if divergence is None else "divergence",
        "events": len(trace.events),
        "divergence": None
        if divergence is None
        else {
            "index": divergence.index,
            "step": divergence.event.step,
            "reason": divergence.reason,
            "allowed": list(divergence.allowed),
            "observed": event_to_json(divergence.event),
        },
    }
