"""The classic differential suite with nemesis rules, live on a 3-node KRaft cluster kgc started.

* A short random fault-mixed search (kill / pause / resume / restart interleaved with the group
  rules) finds no divergence between Kafka and
  :class:`~kgc.model.classic.cluster_group.ClusterGroupModel`.

* With the broken variant ``failover-forgets-generation`` in force (a new coordinator loads the
  group at generation 0), the same search against the same cluster reports a divergence, shrunk,
  and its saved trace replays (``replay_faulty``, as ``kgc replay`` does: same commands, same
  faults at the same steps) to a divergence again; without the variant the replay passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.drivers.fault_suite import replay_faulty, run_fault_suite
from kgc.engine.broken import broken
from kgc.engine.traces import load, render
from kgc.model.history import Fault

pytestmark = [pytest.mark.broker, pytest.mark.faults]

SEED = 20261121


def test_fault_mixed_search_finds_no_divergence(
    kraft3: Any, kraft_nemesis: Any, tmp_path: Path, say: Any
) -> None:
    result = run_fault_suite(
        kraft3,
        seed=SEED,
        traces_dir=str(tmp_path),
        settings_overrides={"max_examples": 6, "stateful_step_count": 14},
    )
    faults = {k[1]: n for k, n in result.coverage.items() if k[0] == "Fault"}
    say(
        f"fault suite: {result.examples} examples, {result.commands} commands, faults {faults}, "
        f"{result.wall_s:.1f} s, failure={result.failure}"
    )
    assert result.failure is None, result.message
    assert result.examples >= 6
    assert sum(faults.values()) >= 2, (
        f"the search injected too few faults to mean anything: {faults}"
    )


def test_fault_search_catches_a_coordinator_that_forgets_the_generation(
    kraft3: Any, kraft_nemesis: Any, tmp_path: Path, say: Any
) -> None:
    with broken("failover-forgets-generation"):
        result = run_fault_suite(
            kraft3,
            seed=SEED,
            traces_dir=str(tmp_path),
            settings_overrides={"max_examples": 10, "stateful_step_count": 14},
            shrink_budget_s=60,
        )
    say(
        f"forgets-generation: {result.examples} examples, {result.commands} commands, "
        f"{result.wall_s:.1f} s, failure={result.failure}"
    )
    assert result.failure == "divergence", f"{result.failure}: {result.message[:2000]}"
    [saved] = result.saved
    trace = load(saved)
    faults = [(e.step, e.action, e.node) for e in trace.events if e.kind == "fault"]
    # each fault records the node the runner then saw serve the group (the model's loading bound)
    assert faults and all(
        e.served_by is not None and e.served_at_ms is not None and e.served_at_ms >= e.at_ms
        for e in trace.events
        if isinstance(e, Fault)
    ), [e for e in trace.events if isinstance(e, Fault)]
    say(f"shrunk: {len(trace.commands)} commands, faults {faults}\n{render(trace)}")
    assert faults, "the divergence needs no fault: not the failover variant's"
    with broken("failover-forgets-generation"):
        again = replay_faulty(kraft3, trace)
    assert again.engine.divergence is not None, f"replay did not fail again:\n{render(again.trace)}"
    unbroken = replay_faulty(kraft3, trace)
    assert unbroken.engine.divergence is None, (
        f"the unbroken model diverges too:\n{render(unbroken.trace)}"
    )
