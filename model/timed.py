"""Time and order, shared by every group model: timers that fire, and the reorder window.

Both group models (the classic ``ClassicGroupModel`` and KIP-848's ``ConsumerGroupModel``) are a set
of request handlers and timers over frozen states. What they share is written once here:

* **Timers** (:meth:`TimedModel.advance`): every timer due at or before ``must_until`` fires, in
  deadline order, or in an order :meth:`tied` allows for timers due together; each
  timer due at or before ``may_until`` may fire or not (the checker's tolerance window), so every
  prefix of those is a successor.
* **The reorder window** (:meth:`TimedModel.invoke`): two *clients'* requests sent less than
  ``reorder_window_ms`` apart may be handled by the broker in either order (requests on two
  connections race through the network threads and the request queue), never one client's two (a
  broker mutes a connection until it answers: ``SocketServer``). A request is held back in a
  *provisional* state (its ``deferred`` field) in case the next request overtakes it; the timer
  that releases it is the subclass's ``DEFERRED`` timer. Measurements: docs/design-notes.md,
  "Order at the broker".

* **The outbox** (:class:`OutboxModel`): the answers a state emitted and the client has not read,
  its group state's name, and no fault; written once for the consumer and share group models.

A subclass gives ``apply`` (one request, no reordering), ``next_timer`` and ``fire``; its states
are frozen dataclasses with a ``deferred`` field (:class:`Deferred` or None), and
its ``config`` has ``reorder_window_ms``.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from kgc.model.checker import Model
from kgc.model.commands import Request, Response


@dataclass(frozen=True, slots=True, kw_only=True)
class Deferred:
    """A request sent but not yet processed: another one sent within the reorder window may be
    processed first (``GroupConfig.reorder_window_ms``)."""

    request_id: int
    command: Request
    at_ms: float


S = TypeVar("S")
Timer = tuple[float, Any, str]  # (deadline ms, kind (a name or a number, per model), key)
# Timers of two different timer threads (3.9's heartbeat and rebalance purgatories) due less
# than this apart fire in either order: each thread runs what its 1 ms tick expired
# (``ClassicGroupModel.tied``, ``Profile.one_coordinator_timer``).
TIE_MS = 1.0


class TimedModel(Model[S]):
    config: Any

    @abstractmethod
    def apply(self, state: S, request_id: int, command: Request, at_ms: float) -> list[S]:
        """Process one request at ``at_ms`` (no reordering): every allowed successor."""

    @abstractmethod
    def next_timer(self, state: S) -> Timer | None:
        """The timer that fires next, the held-back request's release included."""

    @abstractmethod
    def fire(self, state: S, timer: Timer) -> list[S]:
        """Every successor of ``state`` once ``timer`` fired."""

    def tied(self, state: S, timer: Timer) -> list[Timer]:
        """The coordinator's other timers due within ``TIE_MS`` after ``timer``: they may fire
        before it (default: none)."""
        return []

    def _fire_next(self, state: S, timer: Timer) -> list[S]:
        out = self.fire(state, timer)
        for other in self.tied(state, timer):
            out.extend(self.fire(state, other))
        return out

    def provisional(self, state: S) -> bool:
        """True for a state in which a request is held back (``deferred``): it exists only in case
        the broker handles the next request first. The driver does not wait for answers that
        only the states in send order have emitted (``Checker.due``)."""
        return getattr(state, "deferred", None) is not None

    def invoke(self, state: S, *, request_id: int, command: Request, at_ms: float) -> list[S]:
        if self.known_bug(state) is not None:
            return [state]  # a world of a known Kafka bug predicts nothing (``known_bugs.py``)
        window = self.config.reorder_window_ms
        d: Deferred | None = getattr(state, "deferred", None)
        if d is None:
            out = self.apply(state, request_id, command, at_ms)
            if window > 0:
                held = Deferred(request_id=request_id, command=command, at_ms=at_ms)
                out.append(replace(state, deferred=held))  # type: ignore[type-var]
            return out
        base: S = replace(state, deferred=None)  # type: ignore[type-var]
        out = []
        for s1 in self.apply(base, d.request_id, d.command, d.at_ms):  # in send order
            out.extend(self.invoke(s1, request_id=request_id, command=command, at_ms=at_ms))
        if at_ms - d.at_ms <= window and command.client != d.command.client:
            # the later request first; never two of one client's
            for s1 in self.apply(base, request_id, command, at_ms):
                # the coordinator's timers may run in between (seen on 4.3.1: a delay-0 initial
                # join completed with the later request's member alone, and the held-back join
                # then started the next rebalance): any deadline-ordered prefix of those due
                for s2 in self.advance(s1, must_until=float("-inf"), may_until=at_ms):
                    out.extend(self.apply(s2, d.request_id, d.command, d.at_ms))
        return out

    def vanished(self, state: S, until_ms: float) -> S | None:
        """``state`` after the coordinator's periodic cleanup deleted the group, if that may
        happen by ``until_ms`` (Kafka deletes an Empty group without offsets on its own clock, at
        a phase a client cannot know, at most once per ``offsets.retention.check.interval.ms``);
        None if it may not. Default: never."""
        return None

    def background(self, state: S) -> list[S]:
        """``state`` after work the coordinator runs on its own threads completed, if some is
        under way (a resolution of regular expressions: ``ConsumerGroupModel``): it may complete
        at any moment before the timer that says it must have. Default: none."""
        return []

    def advance(self, state: S, *, must_until: float, may_until: float) -> list[S]:
        """Every state ``state`` may be in once time reaches ``must_until`` (timers due by then
        fire) or ``may_until`` (timers due by then may fire), with or without background work
        completed (``background``) and the cleanup (``vanished``)."""
        until = may_until if may_until > must_until else must_until
        first = self.next_timer(state)
        if first is not None and first[0] <= until:
            out = self._advance_timers(state, must_until=must_until, may_until=may_until)
            return self._settled(out, until)
        # nothing can fire, the common case (every live state, every event): written out
        if self.known_bug(state) is not None:
            return [state]
        done = self.background(state)
        if done:
            return self._settled(list(dict.fromkeys([state, *done])), until)
        gone = self.vanished(state, until)
        return [state] if gone is None or gone == state else [state, gone]

    def _settled(self, out: list[S], until: float) -> list[S]:
        """``out``, with or without background work completed and the cleanup by ``until``."""
        done: list[S] = []
        for s in out:
            if self.known_bug(s) is None:
                done.extend(self.background(s))
        if done:
            out = list(dict.fromkeys(out + done))
        gone: list[S] = []
        for s in out:
            if self.known_bug(s) is None and (g := self.vanished(s, until)) is not None:
                gone.append(g)
        return list(dict.fromkeys(out + gone)) if gone else out

    def _advance_timers(self, state: S, *, must_until: float, may_until: float) -> list[S]:
        """The timers' part of :meth:`advance`, once one may fire by ``may_until``."""
        done: list[S] = []
        work = [state]
        while work:
            s = work.pop()
            t = self.next_timer(s)
            if t is None or t[0] > must_until:
                done.append(s)
            else:
                work.extend(self._fire_next(s, t))
        if may_until <= must_until:
            return done if len(done) < 2 else list(dict.fromkeys(done))
        result = dict.fromkeys(done)
        frontier = list(result)
        while frontier:
            nxt: list[S] = []
            for s in frontier:
                t = self.next_timer(s)
                if t is not None and t[0] <= may_until:
                    for s2 in self._fire_next(s, t):
                        if s2 not in result:
                            result[s2] = None
                            nxt.append(s2)
            frontier = nxt
        return list(result)


class _Sent(Protocol):
    @property
    def request_id(self) -> int: ...
    @property
    def response(self) -> Response: ...
    @property
    def emitted_at_ms(self) -> float: ...


class _OutboxState(Protocol):
    @property
    def outbox(self) -> tuple[_Sent, ...]: ...
    @property
    def group_state(self) -> str: ...


SO = TypeVar("SO", bound=_OutboxState)


class OutboxModel(TimedModel[SO]):
    """A :class:`TimedModel` whose states keep their emitted answers in ``outbox`` (entries with
    ``request_id``, ``response`` and ``emitted_at_ms``), name Kafka's group state in
    ``group_state``, and take no fault: the KIP-848 consumer group and the KIP-932 share group.
    A subclass with a faster copy than ``dataclasses.replace`` gives :meth:`with_outbox`."""

    def group_state(self, state: SO) -> str:
        return state.group_state

    def outbox(self, state: SO) -> Mapping[int, tuple[Response, float]]:
        return {o.request_id: (o.response, o.emitted_at_ms) for o in state.outbox}

    def deliver(self, state: SO, request_id: int) -> SO:
        return self.with_outbox(state, tuple(o for o in state.outbox if o.request_id != request_id))

    def with_outbox(self, state: SO, outbox: tuple[Any, ...]) -> SO:
        """``state`` with ``outbox`` in place of its own."""
        return replace(state, outbox=outbox)  # type: ignore[type-var]

    def fault(self, state: SO, *, action: str, node: int, at_ms: float) -> Iterable[SO]:
        return [state]
