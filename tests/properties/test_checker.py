"""The checker's fold, on a toy model small enough to reason about by hand.

The toy: a Heartbeat is answered NONE exactly 100 ms after it is sent (a timer), a DescribeGroups
at once with state "Stable". Each test is one short history with a comment saying what goes wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from kgc.model.checker import Checker, CheckerConfig, Model, check
from kgc.model.commands import (
    DescribeGroups,
    DescribeGroupsResponse,
    Heartbeat,
    HeartbeatResponse,
    Request,
    Response,
)
from kgc.model.history import Invoke, Quiet, Receive

DELAY = 100.0


@dataclass(frozen=True, slots=True)
class ToyState:
    timers: tuple[tuple[float, int], ...] = ()  # (deadline, request id)
    out: tuple[tuple[int, Response, float], ...] = ()


class Toy(Model[ToyState]):
    def initial(self) -> ToyState:
        return ToyState()

    def advance(
        self, state: ToyState, *, must_until: float, may_until: float
    ) -> Iterable[ToyState]:
        timers = sorted(state.timers)
        results = []
        # fire a prefix: all "must" timers, then 0..k of the "may" ones
        must = [t for t in timers if t[0] <= must_until]
        may = [t for t in timers if must_until < t[0] <= may_until]
        for k in range(len(may) + 1):
            fired = must + may[:k]
            rest = tuple(t for t in timers if t not in fired)
            out = state.out + tuple((rid, HeartbeatResponse(error="NONE"), d) for d, rid in fired)
            results.append(ToyState(timers=rest, out=out))
        return results

    def invoke(
        self, state: ToyState, *, request_id: int, command: Request, at_ms: float
    ) -> Iterable[ToyState]:
        if isinstance(command, Heartbeat):
            return [replace(state, timers=state.timers + ((at_ms + DELAY, request_id),))]
        resp = DescribeGroupsResponse(error="NONE", group_state="Stable")
        return [replace(state, out=state.out + ((request_id, resp, at_ms),))]

    def outbox(self, state: ToyState) -> Mapping[int, tuple[Response, float]]:
        return {rid: (r, at) for rid, r, at in state.out}

    def deliver(self, state: ToyState, request_id: int) -> ToyState:
        return replace(state, out=tuple(o for o in state.out if o[0] != request_id))

    def fault(self, state: ToyState, *, action: str, node: int, at_ms: float) -> Iterable[ToyState]:
        return [state]


CFG = CheckerConfig(early_ms=10, late_ms=50, latency_bound_ms=500)
HB = Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=4)
DG = DescribeGroups(client="c1", version=5)
OK = HeartbeatResponse(error="NONE")


def test_response_on_time_passes():
    history = [
        Invoke(step=0, at_ms=0, request_id=0, command=HB),
        Receive(step=0, at_ms=101, request_id=0, response=OK),
        Quiet(step=0, at_ms=150),
    ]
    assert check(Toy(), history, CFG) is None


def test_response_within_late_window_passes():
    # fired 40 ms after its deadline: inside late_ms = 50, so allowed
    history = [
        Invoke(step=0, at_ms=0, request_id=0, command=HB),
        Receive(step=0, at_ms=140, request_id=0, response=OK),
    ]
    assert check(Toy(), history, CFG) is None


def test_response_too_early_diverges():
    # answered 30 ms before its 100 ms deadline: earlier than early_ms = 10 allows
    history = [
        Invoke(step=0, at_ms=0, request_id=0, command=HB),
        Receive(step=0, at_ms=70, request_id=0, response=OK),
    ]
    d = check(Toy(), history, CFG)
    assert d is not None and d.index == 1
    assert "no response yet" in d.allowed[0]


def test_wrong_response_diverges_at_that_event():
    # DescribeGroups must say Stable; the target said Empty
    history = [
        Invoke(step=0, at_ms=0, request_id=0, command=DG),
        Receive(
            step=0,
            at_ms=1,
            request_id=0,
            response=DescribeGroupsResponse(error="NONE", group_state="Empty"),
        ),
    ]
    d = check(Toy(), history, CFG)
    assert d is not None and d.index == 1
    assert "Stable" in d.allowed[0]


def test_missing_response_is_a_divergence_not_a_hang():
    # the heartbeat answer was due at 100 ms; by 700 ms (past latency_bound 500) nothing came
    history = [
        Invoke(step=0, at_ms=0, request_id=0, command=HB),
        Quiet(step=0, at_ms=300),
        Quiet(step=1, at_ms=700),
    ]
    c = Checker(Toy(), CFG)
    assert c.feed(history[0]) is None
    assert c.feed(history[1]) is None  # still plausible: emitted at 100, bound not yet passed
    d = c.feed(history[2])
    assert d is not None and d.index == 2 and "never arrived" in d.reason


def test_due_tracks_timers_without_committing():
    c = Checker(Toy(), CFG)
    c.feed(Invoke(step=0, at_ms=0, request_id=0, command=HB))
    assert c.due(90) == frozenset()  # deadline 100 not reached
    assert c.may_answer() == frozenset()
    assert c.due(100 + CFG.late_ms) == frozenset({0})  # must have fired by deadline + late
    assert c.due(100) == frozenset()  # inside the window only "may": not waited for
    assert len(c.states) == 1  # lookahead did not change the set


def test_branching_keeps_both_outcomes_inside_the_window():
    # at 95 ms the 100 ms timer may or may not have fired (early_ms = 10): both states survive
    c = Checker(Toy(), CFG)
    c.feed(Invoke(step=0, at_ms=0, request_id=0, command=HB))
    c.feed(Quiet(step=0, at_ms=95))
    assert len(c.states) == 2
    assert c.feed(Receive(step=1, at_ms=96, request_id=0, response=OK)) is None
    assert len(c.states) == 1
