"""One group's history: the timestamped events a run produced, in the order they happened.

A history is what the differential engine records and what every checker folds over (in pytest, in
``kgc analyze`` and inside a Spark ``groupBy``). Times are milliseconds since the run started, as
measured on the client's monotonic clock: ``Invoke.at_ms`` right before the request was written,
``Receive.at_ms`` right after its response was read.

Events:

* ``Invoke``  — a client sent ``command`` (``request_id`` is unique within the history).
* ``Receive`` — the response to ``request_id`` arrived. ``unrecorded`` names the response's fields
  the trace did not hold (fields added to the records after it was written, e.g. DescribeGroups'
  ``members[i].client_id``): they have their defaults and the checker does not judge them. A
  trace written today records every field, so it is empty unless read from an older trace.
* ``Tick``    — the driver let ``ms`` of real time pass (for replay; the checker needs nothing
  from it, since every other event carries its own time).
* ``Quiet``   — the driver declares that everything that was going to arrive by ``at_ms`` has
  arrived. Responses the model emitted long enough before ``at_ms`` (see
  ``CheckerConfig.latency_bound_ms``) and that never arrived count as missing.
* ``Fault``   — the nemesis acted on the target (kill, pause, resume, restart a node).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from kgc.model.commands import (
    Request,
    Response,
    TraceFormatError,
    from_json,
    is_response,
    to_json,
    unrecorded_fields,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Invoke:
    kind: ClassVar[str] = "invoke"
    step: int
    at_ms: float
    request_id: int
    command: Request


@dataclass(frozen=True, slots=True, kw_only=True)
class Receive:
    kind: ClassVar[str] = "receive"
    step: int
    at_ms: float
    request_id: int
    response: Response
    unrecorded: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Tick:
    kind: ClassVar[str] = "tick"
    step: int
    at_ms: float
    ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Quiet:
    kind: ClassVar[str] = "quiet"
    step: int
    at_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    kind: ClassVar[str] = "fault"
    step: int
    at_ms: float
    action: str  # kill | pause | resume | restart
    node: int
    # the node the runner then saw serve the group, and when (``settle``): None if it did not wait
    served_by: int | None = None
    served_at_ms: float | None = None


Event: TypeAlias = Invoke | Receive | Tick | Quiet | Fault


def event_to_json(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": event.kind, "step": event.step, "at_ms": event.at_ms}
    if isinstance(event, Invoke):
        out["request_id"] = event.request_id
        out["command"] = to_json(event.command)
    elif isinstance(event, Receive):
        out["request_id"] = event.request_id
        out["response"] = to_json(event.response)
        if event.unrecorded:  # written back as it was read: still not judged
            out["unrecorded"] = list(event.unrecorded)
    elif isinstance(event, Tick):
        out["ms"] = event.ms
    elif isinstance(event, Fault):
        out["action"] = event.action
        out["node"] = event.node
        if event.served_by is not None:
            out["served_by"] = event.served_by
            out["served_at_ms"] = event.served_at_ms
    return out


def _field(obj: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if name not in obj:
        raise TraceFormatError(f"field '{name}': missing")
    value = obj[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TraceFormatError(f"field '{name}': expected {kind}, got {value!r}")
    return value


def event_from_json(obj: Any) -> Event:
    """Inverse of :func:`event_to_json`; raises :class:`TraceFormatError` naming the field."""
    if not isinstance(obj, dict):
        raise TraceFormatError(f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("kind")
    step = _field(obj, "step", int)
    at_ms = float(_field(obj, "at_ms", (int, float)))
    if kind == "invoke":
        command = from_json(_field(obj, "command", dict))
        if command.type == "Tick" or is_response(command):
            raise TraceFormatError(f"field 'command': {command.type} is not a request")
        return Invoke(
            step=step,
            at_ms=at_ms,
            request_id=_field(obj, "request_id", int),
            command=command,  # type: ignore[arg-type]
        )
    if kind == "receive":
        raw = _field(obj, "response", dict)
        response = from_json(raw)
        if not is_response(response):
            raise TraceFormatError(f"field 'response': {response.type} is not a response")
        written = obj.get("unrecorded", [])
        if not isinstance(written, list) or not all(isinstance(p, str) for p in written):
            raise TraceFormatError("field 'unrecorded': expected a list of field paths")
        return Receive(
            step=step,
            at_ms=at_ms,
            request_id=_field(obj, "request_id", int),
            response=response,  # type: ignore[arg-type]
            unrecorded=tuple(dict.fromkeys([*written, *unrecorded_fields(raw)])),
        )
    if kind == "tick":
        return Tick(step=step, at_ms=at_ms, ms=_field(obj, "ms", int))
    if kind == "quiet":
        return Quiet(step=step, at_ms=at_ms)
    if kind == "fault":
        served_by = served_at = None
        if "served_by" in obj or "served_at_ms" in obj:
            served_by = _field(obj, "served_by", int)
            served_at = float(_field(obj, "served_at_ms", (int, float)))
            if served_at < at_ms:
                raise TraceFormatError(
                    f"field 'served_at_ms': {served_at} is before the fault at {at_ms}"
                )
        return Fault(
            step=step,
            at_ms=at_ms,
            action=_field(obj, "action", str),
            node=_field(obj, "node", int),
            served_by=served_by,
            served_at_ms=served_at,
        )
    raise TraceFormatError(f"field 'kind': unknown event kind {kind!r}")
