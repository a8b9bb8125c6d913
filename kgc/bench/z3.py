"""``kgc bench z3``: timing of the Z3 assignment checks, the balance oracle and the bounded proofs.

Keys (seconds unless the name says otherwise):

* ``check_1000x100_s`` / ``check_10000x1000_s`` — :func:`check_generation` of one generation,
  1,000 partitions (10 topics) over 100 members and 10,000 (100 topics) over 1,000, all members
  subscribed to every topic, assignment by the model's ``uniform`` assignor (a passing check:
  exactly one owner, only subscribers own, loads within one). Target for the first: < 1 s.
* ``check_..._hetero_s`` — the same sizes with three kinds of member subscribing to different
  two-thirds of the topics ("as balanced as possible" balance); ``check_1000x100_violation_s`` —
  the same 1,000 x 100 generation with one partition given to two members, until the
  counterexample sentence is ready.
* ``oracle_1000x100_s`` / ``oracle_10000x1000_s`` and their ``..._status`` (``optimal`` or
  ``unknown``: a 60 s wall-clock limit, reported, never hidden) — the best-balance oracle with each
  member subscribing to a random half of 20 (resp. 100) topics, so up to one subscription class per
  member (``..._classes``, the size of the Z3 problem); ``..._3classes_s`` — the same sizes with
  three kinds of member, the common case.
* ``bounded_proof_s`` — the symbolic proofs plus every assignor over its exhaustive domain
  (``bounded_proof_domain``, ``bounded_proof_stateful_domain``), with
  ``bounded_proof_<assignor>_inputs`` and ``..._verdict``; and ``..._with_empty_subscriptions_...``:
  sticky and uniform on a small domain where members may subscribe to nothing (sticky then gives
  such a member partitions, as Kafka's does).

``--quick`` shrinks the bounded-proof domains and skips the 10,000 x 1,000 sizes.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from kgc.model.assignors import Subscription, uniform_assign
from kgc.properties.assignment_oracle import best_balance_within
from kgc.properties.assignment_z3 import Verdict, check_generation
from kgc.properties.bounded_proofs import (
    STATEFUL,
    Bound,
    prove_assignor,
    prove_range_closed_form,
    prove_roundrobin_even,
)

FULL_BOUND = Bound(max_members=4, max_topics=2, max_partitions=6, max_total_partitions=8)
FULL_STATEFUL_BOUND = Bound(
    max_members=3, max_topics=2, max_partitions=3, max_total_partitions=4, empty_subscriptions=False
)
# Members subscribing to nothing make the sticky assignors give them partitions (as Kafka does):
# a smaller domain with them, reported as counterexample counts.
EMPTY_SUBSCRIPTION_BOUND = Bound(
    max_members=2, max_topics=2, max_partitions=2, max_total_partitions=3
)
QUICK_BOUND = Bound(max_members=3, max_topics=2, max_partitions=2, max_total_partitions=3)
QUICK_STATEFUL_BOUND = Bound(max_members=2, max_topics=2, max_partitions=2, max_total_partitions=3)


def _log(message: str) -> None:
    print(f"kgc bench z3: {message}", file=sys.stderr, flush=True)


def _group(
    partitions: int, members: int, topics: int, hetero: bool
) -> tuple[dict[str, int], dict[str, Subscription]]:
    names = [f"topic-{i:03d}" for i in range(topics)]
    counts = {t: partitions // topics for t in names}
    subs: dict[str, Subscription] = {}
    for i in range(members):
        chosen = [t for j, t in enumerate(names) if not hetero or (i + j) % 3]
        subs[f"consumer-{i:04d}"] = Subscription(topics=tuple(chosen))
    return counts, subs


def _time_check(
    partitions: int, members: int, topics: int, hetero: bool, *, corrupt: bool = False
) -> float:
    counts, subs = _group(partitions, members, topics, hetero)
    assignment = {m: list(v) for m, v in uniform_assign(counts, subs).items()}
    if corrupt:
        first, second = sorted(assignment)[:2]
        assignment[second] = [*assignment[second], assignment[first][0]]
    started = time.perf_counter()
    result = check_generation(
        subs, assignment, partitions_per_topic=counts, assignor="uniform", max_violations=1
    )
    elapsed = time.perf_counter() - started
    expected = Verdict.FAIL if corrupt else Verdict.PASS
    if result.verdict is not expected:
        raise RuntimeError(f"{partitions}x{members}: expected {expected}, got {result.summary()}")
    return elapsed


def _oracle(
    partitions: int, members: int, topics: int, seed: int, timeout_ms: int
) -> dict[str, Any]:
    rng = random.Random(seed)
    names = [f"topic-{i:03d}" for i in range(topics)]
    counts = {t: partitions // topics for t in names}
    subs = {
        f"consumer-{i:04d}": Subscription(
            topics=tuple(t for t in names if rng.random() < 0.5) or (names[0],)
        )
        for i in range(members)
    }
    started = time.perf_counter()
    best = best_balance_within(subs, counts, timeout_s=timeout_ms / 1000)
    return {"s": time.perf_counter() - started, "status": best.status, "classes": best.classes,
            "max_load": best.best_max_load, "spread": best.best_spread}  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    quick = bool(getattr(args, "quick", False))
    out: dict[str, Any] = {}
    sizes = [(1000, 100, 10)] + ([] if quick else [(10000, 1000, 100)])
    for partitions, members, topics in sizes:
        key = f"{partitions}x{members}"
        _log(f"check {key}")
        out[f"check_{key}_s"] = round(_time_check(partitions, members, topics, False), 3)
        out[f"check_{key}_hetero_s"] = round(_time_check(partitions, members, topics, True), 3)
    out["check_1000x100_violation_s"] = round(_time_check(1000, 100, 10, False, corrupt=True), 3)
    for partitions, members, topics in sizes:
        key = f"{partitions}x{members}"
        _log(f"oracle {key}")
        # 20 topics for the smaller size, 100 for the larger, each member subscribing to about
        # half of them at random: up to `members` distinct subscriptions.
        o = _oracle(partitions, members, 20 if partitions == 1000 else topics, 20261121, 60_000)
        out[f"oracle_{key}_s"] = round(o["s"], 3)
        out[f"oracle_{key}_status"] = o["status"]
        out[f"oracle_{key}_classes"] = o["classes"]
        out[f"oracle_{key}_best_max_load"] = o["max_load"]
        out[f"oracle_{key}_best_spread"] = o["spread"]
        counts, subs = _group(partitions, members, topics, True)  # three kinds of member
        started = time.perf_counter()
        few = best_balance_within(subs, counts, timeout_s=60)
        out[f"oracle_{key}_3classes_s"] = round(time.perf_counter() - started, 3)
        out[f"oracle_{key}_3classes_status"] = few.status

    bound, stateful_bound = (QUICK_BOUND, QUICK_STATEFUL_BOUND) if quick else (
        FULL_BOUND, FULL_STATEFUL_BOUND)  # fmt: skip
    started = time.perf_counter()
    for proof in (prove_range_closed_form(), prove_roundrobin_even()):
        out[f"symbolic_{proof.name.replace('-', '_')}_verdict"] = {
            Verdict.PASS: "proved", Verdict.FAIL: "counterexample", Verdict.UNKNOWN: "unknown"
        }[proof.verdict]  # fmt: skip
    for name in ("range", "roundrobin", "server-range", "uniform", "sticky", "cooperative-sticky"):
        b = stateful_bound if name in STATEFUL else bound
        _log(f"bounded proof {name}: {b.describe(name in STATEFUL)}")
        report = prove_assignor(name, b, progress=_log)
        _log(report.summary())
        key = name.replace("-", "_")
        out[f"bounded_proof_{key}_inputs"] = report.inputs
        out[f"bounded_proof_{key}_failing_inputs"] = report.failing_inputs
        out[f"bounded_proof_{key}_verdict"] = {
            Verdict.PASS: "proved", Verdict.FAIL: "counterexample", Verdict.UNKNOWN: "unknown"
        }[report.verdict]  # fmt: skip
        out[f"bounded_proof_{key}_s"] = round(report.elapsed_s, 2)
    for name in ("sticky", "uniform"):
        report = prove_assignor(name, EMPTY_SUBSCRIPTION_BOUND, max_counterexamples=1)
        _log(report.summary())
        key = f"bounded_proof_{name}_with_empty_subscriptions"
        out[f"{key}_failing_inputs"] = report.failing_inputs
        out[f"{key}_inputs"] = report.inputs
    out["bounded_proof_s"] = round(time.perf_counter() - started, 2)
    out["bounded_proof_domain"] = bound.describe(False)
    out["bounded_proof_stateful_domain"] = stateful_bound.describe(True)
    return out
