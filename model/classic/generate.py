"""Synthetic histories from the model alone: what a perfectly conforming broker would produce.

Role: given a command list (requests and ``Tick`` s) and a deterministic delivery policy,
:func:`generate` plays the model as if it were the broker and records the history a driver would
have recorded — ``Invoke`` when a request is sent, ``Receive`` when its response arrives
(``latency_ms`` after the model emitted it), ``Tick`` for each pause and a ``Quiet`` at the end of
each step. Time is exact here: each timer fires at its deadline, requests are processed when sent,
and where the model allows several outcomes ``pick`` chooses (default: the first the model lists,
which is deterministic). The result is self-consistent: the checker accepts it under any tolerance
(its windows always contain the exact times used here).

Uses: synthetic corpora for the Spark pipeline, and the replay property tests of the model.
Pure: no clock, no randomness — the same inputs give the same history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgc.model.classic.group import ClassicGroupModel
from kgc.model.classic.state import GroupState
from kgc.model.commands import Command, Tick
from kgc.model.history import Event, Invoke, Quiet, Receive
from kgc.model.history import Tick as TickEvent

Pick = Callable[[Sequence[GroupState]], GroupState]


def first(states: Sequence[GroupState]) -> GroupState:
    return states[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryPolicy:
    latency_ms: float = 1.0  # a response arrives this long after the model emitted it
    quiet: bool = True  # record a Quiet event at the end of every step
    start_ms: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Generated:
    events: tuple[Event, ...]
    final_state: GroupState
    end_ms: float


def generate(
    model: ClassicGroupModel,
    commands: Sequence[Command],
    policy: DeliveryPolicy | None = None,
    pick: Pick = first,
) -> Generated:
    """Play ``commands`` against ``model`` and record the history a driver would see."""
    p = policy or DeliveryPolicy()
    t = p.start_ms
    state = model.initial()
    events: list[Event] = []
    request_id = 0

    def settle(until: float, step: int) -> None:
        """Fire timers and deliver responses, in time order, up to ``until``."""
        nonlocal state
        while True:
            timer = model.next_timer(state)
            out = model.outbox(state)
            arrival = min(((at + p.latency_ms, rid) for rid, (_, at) in out.items()), default=None)
            next_timer = timer[0] if timer is not None and timer[0] <= until else None
            next_arrival = arrival if arrival is not None and arrival[0] <= until else None
            if next_timer is None and next_arrival is None:
                return
            if next_arrival is not None and (next_timer is None or next_arrival[0] <= next_timer):
                at, rid = next_arrival
                response = out[rid][0]
                events.append(Receive(step=step, at_ms=at, request_id=rid, response=response))
                state = model.deliver(state, rid)
            else:
                assert timer is not None
                state = pick(model.fire(state, timer))

    for step, command in enumerate(commands):
        if isinstance(command, Tick):
            events.append(TickEvent(step=step, at_ms=t, ms=command.ms))
            t += command.ms
            settle(t, step)
        else:
            settle(t, step)
            request_id += 1
            events.append(Invoke(step=step, at_ms=t, request_id=request_id, command=command))
            state = pick(model.invoke(state, request_id=request_id, command=command, at_ms=t))
            settle(t + p.latency_ms, step)
            t += p.latency_ms
        if p.quiet:
            events.append(Quiet(step=step, at_ms=t))
    return Generated(events=tuple(events), final_state=state, end_ms=t)
