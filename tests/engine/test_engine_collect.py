"""How long the engine listens per step, and why a response it did not wait for is not lost.

A toy model small enough to reason about by hand, and a scripted target on a virtual clock (the
test decides when each answer arrives and how much time passes between steps). The toy:

* a Heartbeat is answered NONE at once (every state has emitted it: the engine must wait for it);
* a JoinGroup stays pending until another client's LeaveGroup completes it (the engine cannot
  expect it before that);
* a DescribeGroups may be answered at once or later (two successor states: a "may").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from kgc.engine.loop import Engine, EngineConfig
from kgc.engine.target import Arrival, Target
from kgc.model.checker import CheckerConfig, Model, check
from kgc.model.commands import (
    DescribeGroups,
    DescribeGroupsResponse,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    MemberIdentity,
    Protocol,
    Request,
    Response,
)
from kgc.model.history import Invoke, Quiet, Receive

JOINED = JoinGroupResponse(error="NONE", generation_id=1, member_id="c1-1", leader="c1-1")
STABLE = DescribeGroupsResponse(error="NONE", group_state="Stable")


@dataclass(frozen=True, slots=True)
class ToyState:
    pending_join: int | None = None
    pending_describe: tuple[int, float] | None = None
    out: tuple[tuple[int, Response, float], ...] = ()


class Toy(Model[ToyState]):
    def initial(self) -> ToyState:
        return ToyState()

    def advance(
        self, state: ToyState, *, must_until: float, may_until: float
    ) -> Iterable[ToyState]:
        return [state]

    def invoke(
        self, state: ToyState, *, request_id: int, command: Request, at_ms: float
    ) -> Iterable[ToyState]:
        if isinstance(command, Heartbeat):
            return [
                replace(
                    state, out=(*state.out, (request_id, HeartbeatResponse(error="NONE"), at_ms))
                )
            ]
        if isinstance(command, JoinGroup):
            return [replace(state, pending_join=request_id)]
        if isinstance(command, LeaveGroup):
            out = (*state.out, (request_id, LeaveGroupResponse(error="NONE"), at_ms))
            if state.pending_join is not None:  # the last other member left: the join completes
                out = (*out, (state.pending_join, JOINED, at_ms))
            return [replace(state, pending_join=None, out=out)]
        assert isinstance(command, DescribeGroups)
        answered = replace(state, out=(*state.out, (request_id, STABLE, at_ms)))
        return [answered, replace(state, pending_describe=(request_id, at_ms))]

    def outbox(self, state: ToyState) -> Mapping[int, tuple[Response, float]]:
        return {rid: (r, at) for rid, r, at in state.out}

    def deliver(self, state: ToyState, request_id: int) -> ToyState:
        if state.pending_describe and state.pending_describe[0] == request_id:
            state = replace(state, pending_describe=None)  # answered after all
        return replace(state, out=tuple(o for o in state.out if o[0] != request_id))

    def fault(self, state: ToyState, *, action: str, node: int, at_ms: float) -> Iterable[ToyState]:
        return [state]


class ScriptedTarget(Target):
    """A target on a virtual clock. ``answer(command)`` gives ``(response, delay_ms)`` or ``None``
    (never answered). ``poll`` returns as soon as an answer is due, like a ``select``."""

    def __init__(self, answer: Callable[[Request], tuple[Response, float] | None]) -> None:
        self.clock = 0.0
        self.answer = answer
        self.sent: list[Request] = []
        self.polled_ms = 0.0
        self._due: list[tuple[float, int, str, Response]] = []  # (at, request id, client, resp)

    def now_ms(self) -> float:
        return self.clock

    def send(self, request_id: int, command: Request) -> None:
        self.sent.append(command)
        got = self.answer(command)
        if got is not None:
            response, delay = got
            self._due.append((self.clock + delay, request_id, command.client, response))
        else:
            self._due.append((float("inf"), request_id, command.client, STABLE))

    def poll(self, timeout_ms: float) -> list[Arrival]:
        ready = [d for d in self._due if d[0] <= self.clock + timeout_ms]
        if ready:
            step = max(0.0, min(d[0] for d in ready) - self.clock)
            self.clock += step
            self.polled_ms += step
        else:
            self.clock += timeout_ms
            self.polled_ms += timeout_ms
        out = sorted((d for d in self._due if d[0] <= self.clock), key=lambda d: d[0])
        self._due = [d for d in self._due if d[0] > self.clock]
        return [Arrival(request_id=rid, response=r, at_ms=at) for at, rid, _, r in out]

    def in_flight(self, client: str) -> bool:
        return any(d[2] == client for d in self._due)

    def describe(self) -> dict[str, str]:
        return {"implementation": "scripted"}

    def close(self) -> None:
        pass


def _join(client: str = "c1") -> JoinGroup:
    return JoinGroup(
        client=client,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocols=(Protocol(name="range"),),
        version=5,
    )


def _leave(client: str = "c2") -> LeaveGroup:
    return LeaveGroup(client=client, members=(MemberIdentity(member_id="c2-1"),), version=3)


HEARTBEAT = Heartbeat(client="c2", member_id="c2-1", generation_id=1, version=3)


def _engine(target: ScriptedTarget, **config: float) -> Engine:
    return Engine(
        target,
        Toy(),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        config=EngineConfig(**config),
    )


def test_a_step_whose_answers_are_in_does_not_listen_on():
    # the heartbeat is answered after 1 ms; nothing else can come: the step ends right there
    target = ScriptedTarget(lambda c: (HeartbeatResponse(error="NONE"), 1.0))
    engine = _engine(target)
    result = engine.execute(HEARTBEAT)
    assert [r for _, r in result.received] == [HeartbeatResponse(error="NONE")]
    assert target.clock == 1.0 and engine.divergence is None
    # the old behaviour, still available: listen a fixed 20 ms after every request
    old = ScriptedTarget(lambda c: (HeartbeatResponse(error="NONE"), 1.0))
    _engine(old, quiet_ms=20.0).execute(HEARTBEAT)
    assert old.clock == 20.0


def test_a_step_some_state_may_answer_listens_grace_ms():
    # DescribeGroups may be answered now or later: the engine listens up to grace_ms for it
    target = ScriptedTarget(lambda c: (STABLE, 3.0))
    result = _engine(target, grace_ms=5.0).execute(DescribeGroups(client="c1", version=5))
    assert [r for _, r in result.received] == [STABLE] and target.clock == 3.0
    # an answer later than the grace is read by the next step, not lost
    late = ScriptedTarget(
        lambda c: (
            (STABLE, 9.0)
            if isinstance(c, DescribeGroups)
            else (HeartbeatResponse(error="NONE"), 1.0)
        )
    )
    engine = _engine(late, grace_ms=5.0)
    assert engine.execute(DescribeGroups(client="c1", version=5)).received == ()
    assert late.clock == 5.0
    late.clock += 5.0  # the machine draws its next command
    nxt = engine.execute(HEARTBEAT)
    assert [r for _, r in nxt.received] == [STABLE, HeartbeatResponse(error="NONE")]
    assert engine.divergence is None


def test_a_join_answered_too_early_is_recorded_before_the_next_request():
    # The broker answers c1's JoinGroup after 2 ms, though it cannot complete before c2 leaves.
    # The engine does not wait for an answer no state allows; the answer arrives while the next
    # command is drawn. It must be recorded *before* c2's LeaveGroup is sent: recorded after it,
    # the toy would accept it (the leave completes the join) and the bug would be hidden.
    target = ScriptedTarget(
        lambda c: (
            (JOINED, 2.0) if isinstance(c, JoinGroup) else (LeaveGroupResponse(error="NONE"), 1.0)
        )
    )
    engine = _engine(target)
    first = engine.execute(_join())
    assert first.received == () and target.clock == 0.0  # nothing waited for
    target.clock += 4.0
    second = engine.execute(_leave())
    assert engine.divergence is not None
    assert isinstance(engine.divergence.event, Receive) and engine.divergence.event.request_id == 0
    assert engine.divergence.event.at_ms == 2.0  # stamped when it arrived
    assert [type(c) for c in target.sent] == [JoinGroup]  # the leave was never sent
    assert second.request_id is None
    # the control: the same answer recorded after the leave passes the checker (masked)
    masked = [
        engine.events[0],
        Invoke(step=1, at_ms=4.0, request_id=1, command=_leave()),
        Receive(step=1, at_ms=4.5, request_id=0, response=JOINED),
    ]
    assert check(Toy(), masked, CheckerConfig(early_ms=0, late_ms=0)) is None


def test_an_answer_after_the_last_step_is_checked_by_finish():
    # The join is answered 10 ms after the last step: without finish it would be dropped with the
    # connection; finish listens final_ms and the checker sees it (here: a divergence)
    target = ScriptedTarget(lambda c: (JOINED, 10.0))
    engine = _engine(target, final_ms=20.0)
    engine.execute(_join())
    assert engine.divergence is None
    got = engine.finish()
    assert [r for _, r in got] == [JOINED]
    assert engine.divergence is not None and engine.divergence.event.request_id == 0


def test_finish_records_quiet_and_run_ends_with_it():
    target = ScriptedTarget(lambda c: (HeartbeatResponse(error="NONE"), 1.0))
    engine = _engine(target, final_ms=20.0)
    assert engine.run([HEARTBEAT]) is None
    # everything answered: nothing more can come, finish only reads and records Quiet
    assert isinstance(engine.events[-1], Quiet) and engine.events[-1].at_ms == 1.0
    kinds = [type(e).__name__ for e in engine.events]
    assert kinds == ["Invoke", "Receive", "Quiet", "Quiet"]
    # a request still pending (a parked join): finish listens final_ms for it
    pending = ScriptedTarget(lambda c: None)
    engine = _engine(pending, final_ms=20.0)
    assert engine.run([_join()]) is None
    assert isinstance(engine.events[-1], Quiet) and engine.events[-1].at_ms == 20.0


def test_finish_waits_for_a_may_answer_within_the_tolerance_window():
    # A DescribeGroups some state has answered arrives 60 ms after the last step: past final_ms,
    # inside early_ms + late_ms, so finish still waits for it
    target = ScriptedTarget(lambda c: (STABLE, 60.0))
    engine = Engine(
        target,
        Toy(),
        checker_config=CheckerConfig(early_ms=20, late_ms=100),
        config=EngineConfig(grace_ms=0.0, final_ms=20.0),
    )
    engine.execute(DescribeGroups(client="c1", version=5))
    assert [r for _, r in engine.finish()] == [STABLE]
    assert engine.divergence is None


def test_a_request_waits_until_an_unanswered_one_has_been_out_settle_ms():
    # c1's join stays pending; c2's heartbeat drawn 4 ms later goes out only at 20 ms, so the
    # broker cannot apply it before the join (requests on two connections close together may be
    # applied in either order)
    target = ScriptedTarget(
        lambda c: None if isinstance(c, JoinGroup) else (HeartbeatResponse(error="NONE"), 1.0)
    )
    engine = _engine(target, settle_ms=20.0)
    engine.execute(_join())
    target.clock += 4.0
    engine.execute(HEARTBEAT)
    (invoke,) = [e for e in engine.events if isinstance(e, Invoke) and e.request_id == 1]
    assert invoke.at_ms == 20.0
    # a request that follows answered ones is sent at once
    target.clock += 1.0
    engine.execute(HEARTBEAT)
    assert [e.at_ms for e in engine.events if isinstance(e, Invoke)][-1] == target.clock - 1.0


def test_the_settle_wait_ends_when_the_unanswered_request_is_answered():
    # the join is answered (wrongly, here) at 8 ms: the wait ends there and the answer is recorded
    # before the next request
    target = ScriptedTarget(
        lambda c: (
            (JOINED, 8.0) if isinstance(c, JoinGroup) else (HeartbeatResponse(error="NONE"), 1.0)
        )
    )
    engine = _engine(target, settle_ms=20.0)
    engine.execute(_join())
    engine.execute(HEARTBEAT)
    assert engine.divergence is not None and engine.divergence.event.at_ms == 8.0
    assert target.clock == 8.0 and len(target.sent) == 1
