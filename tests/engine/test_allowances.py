"""Allowances used (``engine/allowances.py``): a history counts as passing only through an
allowance when it passes with it and diverges with it switched off alone.

Histories: one recorded on Apache Kafka 4.3.1 (a group deleted by the cleanup, then made anew), one
written from what 4.3.1 did with two joins sent 0.4 ms apart (``test_model_nondeterminism``), and
one the model itself generates (which needs nothing)."""

from __future__ import annotations

import copy
from pathlib import Path

from kgc.engine.allowances import ALLOWANCES, allowances_used, passes
from kgc.engine.traces import Trace, load
from kgc.model import ClassicGroupModel, GroupConfig
from kgc.model.classic.generate import generate
from kgc.model.commands import Tick

from tests.model.model_harness import join, joins_handled_out_of_order

DATA = Path(__file__).parent.parent / "model" / "data"
CHECKER = {"early_ms": 20.0, "late_ms": 100.0, "latency_bound_ms": 3000.0, "max_states": 4096}


def _record(**config: object) -> dict[str, object]:
    base = {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0}
    return {"name": "ClassicGroupModel", "profile": "kafka-4.x", "config": {**base, **config}}


def _trace(events: list[object], **config: object) -> Trace:
    manifest = {"group_id": "kgc-group", "model": _record(**config), "checker": dict(CHECKER)}
    return Trace(manifest=manifest, events=list(events), result={"verdict": "pass"})


def test_the_recorded_cleanup_is_an_allowance_the_history_needed() -> None:
    recorded = load(DATA / "empty_group_deleted_4.3.1.json")
    trace = Trace(
        manifest=recorded.manifest, events=list(recorded.events), result={"verdict": "pass"}
    )
    used = allowances_used(trace)
    assert "cleanup" in used
    assert "reorder" not in used  # nothing was sent close together


def test_two_joins_handled_out_of_order_need_the_reorder_window() -> None:
    events = joins_handled_out_of_order()
    trace = _trace(events, reorder_window_ms=100.0, empty_group_may_vanish=False)
    assert allowances_used(trace) == ["reorder"]
    # switched off in the record itself, the history does not pass at all
    assert not passes(_trace(events).manifest, events)


def test_a_history_the_model_generated_needs_no_allowance() -> None:
    config = GroupConfig(group_min_session_timeout_ms=500, group_initial_rebalance_delay_ms=0)
    gen = generate(
        ClassicGroupModel(config), [join("c1", version=4), Tick(ms=5), join("c2", version=4)]
    )
    trace = _trace(list(gen.events), reorder_window_ms=100.0, empty_group_may_vanish=True)
    assert allowances_used(trace) == []


def test_a_divergence_uses_no_allowance_and_switches_leave_the_trace_alone() -> None:
    recorded = load(DATA / "empty_group_deleted_4.3.1.json")
    before = copy.deepcopy(recorded.manifest)
    assert recorded.result["verdict"] == "divergence"
    assert allowances_used(recorded) == []
    for switch_off in ALLOWANCES.values():  # each works on a copy
        switch_off(copy.deepcopy(recorded.manifest))
    assert recorded.manifest == before


def test_the_cleanup_switch_reads_each_config_kind_default() -> None:
    switch_off = ALLOWANCES["cleanup"]
    # a record that leaves the setting out: off in GroupConfig, on in ConsumerGroupConfig
    for name, on in (("ClassicGroupModel", False), ("ClusterGroupModel", False)):
        assert switch_off({"model": {"name": name, "config": {}}}) is on
    consumer = {"model": {"name": "ConsumerGroupModel", "config": {}}}
    assert switch_off(consumer) is True
    assert consumer["model"]["config"]["empty_group_may_vanish"] is False
    mixed = {"model": {"name": "MigratingGroupModel", "classic": {}, "consumer": {}}}
    assert switch_off(mixed) is True
    assert mixed["model"]["classic"] == {}  # off already
    assert mixed["model"]["consumer"] == {"empty_group_may_vanish": False}
    launched = {"model": _record(empty_group_may_vanish=False, reorder_window_ms=100.0)}
    assert switch_off(launched) is False  # a broker kgc launched: nothing to switch off
