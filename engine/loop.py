"""The engine: one driver loop that sends commands to a target, records the history, and checks it.

Per step (docs/design-notes.md, "Requests that stay pending"):

0. Let the target get ready for the client (``Target.prepare``: a broker target opens the
   client's connection), then read whatever has already arrived (a zero-timeout poll) and record
   it, so a response that reached us before this step's request was written is recorded *before*
   its ``Invoke``.
1. ``Tick(ms)``: let ``ms`` of the target's time pass while collecting whatever arrives.
   A request: stamp the send time, ``send`` it (never blocks), record ``Invoke``.
2. Collect: poll until every response the checker says *must* have been emitted by now has arrived
   (``Checker.due``); then, only if some live model state has emitted a response that has not
   arrived yet (a "may"), listen up to ``grace_ms`` more for it. A response that must arrive but
   does not within ``must_timeout_ms`` is a hang, and the following ``Quiet`` makes it a
   divergence — reported as such, never as a test timeout.
3. Record ``Quiet(now)``: nothing else was read.

Order at the broker. The model applies requests in send order; a broker may apply two requests
from different connections in the other order when they are sent close together (measured:
docs/design-notes.md, "Order at the broker"). An answered request was applied before its answer
was read; for one still unanswered the engine waits, before sending another request, until it has
been out ``settle_ms`` (20 ms) — only then, and only that long, so steps whose requests are
answered cost no waiting.

Why the step need not listen longer (``quiet_ms = 0``). A response the engine has not waited for
is not lost: it stays in the socket, and the next step's read (0., or the polling inside a tick)
records it with the time it was read, before that step's ``Invoke``. The history therefore keeps
the real order of arrivals and sends on this client, and a response the model says *cannot* come
yet (a join answered too early) is still a divergence — its stamp is late only by the time between
two steps (drawing the next command, a few milliseconds), far inside the checker's tolerance
windows. Model states change an emitted response only by delivering it, so checking it a step
later gives the same verdict. At the end of a sequence :meth:`Engine.finish` listens once more
(``final_ms``, and until the "may" responses arrived or their timers' tolerance window passed), so
nothing already sent by the target is dropped when the example ends.

Every event is fed to the checker as it is recorded, so the first divergence is known at the event
that caused it. The engine never sleeps blindly: time passes inside ``poll``.

Front ends (the Hypothesis state machine, ``kgc check``, ``kgc replay``, the pytest plugin, Spark's
pipeline's synthetic corpora) all drive this one class and consume the same :class:`StepResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kgc.engine.target import Arrival, Target
from kgc.model.checker import Checker, CheckerConfig, Divergence, KnownBugHit, Model
from kgc.model.commands import Command, Request, Response, Tick
from kgc.model.history import Event, Fault, Invoke, Quiet, Receive
from kgc.model.history import Tick as TickEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    # After the "must" responses: how long to listen for a response some live state has emitted
    # but not every one (a "may"). Only spent when there is such a response.
    grace_ms: float = 5.0
    # How long every step listens, whatever the model says (0: see the module docstring; the
    # engine listened a fixed 20 ms per step before, which ``kgc bench check`` still measures).
    quiet_ms: float = 0.0
    # At the end of a sequence (``finish``): listen at least this long for anything still arriving.
    final_ms: float = 20.0
    # A request is sent only once every other unanswered request has been out this long (or is
    # answered): a broker may apply requests from two connections in either order when they are
    # sent close together (module docstring, "Order at the broker").
    settle_ms: float = 20.0
    must_timeout_ms: float = 6000.0  # a "must" response later than this is a hang
    poll_slice_ms: float = 20.0


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultStep:
    """A nemesis action inside a command sequence (kill, pause, resume, restart a node)."""

    action: str
    node: int


# Performs a nemesis action; returns the node it then saw serve the group (a runner that waits for
# the cluster to settle, ``fault_suite.settling_runner``), or None if it did not wait for one.
FaultRunner = Callable[[str, int], int | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    step: int
    command: Command
    request_id: int | None
    received: tuple[tuple[int, Response], ...]  # (request id, response) that arrived in this step
    divergence: Divergence | None


@dataclass(slots=True)
class Engine:
    target: Target
    model: Model[Any]
    checker_config: CheckerConfig = field(default_factory=CheckerConfig)
    config: EngineConfig = field(default_factory=EngineConfig)
    on_event: Callable[[Event, dict[str, Any]], None] | None = None
    events: list[Event] = field(init=False, default_factory=list)
    extras: list[dict[str, Any]] = field(init=False, default_factory=list)
    checker: Checker[Any] = field(init=False)
    requests: dict[int, Request] = field(init=False, default_factory=dict)
    answered: set[int] = field(init=False, default_factory=set)
    _sent_at: dict[int, float] = field(init=False, default_factory=dict)  # unanswered, recent
    step: int = field(init=False, default=0)
    drains: int = field(init=False, default=0)  # waits for a busy client (``_drain``)
    _next_request: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.checker = Checker(self.model, self.checker_config)

    @property
    def hang_ms(self) -> float:
        """How long a response every state owes may take before it is a hang: ``must_timeout_ms``
        past what the model lets the target hold an answer (``Model.hold_ms``)."""
        return self.config.must_timeout_ms + self.model.hold_ms()

    # ------------------------------------------------------------------ recording
    def _record(self, event: Event, extras: dict[str, Any] | None = None) -> None:
        self.events.append(event)
        self.extras.append(extras or {})
        self.checker.feed(event)
        if self.on_event is not None:
            self.on_event(event, extras or {})

    def _receive(self, step: int, arrival: Arrival, received: list[tuple[int, Response]]) -> None:
        if arrival.request_id in self.answered:
            return
        self.answered.add(arrival.request_id)
        received.append((arrival.request_id, arrival.response))
        self._record(
            Receive(
                step=step,
                at_ms=arrival.at_ms,
                request_id=arrival.request_id,
                response=arrival.response,
            ),
            arrival.extras,
        )

    def _group_state(self) -> str:
        """The group state every live model state agrees on, else ``?`` (before this request).
        States holding a request back in case a later one is handled first (the model's
        ``provisional``) do not count while a state in send order lives."""
        states = [s for s in self.checker.states if not self.model.provisional(s)]
        names = {self.model.group_state(s) for s in states or self.checker.states}
        name = names.pop() if len(names) == 1 else None
        return "?" if name is None else name

    def input_class(self, command: Request) -> dict[str, str]:
        """``{"input_class": …}``: the field class of ``command`` every live model state agrees
        on (``Model.input_class``, states as in :meth:`_group_state`), ``?`` when they do not;
        empty for a model or request type without classes."""
        states = [s for s in self.checker.states if not self.model.provisional(s)]
        names = {self.model.input_class(s, command) for s in states or self.checker.states}
        names.discard(None)
        if not names:
            return {}
        return {"input_class": str(names.pop()) if len(names) == 1 else "?"}

    @property
    def divergence(self) -> Divergence | None:
        return self.checker.divergence

    @property
    def known_bug(self) -> KnownBugHit | None:
        """Set when only a known Kafka bug explains the history (``model/known_bugs.py``)."""
        return self.checker.known_bug

    # ------------------------------------------------------------------ driving
    def execute(self, command: Command) -> StepResult:
        """Run one command and collect its step's responses."""
        step = self.step
        self.step += 1
        received: list[tuple[int, Response]] = []
        request_id: int | None = None
        if not isinstance(command, Tick):
            # e.g. open the client's connection now: a handshake reads other connections' answers,
            # which must be recorded before this request, as they arrived before it was written
            self.target.prepare(command.client)
        self._read_arrived(step, received)
        if not isinstance(command, Tick):
            self._settle(step, received)
        if self.divergence is not None:  # what arrived already diverges: do not send more
            pass
        elif isinstance(command, Tick):
            start = self.target.now_ms()
            self._record(TickEvent(step=step, at_ms=start, ms=command.ms))
            end = start + command.ms
            while (now := self.target.now_ms()) < end and self.divergence is None:
                for a in self.target.poll(min(self.config.poll_slice_ms * 5, end - now)):
                    self._receive(step, a, received)
        else:
            if self.target.in_flight(command.client):
                raise ValueError(
                    f"{command.client} already has a request in flight; "
                    "one request per client connection (the broker mutes the connection)"
                )
            request_id = self._next_request
            self._next_request += 1
            self.requests[request_id] = command
            at = self.target.now_ms()
            try:
                self.target.send(request_id, command)
            finally:  # a request the target failed to carry out (TargetError) is in the history
                self._sent_at[request_id] = at
                self._record(
                    Invoke(step=step, at_ms=at, request_id=request_id, command=command),
                    {"group_state": self._group_state(), **self.input_class(command)},
                )
        if self.divergence is None:
            self._collect(step, received)
        return StepResult(
            step=step,
            command=command,
            request_id=request_id,
            received=tuple(received),
            divergence=self.divergence,
        )

    def _read_arrived(self, step: int, received: list[tuple[int, Response]]) -> None:
        """Record whatever has already arrived, without waiting (step 0 in the module docstring)."""
        if self.divergence is None:
            for a in self.target.poll(0.0):
                self._receive(step, a, received)

    def _settle(self, step: int, received: list[tuple[int, Response]]) -> None:
        """Wait until every unanswered request has been out ``settle_ms`` (recording what arrives
        meanwhile; an answer ends the wait for its request at once)."""
        while self.divergence is None:
            now = self.target.now_ms()
            for rid in [
                r
                for r, at in self._sent_at.items()
                if r in self.answered or at <= now - self.config.settle_ms
            ]:
                del self._sent_at[rid]
            if not self._sent_at:
                return
            until = max(self._sent_at.values()) + self.config.settle_ms
            for a in self.target.poll(max(0.0, min(self.config.poll_slice_ms, until - now))):
                self._receive(step, a, received)

    def _collect(self, step: int, received: list[tuple[int, Response]]) -> None:
        start = self.target.now_ms()
        quiet_end = start + self.config.quiet_ms
        hard_end = start + self.hang_ms
        grace_end: float | None = None  # set once the "must" responses are in, kept while a
        # "may" response is still out
        while self.divergence is None:
            now = self.target.now_ms()
            if now >= hard_end:
                break
            if self.checker.due(now) - self.answered:
                limit = hard_end - now
            else:
                if grace_end is None:
                    grace_end = now + self.config.grace_ms
                maybe = self.checker.may_answer() - self.answered
                end = max(grace_end if maybe else now, quiet_end)
                if now >= end:
                    break
                limit = end - now
            for a in self.target.poll(max(0.0, min(self.config.poll_slice_ms, limit))):
                self._receive(step, a, received)
        if self.divergence is None:
            self._record(Quiet(step=step, at_ms=self.target.now_ms()))

    def finish(self) -> list[tuple[int, Response]]:
        """End of a sequence, before the target is closed: record what is still arriving.

        Listens at least ``final_ms`` while a request is unanswered (nothing else can arrive);
        waits for every response every live state has emitted (as a step does, up to
        ``must_timeout_ms``), and for as long as some live state has emitted one that has not
        arrived, up to the checker's whole tolerance window (``early_ms + late_ms``: past it every
        state agrees whether the timer behind it fired). Then records ``Quiet``.
        Returns what arrived. Calling it again only listens again."""
        received: list[tuple[int, Response]] = []
        if self.divergence is not None:
            return received
        step = self.step
        start = self.target.now_ms()
        # with every request answered nothing more can arrive: one read, no listening
        unanswered = set(self.requests) - self.answered
        final_end = start + (self.config.final_ms if unanswered else 0.0)
        may_end = start + self.checker_config.early_ms + self.checker_config.late_ms
        hard_end = start + self.hang_ms
        while self.divergence is None:
            now = self.target.now_ms()
            if now >= hard_end:
                break
            if self.checker.due(now) - self.answered:
                end = hard_end
            elif now < may_end and self.checker.may_answer() - self.answered:
                end = may_end
            else:
                end = final_end
            if now >= end:
                break
            for a in self.target.poll(max(0.0, min(self.config.poll_slice_ms, end - now))):
                self._receive(step, a, received)
        if self.divergence is None:
            self._record(Quiet(step=step, at_ms=self.target.now_ms()))
        return received

    def inject(self, fault: FaultStep, perform: FaultRunner) -> StepResult:
        """Perform a nemesis action through ``perform`` and record it as a ``Fault`` event."""
        step = self.step
        self.step += 1
        received: list[tuple[int, Response]] = []
        self._read_arrived(step, received)
        self._settle(step, received)
        if self.divergence is not None:
            return StepResult(
                step=step,
                command=Tick(ms=0),
                request_id=None,
                received=tuple(received),
                divergence=self.divergence,
            )
        at = self.target.now_ms()
        served_by = perform(fault.action, fault.node)
        served_at = self.target.now_ms() if served_by is not None else None
        self._record(
            Fault(
                step=step,
                at_ms=at,
                action=fault.action,
                node=fault.node,
                served_by=served_by,
                served_at_ms=served_at,
            )
        )
        if self.divergence is None:
            self._collect(step, received)
        return StepResult(
            step=step,
            command=Tick(ms=0),
            request_id=None,
            received=tuple(received),
            divergence=self.divergence,
        )

    def run(
        self,
        commands: Iterable[Command | FaultStep],
        *,
        stop_at_divergence: bool = True,
        faults: FaultRunner | None = None,
        finish: bool = True,
    ) -> Divergence | None:
        """Run a whole sequence; with ``finish`` (default) end it with :meth:`finish`, as the
        suite ends each example, so a replay checks the same tail the recording did."""
        for c in commands:
            if isinstance(c, FaultStep):
                if faults is None:
                    raise ValueError(
                        f"the sequence injects a fault ({c.action} node {c.node}) but this target "
                        "has no nemesis; replay it against a broker kgc started itself"
                    )
                self.inject(c, faults)
            elif isinstance(c, Tick) or not self.target.in_flight(c.client):
                self.execute(c)
            else:  # a replayed command whose client is still waiting: let it finish first
                self._drain(c.client)
                self.execute(c)
            if stop_at_divergence and self.divergence is not None:
                break
        if finish:
            self.finish()
        return self.divergence

    def _drain(self, client: str) -> None:
        """Wait (recording what arrives) until ``client``'s request is answered: a replayed
        command whose client is still waiting. Counted in ``drains``: that wait is in no recorded
        command, so a history that needed one may not replay the same from its commands."""
        self.drains += 1
        end = self.target.now_ms() + self.hang_ms
        received: list[tuple[int, Response]] = []
        while self.target.in_flight(client) and self.target.now_ms() < end:
            for a in self.target.poll(self.config.poll_slice_ms):
                self._receive(self.step, a, received)
