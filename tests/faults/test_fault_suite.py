"""The classic differential suite with nemesis rules, live on a 3-node KRaft cluster kgc started.

* A short random fault-mixed search (kill / pause / resume / restart interleaved with the group
  rules) finds no divergence between Kafka and :class:`~kgc.model.cluster_group.ClusterGroupModel`.

Not here yet: a live test that the broken variant ``failover-forgets-generation`` is caught and
shrunk by this search (issue 6); the model-level catch is
``test_cluster_group_model.py::test_a_new_coordinator_that_forgot_the_generation_is_caught``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.fault_suite import run_fault_suite

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
