"""``model/classic/generate.py``: synthetic histories are deterministic, time-ordered and
complete."""

from __future__ import annotations

import json

from kgc.model import ClassicGroupModel, GroupConfig
from kgc.model.classic.generate import DeliveryPolicy, generate
from kgc.model.commands import Tick
from kgc.model.history import Invoke, Quiet, Receive, event_to_json
from model_harness import heartbeat, join, sync

CFG = GroupConfig(group_min_session_timeout_ms=500, group_initial_rebalance_delay_ms=100)
COMMANDS = [
    join("c1", version=3, session=1_000),
    join("c2", version=3, session=1_000),
    Tick(ms=250),  # the initial delay (extended once: c2 joined during it) passes: generation 1
    sync("c2", "c2-1", 1),
    sync("c1", "c1-1", 1, [("c1-1", "x"), ("c2-1", "y")]),
    heartbeat("c1", "c1-1", 1),
    Tick(ms=2_000),  # both sessions run out: the group empties
]


def test_generated_history_is_deterministic_ordered_and_complete() -> None:
    model = ClassicGroupModel(CFG)
    a = generate(model, COMMANDS, DeliveryPolicy(latency_ms=2.0))
    b = generate(model, COMMANDS, DeliveryPolicy(latency_ms=2.0))
    assert a == b
    times = [e.at_ms for e in a.events]
    assert times == sorted(times)
    invoked = {e.request_id for e in a.events if isinstance(e, Invoke)}
    received = {e.request_id: e.response for e in a.events if isinstance(e, Receive)}
    assert invoked == set(received) == {1, 2, 3, 4, 5}
    assert received[1].generation_id == received[2].generation_id == 1  # type: ignore[union-attr]
    assert received[3].assignment == "y" and received[4].assignment == "x"  # type: ignore[union-attr]
    assert sum(isinstance(e, Quiet) for e in a.events) == len(COMMANDS)
    assert a.final_state.state == "Empty" and a.final_state.generation_id == 2
    json.dumps([event_to_json(e) for e in a.events])  # serialisable as is
