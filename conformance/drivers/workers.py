"""Parallel searches: N independent differential searches against one broker, merged as one.

Role: ``kgc check --workers N``. Each worker is a process of its own, started with ``spawn`` (it
inherits no socket, thread or Hypothesis state), that runs searches
(:func:`~kgc.conformance.drivers.suite.run_suite`) on the same broker, each with its own seed (the
run's seed + i), and so its own groups and its own topic (``run_suite`` names both from a random
run id under the suite's prefix). A search spends most of its time waiting for the broker's timers,
not computing, so even two cores run several at once. The run's examples (the profile's, once per
worker) are cut into ``TASKS_PER_WORKER`` searches per worker, handed out as workers free up.

Merging: examples, requests, ticks and covered cells add up; the most model states is the largest
of any worker's; the run fails as its first failing search (by index) failed, with that search's
message and saved traces (every worker's saved traces are kept); examples that stopped at a known
Kafka bug add up. ``SuiteResult.workers`` keeps each worker's seed, examples, requests, wall time
and failure (one entry per search), so every finding names the seed that found it.
"""

from __future__ import annotations

import math
import multiprocessing
import secrets
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from kgc.conformance.drivers.suite import (
    SEARCH_PROFILES,
    SuiteResult,
    hypothesis_settings,
    run_suite,
)

# Searches differ a lot in length (one seed's ci run took 3 s, another's 38 s, measured side by
# side on 4.3.1), and a run lasts as long as its longest worker. So the run's examples are cut
# into this many searches per worker, handed out as workers free up.
TASKS_PER_WORKER = 3


def plan(profile: str, workers: int, seed: int) -> list[tuple[int, int]]:
    """The searches of a run of ``workers``: (seed, examples), seeds ``seed``, ``seed + 1``, …,
    together the profile's examples once per worker."""
    total = SEARCH_PROFILES[profile]["max_examples"] * workers
    tasks = workers * TASKS_PER_WORKER
    per = max(1, math.ceil(total / tasks))
    count = math.ceil(total / per)
    return [((seed + i) & 0xFFFFFFFF, per) for i in range(count)]


def _one(suite_args: dict[str, Any], examples: int) -> SuiteResult:
    from hypothesis import settings

    base = hypothesis_settings(suite_args.get("profile", "ci"))
    return run_suite(search_settings=settings(base, max_examples=examples), **suite_args)


def run_workers(workers: int, *, seed: int | None = None, **suite_args: Any) -> SuiteResult:
    """``workers`` searches at once on one broker (module docstring); one worker is the plain
    :func:`run_suite`. ``suite_args`` are ``run_suite``'s and must pickle (no callbacks)."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers == 1:
        return run_suite(seed=seed, **suite_args)
    base = secrets.randbits(32) if seed is None else seed
    return run_tasks(plan(suite_args.get("profile", "ci"), workers, base), workers, **suite_args)


def run_tasks(tasks: list[tuple[int, int]], workers: int, **suite_args: Any) -> SuiteResult:
    """Run the searches ``tasks`` (seed, examples) on ``workers`` processes (1: one after another
    in this process, the baseline ``kgc bench workers`` compares with); after the first failure,
    searches not started yet are dropped. The merged result's seed is the first task's."""
    start = time.monotonic()
    results: list[tuple[int, SuiteResult]] = []
    if workers > 1 and isinstance(suite_args.get("description"), dict):
        # each search makes its topic when it starts, while others run: to a search, topics
        # appear on the broker at any moment (``consumer_manifest``)
        suite_args = {
            **suite_args,
            "description": {**suite_args["description"], "searches": workers},
        }
    if workers == 1:
        for i, (s, n) in enumerate(tasks):
            results.append((i, _one({**suite_args, "seed": s}, n)))
            if not results[-1][1].ok:
                break
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            pending: dict[Future[SuiteResult], int] = {
                pool.submit(_one, {**suite_args, "seed": s}, n): i for i, (s, n) in enumerate(tasks)
            }
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    i = pending.pop(f)
                    if f.cancelled():
                        continue
                    results.append((i, f.result()))
                    if not results[-1][1].ok:
                        for other in pending:
                            other.cancel()  # only those not started yet
    results.sort(key=lambda x: x[0])
    return merge([r for _, r in results], seed=tasks[0][0], wall_s=time.monotonic() - start)


def merge(results: list[SuiteResult], *, seed: int, wall_s: float) -> SuiteResult:
    """One result for the workers' ``results`` (module docstring, "Merging")."""
    first = results[0]
    out = SuiteResult(profile=first.profile, seed=seed, target=first.target, wall_s=wall_s)
    for i, r in enumerate(results):
        out.examples += r.examples
        out.commands += r.commands
        out.ticks += r.ticks
        out.acls += r.acls
        out.tick_ms += r.tick_ms
        out.assignment_checks += r.assignment_checks
        out.peak_states = max(out.peak_states, r.peak_states)
        for cell, n in r.coverage.items():
            out.coverage[cell] = out.coverage.get(cell, 0) + n
        for input_cell, n in r.input_coverage.items():
            out.input_coverage[input_cell] = out.input_coverage.get(input_cell, 0) + n
        for key, n in r.known_bugs.items():
            out.known_bugs[key] = out.known_bugs.get(key, 0) + n
        out.passed += r.passed
        for key, n in r.allowances.items():
            out.allowances[key] = out.allowances.get(key, 0) + n
        out.known_bug_saved.extend(r.known_bug_saved)
        out.recorded.extend(r.recorded)
        out.record_error = out.record_error or r.record_error
        out.saved.extend(r.saved)
        if r.failure is not None and out.failure is None:
            out.failure = r.failure
            out.message = f"search {i} (seed {r.seed}): {r.message}"
        out.workers.append(
            {
                "seed": r.seed,
                "examples": r.examples,
                "requests": r.commands,
                "wall_s": round(r.wall_s, 1),
                "failure": r.failure,
            }
        )
    return out
