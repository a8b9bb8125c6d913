"""Re-check recorded histories at scale: the model's checker as a fold per group, inside Spark.

The unit of the fold is one group's history, ``(trace_id, group_id)``; the converter stores each
as one row of the ``traces`` dataset (events in recorded order), so the fold is a ``mapInArrow``
over rows — a mapPartitions with no shuffle. For each history it calls
:func:`kgc.model.checker.check` — the same function the pytest suite calls — on the events decoded
by :func:`kgc.model.history.event_from_json`, with the model and checker tolerances named in the
trace's manifest. No broker is involved (Jepsen's ``analyze``; docs/design-notes.md).

The fold emits one *facts* row per history (``schema.FACTS``): the re-check verdict next to the
recorded one, the divergence (first diverging event, what the model allowed, what was observed,
normalised into a *signature* that groups equal divergences), and one entry per request with its
group state, error, latency and whether the checker vouched for it. The report aggregates only
these rows.

Group state per request: the ``group_state`` the engine recorded on the ``Invoke``
(``engine/coverage.py``); when a trace carries none and the re-check ran, the group states of
the model states alive right before the request (read through :class:`_Observing`, a transparent
wrapper that only records what the checker hands the model).

A trace with corrupt lines or without a result line is not re-checked (``incomplete``): a history
with a hole in it would diverge for the wrong reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kgc.model.checker import Checker, CheckerConfig, Model
from kgc.model.commands import Request, Response
from kgc.model.history import Event, event_from_json

# ------------------------------------------------------------------------------- model selection


class ModelUnavailable(Exception):
    """The model a trace names cannot be built here (message says why)."""


def model_for(manifest: Mapping[str, Any]) -> Model[Any]:
    """The model a manifest names (profile, config, group id), built by
    ``kgc.engine.registry.model_from_manifest`` — the factory ``kgc analyze`` uses."""
    try:
        from kgc.engine.registry import model_from_manifest
    except ImportError as exc:
        raise ModelUnavailable(f"the classic group model is not installed ({exc})") from None
    return model_from_manifest(dict(manifest))


class _Observing(Model[Any]):
    """Delegates every call to ``inner``; records the group state (``Model.group_state``) of
    each state a request is applied to. The checker cannot tell it from the model itself."""

    def __init__(self, inner: Model[Any]) -> None:
        self.inner = inner
        self.states: dict[int, set[str]] = {}

    def initial(self) -> Any:
        return self.inner.initial()

    def advance(self, state: Any, *, must_until: float, may_until: float) -> Iterable[Any]:
        return self.inner.advance(state, must_until=must_until, may_until=may_until)

    def invoke(
        self, state: Any, *, request_id: int, command: Request, at_ms: float
    ) -> Iterable[Any]:
        name = self.inner.group_state(state)
        if name is not None:
            self.states.setdefault(request_id, set()).add(name)
        return self.inner.invoke(state, request_id=request_id, command=command, at_ms=at_ms)

    def outbox(self, state: Any) -> Mapping[int, tuple[Response, float]]:
        return self.inner.outbox(state)

    def deliver(self, state: Any, request_id: int) -> Any:
        return self.inner.deliver(state, request_id)

    def fault(self, state: Any, *, action: str, node: int, at_ms: float) -> Iterable[Any]:
        return self.inner.fault(state, action=action, node=node, at_ms=at_ms)

    def served(self, state: Any, *, node: int, at_ms: float) -> Iterable[Any]:
        return self.inner.served(state, node=node, at_ms=at_ms)

    def provisional(self, state: Any) -> bool:
        return self.inner.provisional(state)

    def group_state(self, state: Any) -> str | None:
        return self.inner.group_state(state)

    def timers(self, state: Any) -> list[tuple[float, str, str]]:
        return self.inner.timers(state)

    def input_class(self, state: Any, command: Request) -> str | None:
        return self.inner.input_class(state, command)

    def hold_ms(self) -> float:
        return self.inner.hold_ms()

    def known_bug(self, state: Any) -> Any:
        return self.inner.known_bug(state)

    def with_known_bug(self, state: Any, world: Any) -> Any:
        return self.inner.with_known_bug(state, world)


# ------------------------------------------------------------------------- divergence signatures

_RESPONSE = re.compile(r"(\w+Response)\(")
_ERROR = re.compile(r"error='(\w+)'")
_REQUEST_NO = re.compile(r"request (\d+)")


def _outcome(text: str) -> str:
    """``request 3: JoinGroupResponse(error='NONE', …)`` -> ``JoinGroupResponse NONE``."""
    m = _RESPONSE.search(text)
    if m is None:
        text = re.sub(r"^request \d+: ", "", text.strip())
        return re.sub(r"\d+(\.\d+)?", "#", text)[:80]
    e = _ERROR.search(text, m.end())
    return f"{m.group(1)} {e.group(1) if e else '?'}"


def normalise_allowed(allowed: Iterable[str]) -> list[str]:
    """What the model allowed, stripped of ids, times and generations, sorted and unique."""
    out = set()
    for a in allowed:
        # the checker names the fields that differ ("error: 'NONE' ≠ 'ILLEGAL_GENERATION' (broker
        # ≠ model)") before the model's answer ("model: HeartbeatResponse(…)"): keep the answer
        parts = [p for p in a.split("; ") if p and " ≠ " not in p]
        out.add(" + ".join(sorted({_outcome(p) for p in parts})) or "nothing")
    return sorted(out)


def observed_outcome(kind: str, event_obj: Mapping[str, Any] | None) -> str:
    """What the target did at the diverging event, normalised like :func:`normalise_allowed`."""
    from kgc.engine.coverage import error_of

    if kind == "receive" and event_obj is not None:
        try:
            event = event_from_json(dict(event_obj))
            return f"{event.response.type} {error_of(event.response)}"  # type: ignore[union-attr]
        except Exception:
            return "unreadable response"
    if kind == "quiet":
        return "no response"
    if kind == "invoke":
        return "request could not be sent in any model state"
    return kind


def signature(request_type: str | None, kind: str, observed: str, allowed: list[str]) -> str:
    """A short stable id for divergences that are the same bug."""
    key = json.dumps([request_type, kind, observed, allowed])
    return hashlib.sha1(key.encode()).hexdigest()[:10]


def diverging_request_id(
    kind: str, event_obj: Mapping[str, Any] | None, allowed: Iterable[str]
) -> int | None:
    if kind in ("receive", "invoke") and event_obj is not None:
        rid = event_obj.get("request_id")
        return rid if isinstance(rid, int) else None
    for a in allowed:  # a Quiet divergence: the overdue request is named in what was allowed
        m = _REQUEST_NO.search(a)
        if m:
            return int(m.group(1))
    return None


# ---------------------------------------------------------------------------------- the fold


def fold(row: Mapping[str, Any], *, recheck: bool = True) -> dict[str, Any]:
    """One history (a ``traces`` row as a dict) -> one FACTS row."""
    events_rows: list[Mapping[str, Any]] = row["events"] or []
    recorded = row.get("verdict")
    out: dict[str, Any] = {
        "trace_id": row["trace_id"],
        "group_id": row.get("group_id"),
        "implementation": row["implementation"],
        "version": row["version"],
        "source_file": row.get("source_file"),
        "first_line": row.get("first_line"),
        "event_count": len(events_rows),
        "complete": bool(row.get("complete")),
        "recorded_verdict": recorded,
        "recheck_verdict": None,
        "recheck_error": None,
        "peak_states": row.get("peak_states"),
        "agrees_with_recorded": None,
    }
    div_index: int | None = row.get("divergence_index")
    div_reason: str | None = row.get("divergence_reason")
    div_allowed: list[str] = list(row.get("divergence_allowed") or [])
    div_obj: Mapping[str, Any] | None = None
    observed_json = row.get("divergence_observed_json")
    if observed_json:
        try:
            parsed = json.loads(observed_json)
            div_obj = parsed if isinstance(parsed, dict) else None
        except ValueError:
            div_obj = None
    verdict = (
        recorded
        if recorded in ("pass", "divergence", "known-bug") and out["complete"]
        else "incomplete"
    )
    model_states: dict[int, set[str]] = {}

    if recheck and out["complete"]:
        try:
            events: list[Event] = [
                event_from_json(json.loads(e["event_json"])) for e in events_rows
            ]
            manifest = json.loads(row["manifest_json"])
            model = _Observing(model_for(manifest))
            checker = Checker(model, CheckerConfig.from_manifest(manifest))
            divergence = checker.feed_all(events)
        except ModelUnavailable as exc:
            out["recheck_verdict"] = "not run"
            out["recheck_error"] = str(exc)
        except Exception as exc:  # a model bug must not kill the job: report it per trace
            out["recheck_verdict"] = "error"
            out["recheck_error"] = f"{type(exc).__name__}: {exc}"[:500]
        else:
            model_states = model.states
            if divergence is None:
                # only a Kafka bug the model knows explains it (``model/known_bugs.py``)
                known = checker.known_bug is not None
                verdict = out["recheck_verdict"] = "known-bug" if known else "pass"
                div_index, div_reason, div_allowed, div_obj = None, None, [], None
            else:
                verdict = out["recheck_verdict"] = "divergence"
                div_index = divergence.index
                div_reason = divergence.reason
                div_allowed = list(divergence.allowed)
                div_obj = json.loads(events_rows[divergence.index]["event_json"])
            out["agrees_with_recorded"] = recorded == out["recheck_verdict"] and (
                recorded != "divergence" or row.get("divergence_index") == div_index
            )

    out["verdict"] = verdict
    if verdict == "divergence":
        kind = str(div_obj.get("kind")) if div_obj else "unknown"
        rid = diverging_request_id(kind, div_obj, div_allowed)
        rtype = None
        for e in events_rows:
            if e["kind"] == "invoke" and e["request_id"] == rid:
                rtype = e["request_type"]
                break
        observed = observed_outcome(kind, div_obj)
        allowed_norm = normalise_allowed(div_allowed)
        out.update(
            divergence_index=div_index,
            divergence_kind=kind,
            divergence_request_id=rid,
            divergence_request_type=rtype,
            divergence_reason=div_reason,
            divergence_allowed=div_allowed[:20],
            divergence_observed=observed,
            divergence_allowed_outcomes=allowed_norm,
            signature=signature(rtype, kind, observed, allowed_norm),
        )
    else:
        out.update(
            divergence_index=None,
            divergence_kind=None,
            divergence_request_id=None,
            divergence_request_type=None,
            divergence_reason=None,
            divergence_allowed=None,
            divergence_observed=None,
            divergence_allowed_outcomes=None,
            signature=None,
        )
    out["requests"], out["state_source"] = _requests(
        events_rows, verdict, div_index, out["divergence_request_id"], model_states
    )
    return out


def _requests(
    events_rows: list[Mapping[str, Any]],
    verdict: str,
    div_index: int | None,
    div_request: int | None,
    model_states: Mapping[int, set[str]],
) -> tuple[list[dict[str, Any]], str | None]:
    by_id: dict[int, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    sources: set[str] = set()
    for e in events_rows:
        rid = e["request_id"]
        if e["kind"] == "invoke" and rid is not None:
            recorded_state = e.get("group_state")
            if recorded_state and recorded_state != "?":
                states, source = [recorded_state], "recorded"
            elif rid in model_states:  # "?" is the engine's "model states disagree"
                states, source = sorted(model_states[rid]), "model"
            else:
                states, source = [recorded_state or "?"], None
            if source:
                sources.add(source)
            req = {
                "index": e["index"],
                "request_id": rid,
                "request_type": e["request_type"],
                "states": states,
                "error": None,
                "latency_ms": None,
                "received_index": None,
            }
            by_id[rid] = req
            order.append(req)
        elif e["kind"] == "receive" and rid in by_id and by_id[rid]["received_index"] is None:
            by_id[rid].update(
                error=e["error"], latency_ms=e["latency_ms"], received_index=e["index"]
            )
    for req in order:
        received = req.pop("received_index")
        if verdict == "pass":
            status = "agreed"
        elif verdict == "divergence" and div_index is not None:
            if req["request_id"] == div_request:
                status = "diverged"
            elif received is not None and received < div_index:
                status = "agreed"
            else:
                status = "unchecked"
        else:
            status = "unchecked"
        req["status"] = status
    source = "recorded" if sources == {"recorded"} else ("model" if sources == {"model"} else None)
    if len(sources) > 1:
        source = "mixed"
    return order, source


# --------------------------------------------------------------------------------------- Spark

FOLD_COLUMNS = (
    "trace_id",
    "group_id",
    "implementation",
    "version",
    "source_file",
    "first_line",
    "complete",
    "verdict",
    "peak_states",
    "divergence_index",
    "divergence_reason",
    "divergence_allowed",
    "divergence_observed_json",
    "manifest_json",
    "events",
)

EVENT_FIELDS_USED = (
    "index",
    "kind",
    "request_id",
    "request_type",
    "error",
    "latency_ms",
    "group_state",
    "event_json",
)

ARROW_BATCH_ROWS = 1000


def _fold_batches(recheck: bool) -> Any:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from kgc.pipeline.schema import FACTS
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow_schema = to_arrow_schema(FACTS)
        out: list[dict[str, Any]] = []
        for batch in batches:
            for row in batch.to_pylist():
                out.append(fold(row, recheck=recheck))
                if len(out) >= ARROW_BATCH_ROWS:
                    yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)
                    out = []
        if out:
            yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)

    return run


def facts(traces: Any, *, recheck: bool = True) -> Any:
    """FACTS DataFrame: the fold applied to every history of a ``traces`` DataFrame."""
    from kgc.pipeline.schema import FACTS
    from pyspark.sql import functions as F

    slim = F.transform(  # only what the fold reads of each event crosses into Python
        "events", lambda e: F.struct(*(e[name].alias(name) for name in EVENT_FIELDS_USED))
    ).alias("events")
    columns = [slim if c == "events" else c for c in FOLD_COLUMNS]
    return traces.select(*columns).mapInArrow(_fold_batches(recheck), FACTS)


def recheck_available() -> str | None:
    """None if the model can be built here, else why not (shown in the report)."""
    try:
        import kgc.engine.registry  # noqa: F401
    except ImportError as exc:
        return f"the classic group model is not installed ({exc})"
    return None
