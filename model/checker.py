"""The checker: a fold over one group's history that keeps every model state consistent with it.

Kafka may legally do several things at a step (which member leads, whether a timer right at its
deadline has fired, …). The model therefore returns *every* allowed successor, and the checker
carries the set of states that explain everything observed so far, the way linearizability
checkers do (porcupine, Knossos). Each event filters the set:

* ``Invoke``  — advance every state to the send time (timers may fire), then apply the command.
* ``Receive`` — advance to the arrival time, then keep the states whose outbox holds a response for
  that request equal to the observed one, and deliver it.
* ``Quiet``   — advance, then drop the states that emitted a response long enough ago
  (``latency_bound_ms``) that it should have arrived, but it did not.

A divergence is the first event that empties the set. It is reported with that event and with what
each state alive just before it would have allowed: for an answer, the fields where the broker's
and the model's differ (``differences``: ``partitions[0].error: 'NONE' ≠ 'ILLEGAL_GENERATION'``),
written whole, then the model's answer with the fields that agree shortened.

Time tolerance. The client stamps events with its own clock; the broker runs its own timers,
computed from when *it* processed a request (a little after our send) and fired by a timer thread
with some granularity (a little after the deadline). So a deadline ``d`` in model time may fire on
the broker anywhere in ``[d - early_ms, d + late_ms]`` as seen from the client. When the checker
advances to time ``t`` it asks the model to fire every timer with ``d <= t - late_ms`` and to branch
on those with ``d <= t + early_ms``. Both windows come from measurement (see CONTRIBUTING.md).

The model stays pure: it never reads a clock; ``t`` always comes from the history.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Generic, TypeVar

from kgc.model.commands import ConnectionClosed, Request, Response
from kgc.model.history import Event, Fault, Invoke, Quiet, Receive, Tick
from kgc.model.known_bugs import BugWorld, after_event

S = TypeVar("S")


class Model(ABC, Generic[S]):
    """What the checker and the engine need from a model. States must be hashable (frozen
    dataclasses).

    A model is its six steps (abstract) and four hooks whose defaults suit a model with no group
    states, no timers and no request held back: ``provisional`` (read by :meth:`Checker.due` and
    by the engine's recorded group state), ``group_state`` (recorded on each ``Invoke``, derived
    again by the pipeline's re-check), ``timers`` (what the state machine's
    ``tick_to_deadline`` aims at) and ``hold_ms`` (added to the engine's hang timeout)."""

    @abstractmethod
    def initial(self) -> S:
        """The state before any event."""

    @abstractmethod
    def advance(self, state: S, *, must_until: float, may_until: float) -> Iterable[S]:
        """Fire timers: every timer due at or before ``must_until`` fires; each timer due at or
        before ``may_until`` may fire. Returns every allowed successor (at least one)."""

    @abstractmethod
    def invoke(self, state: S, *, request_id: int, command: Request, at_ms: float) -> Iterable[S]:
        """Apply a request that arrives at ``at_ms``. Returns every allowed successor."""

    @abstractmethod
    def outbox(self, state: S) -> Mapping[int, tuple[Response, float]]:
        """Responses emitted and not yet delivered: request id -> (response, emitted at ms)."""

    @abstractmethod
    def deliver(self, state: S, request_id: int) -> S:
        """The state after the response to ``request_id`` has been read by the client."""

    @abstractmethod
    def fault(self, state: S, *, action: str, node: int, at_ms: float) -> Iterable[S]:
        """Apply a nemesis action. Models that do not model faults return ``[state]``."""

    def served(self, state: S, *, node: int, at_ms: float) -> Iterable[S]:
        """After a nemesis action, the runner saw ``node`` serve the group at ``at_ms`` (the
        ``Fault`` event's ``served_by``/``served_at_ms``). Models with a coordinator failover keep
        the worlds that agree; the others return ``[state]``."""
        return [state]

    def provisional(self, state: S) -> bool:
        """Whether ``state`` holds a request back in case the broker handles a later one first.
        While another state lives, such states do not count in :meth:`Checker.due`."""
        return False

    def group_state(self, state: S) -> str | None:
        """Kafka's name of the group state ``state`` is in (``Stable``, …); None for a model
        without group states."""
        return None

    def timers(self, state: S) -> list[tuple[float, str, str]]:
        """Every pending timer as (deadline ms, kind name, key), sorted by deadline."""
        return []

    def input_class(self, state: S, command: Request) -> str | None:
        """What ``command``'s fields are to the group in ``state``, in the classes that change
        Kafka's answer (``classic/inputs.py``; recorded on each ``Invoke`` for the input cells of
        ``engine/coverage.py``); None for a model or request type without classes."""
        return None

    def hold_ms(self) -> float:
        """How long the target may hold an answer every state owes before it answers it at all
        (``ClusterGroupModel`` rule 7: a write's timeout); the engine's hang timeout is longer."""
        return 0.0

    def known_bug(self, state: S) -> BugWorld | None:
        """The Kafka bug ``state`` is a world of (``known_bugs.py``): the checker sets such a
        state aside, since it predicts only what the bug cannot touch. None for an ordinary
        state."""
        return None

    def with_known_bug(self, state: S, world: BugWorld) -> S:
        """``state``, a world of a known bug, with that world now ``world``
        (``known_bugs.after_event``). Only a model whose :meth:`known_bug` gives worlds is
        asked."""
        raise NotImplementedError(f"{type(self).__name__} makes no known-bug worlds")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckerConfig:
    early_ms: float = 20.0  # docs/design-notes.md, "Time": measured, not guessed
    late_ms: float = 100.0
    latency_bound_ms: float = 3000.0
    max_states: int = 4096

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> CheckerConfig:
        """The tolerances a trace's manifest records under ``checker`` (defaults for those it
        leaves out; keys this kgc does not know are ignored, so an older or newer trace reads)."""
        given: Mapping[str, Any] = manifest.get("checker") or {}
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in given.items() if k in known})


@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """The first event no model state could explain."""

    index: int  # position of the event in the history
    event: Event
    reason: str
    allowed: tuple[str, ...]  # what each state alive before the event would have allowed


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownBugHit:
    """The history is explained only by a Kafka bug the model knows (``known_bugs.py``)."""

    world: BugWorld
    since: int  # the event at which a world first met the bug
    index: int  # the first event no other world explains


@dataclass(slots=True)
class Checker(Generic[S]):
    model: Model[S]
    config: CheckerConfig = field(default_factory=CheckerConfig)
    states: set[S] = field(init=False)
    divergence: Divergence | None = field(init=False, default=None)
    # set instead of ``divergence`` when only a world of a known Kafka bug explains the history
    known_bug: KnownBugHit | None = field(init=False, default=None)
    index: int = field(init=False, default=0)
    peak_states: int = field(init=False, default=1)
    _bug_since: dict[BugWorld, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.states = {self.model.initial()}

    # ---------------------------------------------------------------- the fold
    def feed(self, event: Event) -> Divergence | None:
        """Fold one event in. Returns the divergence once the set is empty (and keeps it).

        Known Kafka bugs (``known_bugs.py``): a world that met one predicts nothing more, so it
        passes every event that does not refute it. Once such worlds are all that is left,
        :attr:`known_bug` says so: only that bug explains the history. Events fed after that still
        count: one that refutes the last bug world is a divergence like any other (and
        :attr:`known_bug` is cleared). While ordinary worlds live they decide, as if the bug worlds
        were not there."""
        if self.divergence is not None:
            return self.divergence
        before = self.states
        after = set(self._step(before, event))
        if len(after) > self.config.max_states:
            raise RuntimeError(
                f"state set grew to {len(after)} states at event {self.index}; "
                "raise CheckerConfig.max_states or canonicalise the model state"
            )
        self.peak_states = max(self.peak_states, len(after))
        known_bug = self.model.known_bug
        worlds: list[BugWorld] = []
        for s in after:  # a loop, not a comprehension: every event, every state
            if (w := known_bug(s)) is not None:
                worlds.append(w)
        for w in worlds:
            self._bug_since.setdefault(w, self.index)
        if after and len(worlds) == len(after) and self.known_bug is None:
            first = min(worlds, key=lambda w: (self._bug_since[w], w.key, w.generation_id))
            self.known_bug = KnownBugHit(
                world=first, since=self._bug_since[first], index=self.index
            )
        if not after:
            self.known_bug = None
            self.divergence = Divergence(
                index=self.index,
                event=event,
                reason=self._reason(before, event),
                allowed=tuple(sorted({self._allowed(s, event) for s in before})),
            )
        else:
            self.states = after
        self.index += 1
        return self.divergence

    def feed_all(self, events: Iterable[Event]) -> Divergence | None:
        for event in events:
            if self.feed(event) is not None:
                break
        return self.divergence

    # ------------------------------------------------ what the driver waits for
    def _ordinary(self, states: Iterable[S]) -> list[S]:
        """``states`` less the worlds of known bugs, which owe nothing (``feed``)."""
        return [s for s in states if self.model.known_bug(s) is None]

    def must_answer(self) -> frozenset[int]:
        """Requests that every live state has already answered: the driver waits for them."""
        sets = [frozenset(self.model.outbox(s)) for s in self._ordinary(self.states)]
        return frozenset.intersection(*sets) if sets else frozenset()

    def due(self, at_ms: float) -> frozenset[int]:
        """Requests answered in every state once time reaches ``at_ms`` (timers that must have
        fired by then included). Looks ahead without changing the set.

        States the model calls *provisional* (a request held back in case the broker handles a
        later one first: ``ClassicGroupModel.provisional``) do not count while any other state
        lives: a request every state in send order has answered is waited for. If the broker did
        hold it back, the wait ends at the driver's hang timeout and the set keeps the states
        that explain the delay."""
        states = set(self._ordinary(self._advance(self.states, at_ms)))
        firm = [s for s in states if not self.model.provisional(s)]
        if firm:
            states = set(firm)
        sets = [frozenset(self.model.outbox(s)) for s in states]
        return frozenset.intersection(*sets) if sets else frozenset()

    def may_answer(self) -> frozenset[int]:
        """Requests that some live state has answered."""
        return frozenset().union(*(frozenset(self.model.outbox(s)) for s in self.states))

    # --------------------------------------------------------------- internals
    # The two below run for every live state at every event: plain loops filling a list or set
    # (no generators), the model looked up once.
    def advanced(self, states: Iterable[S], at_ms: float) -> set[S]:
        """``states`` once time reached ``at_ms``, as each event is judged (timers due fire, those
        within the tolerance may); what a divergence report and deviation matching use too."""
        return self._advance(states, at_ms)

    def _advance(self, states: Iterable[S], at_ms: float) -> set[S]:
        model = self.model
        must = at_ms - self.config.late_ms
        may = at_ms + self.config.early_ms
        out: set[S] = set()
        for s in states:
            if model.known_bug(s) is not None:
                out.add(s)  # a bug world has no timers
            else:
                out.update(model.advance(s, must_until=must, may_until=may))
        return out

    def _step(self, states: set[S], event: Event) -> Iterable[S]:
        if isinstance(event, Tick):
            return states
        model = self.model
        out: list[S] = []
        for s in self._advance(states, event.at_ms):
            world = model.known_bug(s)
            if world is not None:
                now = after_event(world, event)
                if now is not None:
                    out.append(s if now == world else model.with_known_bug(s, now))
            elif isinstance(event, Invoke):
                out.extend(
                    model.invoke(
                        s, request_id=event.request_id, command=event.command, at_ms=event.at_ms
                    )
                )
            elif isinstance(event, Receive):
                got = model.outbox(s).get(event.request_id)
                if got is not None and _agrees(event, got[0]):
                    out.append(model.deliver(s, event.request_id))
            elif isinstance(event, Quiet):
                cutoff = event.at_ms - self.config.latency_bound_ms
                owed = model.outbox(s)
                if not owed or all(at > cutoff for _, at in owed.values()):
                    out.append(s)
            elif isinstance(event, Fault):
                after = model.fault(s, action=event.action, node=event.node, at_ms=event.at_ms)
                if event.served_by is None or event.served_at_ms is None:
                    out.extend(after)
                    continue
                for a in after:
                    out.extend(model.served(a, node=event.served_by, at_ms=event.served_at_ms))
        return out

    def _allowed(self, state: S, event: Event) -> str:
        out = self.model.outbox(state)
        if isinstance(event, Receive):
            got = out.get(event.request_id)
            if got is None:
                return f"request {event.request_id}: no response yet"
            diffs = judged_differences(event, got[0])
            keep = frozenset(path for path, _, _ in diffs)
            if not diffs:
                return f"request {event.request_id}: {_short(got[0])}"
            fields_ = "; ".join(f"{path or 'response'}: {o!r} ≠ {a!r}" for path, o, a in diffs)
            return (
                f"request {event.request_id}: {fields_} (broker ≠ model); "
                f"model: {_short(got[0], keep)}"
            )
        if isinstance(event, Quiet):
            # as ``_step`` judges it: once time reached the silence (a timer may have emitted the
            # answer that never came: a session expiry answering a parked SyncGroup)
            cutoff = event.at_ms - self.config.latency_bound_ms
            late = sorted(
                {
                    f"request {rid}: {_short(r)} (emitted at {at:.0f} ms)"
                    for s in self._advance([state], event.at_ms)
                    for rid, (r, at) in self.model.outbox(s).items()
                    if at <= cutoff
                }
            )
            return "; ".join(late) or "nothing overdue"
        return repr(state)[:300]

    def _reason(self, before: set[S], event: Event) -> str:
        if isinstance(event, Receive) and isinstance(event.response, ConnectionClosed):
            return (
                f"the broker closed the connection of request {event.request_id} instead of "
                f"answering it ({event.response.reason}); Kafka answers every request it offers"
            )
        if isinstance(event, Receive):
            keep = frozenset(
                path
                for s in before
                if (got := self.model.outbox(s).get(event.request_id)) is not None
                for path, _, _ in judged_differences(event, got[0])
            )
            return (
                f"the broker answered request {event.request_id} with "
                f"{_short(event.response, keep)}, which no model state allows at this time"
            )
        if isinstance(event, Quiet):
            return "a response every model state had emitted never arrived"
        if isinstance(event, Invoke):
            return f"the model has no state in which {event.command.type} can be sent"
        return f"no model state explains {event.kind}"


# How a divergence shows a response: the fields where the broker's answer and the model's differ
# are written whole; any other string field longer than this is cut ("..." after the quote).
SHORT_FIELD_CHARS = 20


class _Absent:
    """The side of a tuple that has no item at an index the other side has."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()


def differences(observed: object, allowed: object, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where two responses differ, leaf by leaf: ``(path, observed, allowed)`` with record fields
    by name and tuple items by index (``partitions[0].error``). An item only one side has is
    :data:`ABSENT` on the other; values of different types differ as a whole (path ``""`` for
    two responses of different types)."""
    if type(observed) is not type(allowed):
        return [(path, observed, allowed)]
    if is_dataclass(observed) and not isinstance(observed, type):
        out: list[tuple[str, Any, Any]] = []
        for f in fields(observed):
            name = _field_path(path, f.name)
            out += differences(getattr(observed, f.name), getattr(allowed, f.name), name)
        return out
    if isinstance(observed, tuple) and isinstance(allowed, tuple):
        out = []
        for i in range(max(len(observed), len(allowed))):
            o = observed[i] if i < len(observed) else ABSENT
            a = allowed[i] if i < len(allowed) else ABSENT
            out += differences(o, a, f"{path}[{i}]")
        return out
    return [] if observed == allowed else [(path, observed, allowed)]


def judged_differences(event: Receive, allowed: Response) -> list[tuple[str, Any, Any]]:
    """:func:`differences` of a received answer and a model's, less the fields the trace did not
    record (``Receive.unrecorded``: an older trace, written before those fields were compared)."""
    diffs = differences(event.response, allowed)
    if not event.unrecorded:
        return diffs
    skip = frozenset(event.unrecorded)
    return [d for d in diffs if d[0] not in skip]


def _agrees(event: Receive, allowed: Response) -> bool:
    if not event.unrecorded:
        return event.response == allowed  # the common case, and the fast one
    return not judged_differences(event, allowed)


def _field_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _short(value: object, keep: frozenset[str] = frozenset(), path: str = "") -> str:
    """``repr(value)`` with each string field longer than :data:`SHORT_FIELD_CHARS` cut, except
    the fields at the paths in ``keep`` (:func:`differences`' paths) and error codes (the
    substance of an answer: ``INVALID_SESSION_TIMEOUT`` cut at 20 reads as another name), which
    are written whole."""
    if path in keep or path == "error" or path.endswith(".error"):
        return repr(value)
    if is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(
            f"{f.name}={_short(getattr(value, f.name), keep, _field_path(path, f.name))}"
            for f in fields(value)
        )
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        items = [_short(v, keep, f"{path}[{i}]") for i, v in enumerate(value)]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, str) and len(value) > SHORT_FIELD_CHARS:
        return f"{value[:SHORT_FIELD_CHARS]!r}..."
    return repr(value)


def check(
    model: Model[S], events: Sequence[Event], config: CheckerConfig | None = None
) -> Divergence | None:
    """Check a whole history; the pure function the pytest suite and the Spark job both call."""
    return Checker(model, config or CheckerConfig()).feed_all(events)
