"""``kgc check --workers N`` (``conformance/drivers/workers.py``): several searches at once, one
result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.drivers.suite import SEARCH_PROFILES, SuiteResult
from kgc.conformance.drivers.workers import TASKS_PER_WORKER, merge, plan, run_workers


def test_the_plan_makes_the_profiles_examples_once_per_worker_in_shorter_searches() -> None:
    tasks = plan("ci", 4, seed=2**32 - 2)
    per_search = SEARCH_PROFILES["ci"]["max_examples"]
    assert sum(n for _, n in tasks) == 4 * per_search
    assert len(tasks) == 4 * TASKS_PER_WORKER
    seeds = [s for s, _ in tasks]
    assert len(set(seeds)) == len(seeds)
    assert seeds[:3] == [2**32 - 2, 2**32 - 1, 0]  # 32-bit seeds wrap


def _result(seed: int, *, failure: str | None = None, cells: dict | None = None) -> SuiteResult:
    r = SuiteResult(profile="ci", seed=seed, examples=3, commands=10, ticks=2, wall_s=5.0)
    r.coverage = dict(cells or {})
    if failure:
        r.failure, r.message = failure, f"broke in {seed}"
        r.saved = [Path(f"traces/{seed}.json")]
    return r


def test_merging_adds_up_and_the_first_failing_search_is_the_runs_failure() -> None:
    a = ("Stable", "Heartbeat", "NONE")
    b = ("Empty", "JoinGroup", "NONE")
    results = [
        _result(7, cells={a: 2}),
        _result(8, failure="divergence", cells={a: 1, b: 1}),
        _result(9, failure="invariant"),
    ]
    out = merge(results, seed=7, wall_s=6.0)
    assert (out.examples, out.commands, out.ticks) == (9, 30, 6)
    assert out.coverage == {a: 3, b: 1}
    assert out.failure == "divergence" and out.message == "search 1 (seed 8): broke in 8"
    assert out.saved == [Path("traces/8.json"), Path("traces/9.json")]
    assert [w["seed"] for w in out.workers] == [7, 8, 9]
    assert [w["failure"] for w in out.workers] == [None, "divergence", "invariant"]
    assert out.wall_s == 6.0


def test_at_least_one_worker() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        run_workers(0, bootstrap_servers="127.0.0.1:1", description={})


@pytest.mark.broker
def test_two_workers_search_one_broker_and_their_results_merge(
    kgc_broker: Any, tmp_path: Path
) -> None:
    from kgc.conformance.brokers.session import description_of

    result = run_workers(
        2,
        seed=41,
        bootstrap_servers=kgc_broker.bootstrap_servers,
        description=description_of(kgc_broker),
        profile="quick",
        traces_dir=tmp_path,
    )
    assert result.ok, result.message
    tasks = plan("quick", 2, seed=41)
    assert [w["seed"] for w in result.workers] == [s for s, _ in tasks]
    assert (
        result.examples == sum(n for _, n in tasks) == 2 * SEARCH_PROFILES["quick"]["max_examples"]
    )
    assert result.commands == sum(w["requests"] for w in result.workers) > 0
    assert result.coverage, "the searches' cells were merged"
