"""Deviations: what a trace's divergence is, in symbolic form, and when two are the same one.

A saved trace that diverged says *where* it failed (its ``result.divergence``) and, re-checked
with no broker (as ``kgc analyze`` does), *what* failed there. ``kgc check --implementation`` and
``kgc matrix`` use both to tell a deviation already on record (a baseline in
``traces/known/<implementation>/``) from a new one:

**The same deviation** (:class:`Deviation`, compared whole with ``==``): two divergences are the
same deviation when all three parts are equal, each in symbolic form —

* ``request``: the request the divergence is about (the one answered, or, when an answer every
  model state owed never came, the first one owed), with its type, version and every field;
* ``answer``: what the broker did instead: its whole answer, every field (``no answer`` for an
  answer that never came);
* ``allowed``: what the model allowed at that step, one entry per distinct outcome of the model
  states alive just before it (an answer with every field, ``no answer yet``, or for a silence
  the answers that were overdue, each with its request).

The same request type and error is not enough: a JoinGroup answered ``NONE`` with generation 2
where Kafka waits, and one answered ``NONE`` with generation 1 where Kafka answers generation 2,
are two deviations. Which request fields drove the divergence is not guessed: every field counts,
so a deviation found again with, say, another session timeout is a new one until a person says
otherwise (a false "new" is looked at; a false "known" hides a bug). Per-implementation switches
of the model, which accept a confirmed deviation wherever it shows, replace this matching later.

*Symbolic form* removes only what differs between two runs of the same history: the client that
sent the request is ``c1`` and the others ``c2``, ``c3``… in the order they appear (member ids
``cK-n`` and instance ids ``cK-instance`` follow their client), every name kgc made for a run
(``kgc-…``: topics, also inside subscription metadata) is ``<name1>``, ``<name2>``… in order,
request ids and times are dropped. Numbers the protocol carries (versions, generations, epochs,
timeouts, offsets) stay as they are.

The parts are read by re-checking the trace's history with the model its manifest names
(:func:`deviation_of`), so a response is compared field by field, not as the text the checker
wrote when it was recorded (which cuts long fields and follows the record's repr).

**The same failing event** (:class:`FailingEvent`, compared with ``==``): a replay of a baseline
fails at the event it recorded when it fails at the same step, on the same request (its id and its
symbolic form) and with the same kind of divergence (``answer <Response> <ERROR>``, ``no answer``,
``connection closed``). Read from the ``result`` a trace records (:func:`failing_event`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from typing import Any

from kgc.engine.registry import model_from_manifest
from kgc.engine.traces import Trace
from kgc.model.checker import Checker, CheckerConfig, Model
from kgc.model.commands import ConnectionClosed, to_json
from kgc.model.history import Event, Invoke, Quiet, Receive, event_from_json

NO_ANSWER = "no answer"  # an answer every model state owed never came
NO_ANSWER_YET = "no answer yet"  # a model state in which the request still waits
NOTHING_OVERDUE = "nothing overdue"  # a model state that owed nothing at a silence


@dataclass(frozen=True, slots=True, kw_only=True)
class Deviation:
    """What a divergence is, in symbolic form (module docstring): equal means the same deviation.
    Each part is canonical JSON (sorted keys) with its names made symbolic."""

    request: str
    answer: str
    allowed: tuple[str, ...]

    def differs_in(self, other: Deviation) -> tuple[str, ...]:
        """The parts (``request``, ``answer``, ``allowed``) in which ``other`` is another one."""
        return tuple(
            f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FailingEvent:
    """Where a trace's divergence is (module docstring): equal means the same failing event."""

    step: int
    request_id: int | None
    request: str  # the request, symbolic (``Deviation.request``); "" when the trace has none
    kind: str  # answer <Response> <ERROR> | no answer | connection closed | cannot be sent

    def describe(self) -> str:
        return f"step {self.step}, request #{self.request_id} {self.request}: {self.kind}"


def deviation_of(trace: Trace, model: Model[Any] | None = None) -> Deviation | None:
    """The deviation ``trace``'s history shows, re-checked with ``model`` (default: the one its
    manifest names) and the checker tolerances its manifest records; None when the history holds
    no divergence for that model, or its divergence names no request."""
    model = model_from_manifest(trace.manifest) if model is None else model
    config = CheckerConfig.from_manifest(trace.manifest)
    checker = Checker(model, config)
    div = checker.feed_all(trace.events)
    if div is None:
        return None
    # after a divergence the checker keeps the states alive just before it (``Checker.feed``); a
    # silence is judged once time reached it, as the checker does (timers may have answered)
    states = checker.states
    if isinstance(div.event, Quiet):
        states = list(checker.advanced(states, div.event.at_ms))
    outcomes = [_outcome(model, config, state, div.event) for state in states]
    requests = _requests(trace.events)
    request_id = _subject(div.event, outcomes)
    if request_id not in requests:
        return None
    names = _Names(first=requests[request_id].client)
    request = names.text(_request_json(requests[request_id]))
    answer = names.text(_answer_json(div.event))
    raw = {_canonical(_resolve(o, requests)) for o in outcomes}
    # names are given in an order that does not depend on the names the run used
    allowed = [names.text(r) for r in sorted(raw, key=names.masked)]
    return Deviation(request=request, answer=answer, allowed=tuple(sorted(allowed)))


def failing_event(trace: Trace) -> FailingEvent | None:
    """Where ``trace`` recorded its divergence (its ``result``), None if it recorded none."""
    div = (trace.result or {}).get("divergence") or {}
    observed = div.get("observed")
    if not observed:
        return None
    event = event_from_json(observed)
    request_id = divergence_request_id(div)
    command = _requests(trace.events).get(request_id) if request_id is not None else None
    request = "" if command is None else _Names(first=command.client).text(_request_json(command))
    return FailingEvent(step=event.step, request_id=request_id, request=request, kind=_kind(event))


_OWED = re.compile(r"request (\d+): (.*) \(emitted at \d+ ms\)$")


def divergence_request_id(div: dict[str, Any]) -> int | None:
    """The request a recorded divergence is about: the one answered (or sent), or, when an answer
    every model state owed never came, the first request the checker names as owed."""
    observed = div.get("observed") or {}
    if observed.get("request_id") is not None:
        return int(observed["request_id"])
    if observed.get("kind") != "quiet":
        return None
    owed = [int(m.group(1)) for line in div.get("allowed") or [] if (m := _OWED.match(str(line)))]
    return min(owed, default=None)


def owed_answers(div: dict[str, Any], request_id: int | None) -> list[str]:
    """The answers a recorded silence's checker lines say ``request_id`` was owed."""
    return [
        m.group(2)
        for line in div.get("allowed") or []
        if (m := _OWED.match(str(line))) and int(m.group(1)) == request_id
    ]


# ------------------------------------------------------------------------------------ internals
def _requests(events: list[Event]) -> dict[int, Any]:
    return {e.request_id: e.command for e in events if isinstance(e, Invoke)}


def _outcome(model: Model[Any], config: CheckerConfig, state: Any, event: Event) -> Any:
    """What one model state allowed at ``event`` (as ``Checker._allowed`` writes it, as data)."""
    box = model.outbox(state)
    if isinstance(event, Receive):
        got = box.get(event.request_id)
        return NO_ANSWER_YET if got is None else {"answer": to_json(got[0])}
    if isinstance(event, Quiet):
        cutoff = event.at_ms - config.latency_bound_ms
        late = [(rid, to_json(r)) for rid, (r, at) in sorted(box.items()) if at <= cutoff]
        return [{"request_id": rid, "answer": a} for rid, a in late] or NOTHING_OVERDUE
    return f"no state can take a {event.kind}"


def _subject(event: Event, outcomes: list[Any]) -> int | None:
    """The request a divergence is about: the event's own, or the first one owed at a silence."""
    if isinstance(event, Invoke | Receive):
        return event.request_id
    owed = [o["request_id"] for out in outcomes if isinstance(out, list) for o in out]
    return min(owed, default=None)


def _resolve(outcome: Any, requests: dict[int, Any]) -> Any:
    """An overdue answer names its request by what was sent, not by its id."""
    if not isinstance(outcome, list):
        return outcome
    return sorted(
        (
            {"request": _request_json(requests[o["request_id"]]), "answer": o["answer"]}
            for o in outcome
        ),
        key=_canonical,
    )


def _request_json(command: Any) -> dict[str, Any]:
    """The request in symbolic form, before names: every field but the sending client, which
    :class:`_Names` makes ``c1``."""
    out = to_json(command)
    out.pop("client", None)
    return out


def _answer_json(event: Event) -> Any:
    if isinstance(event, Receive):
        return to_json(event.response)
    if isinstance(event, Quiet):
        return NO_ANSWER
    return f"a {event.kind} no model state takes"


def _kind(event: Event) -> str:
    if isinstance(event, Quiet):
        return NO_ANSWER
    if isinstance(event, Receive) and isinstance(event.response, ConnectionClosed):
        return "connection closed"
    if isinstance(event, Receive):
        return f"answer {event.response.type} {getattr(event.response, 'error', '')}".strip()
    if isinstance(event, Invoke):
        return "cannot be sent"
    return event.kind


def _canonical(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


# a client (``c2``; in member ids ``c2-1`` and instance ids ``c2-instance`` too), or a name kgc
# made for one run (``kgc-suite-1e30de``)
_NAME = re.compile(r"\b(c\d+)\b|\b(kgc-[A-Za-z0-9._-]*[A-Za-z0-9])")


class _Names:
    """Symbolic names, given in order of first appearance (module docstring)."""

    def __init__(self, *, first: str) -> None:
        self.clients: dict[str, str] = {first: "c1"}
        self.made: dict[str, str] = {}

    def text(self, value: Any) -> str:
        return _NAME.sub(self._name, _canonical(value))

    def masked(self, raw: str) -> str:
        """``raw`` with the names already given, and ``?`` for the others: an order for texts
        that does not depend on the names a run happened to use."""
        return _NAME.sub(
            lambda m: (
                self.clients.get(m.group(1), "?") if m.group(1) else self.made.get(m.group(2), "?")
            ),
            raw,
        )

    def _name(self, m: re.Match[str]) -> str:
        if m.group(1):
            return self.clients.setdefault(m.group(1), f"c{len(self.clients) + 1}")
        return self.made.setdefault(m.group(2), f"<name{len(self.made) + 1}>")
