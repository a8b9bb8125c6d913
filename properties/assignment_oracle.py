"""Z3 as an oracle: the best balance any assignment could reach, and each assignor's gap to it.

Definitions. Given members ``M`` with subscriptions ``S(m)`` and partition counts ``n(t)``, a
*complete assignment* gives every partition of every topic with at least one subscriber to exactly
one member subscribed to that topic. Its *load* ``load(m)`` is the number of partitions ``m`` owns.

* ``best_max_load = min over complete assignments of max_m load(m)`` (the makespan);
* ``best_spread   = min over complete assignments of (max_m load(m) - min_m load(m))``, over *all*
  members of the group, including members whose topics have no partitions (load 0).

Each is optimised separately (one assignment need not reach both). An assignor's *gap* is its own
``max load - best_max_load`` and ``spread - best_spread``; a gap of 0 means no assignment at all is
better balanced by that measure. Kafka's assignors promise different things (see
``kgc.model.assignors.Balance``): range and round robin may legitimately show a gap.

Encoding (exact, not an approximation). Members with the same subscription form a *class* ``c`` of
``k_c`` members; ``N[c][t]`` is how many partitions of ``t`` go to class ``c`` (an integer
variable, zero unless the class subscribes to ``t``; ``sum_c N[c][t] = n(t)``). Within a class all
members can take any of the class's partitions, so the best split of ``N_c = sum_t N[c][t]``
partitions over ``k_c`` members gives loads ``floor(N_c/k_c)`` and ``ceil(N_c/k_c)``, and that split
minimises the class's maximum and maximises its minimum at the same time. Hence
``max load >= L  <=>  k_c * L >= N_c`` for every class and ``min load <= l <=> k_c * l <= N_c``
for every class, and Z3 minimises ``L`` (resp. ``L - l``) over integer ``N``,
``L``, ``l`` (by binary search on satisfiability checks: each optimum is proven by ``sat`` at it and
``unsat`` just below). The variable count is classes x topics, not members x partitions, so 10,000
partitions over 1,000 members stays small when subscriptions repeat.

Z3 ``unknown`` or a timeout is reported as such (``status="unknown"``), with the best bound found so
far when Z3 has one, never as an optimum.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import z3
from kgc.model.assignors import ASSIGNORS, Subscription, TopicPartition, assign

__all__ = [
    "BalanceGap",
    "BestBalance",
    "balance_gap",
    "best_balance",
    "best_balance_within",
    "compare_assignors",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BestBalance:
    """The oracle's answer. ``status`` is ``"optimal"`` or ``"unknown"`` (then the values are the
    best found so far, or ``None``)."""

    status: str
    best_max_load: int | None
    best_spread: int | None
    classes: int
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class BalanceGap:
    assignor: str
    max_load: int
    spread: int
    best: BestBalance
    max_load_gap: int | None  # None when the oracle could not prove an optimum
    spread_gap: int | None


def _classes(subscriptions: Iterable[frozenset[str]]) -> dict[frozenset[str], int]:
    classes: dict[frozenset[str], int] = {}
    for topics in subscriptions:
        key = frozenset(topics)
        classes[key] = classes.get(key, 0) + 1
    return classes


def _topics(subscriptions: Mapping[str, Subscription | Iterable[str]]) -> dict[str, frozenset[str]]:
    return {
        m: frozenset(s.topics if isinstance(s, Subscription) else s)
        for m, s in subscriptions.items()
    }


def _encode(
    classes: Mapping[frozenset[str], int], counts: Mapping[str, int]
) -> tuple[z3.Solver, z3.ArithRef, z3.ArithRef, int]:
    """The class encoding (module docstring), written as SMT-LIB2 text (fast to build for tens of
    thousands of variables): returns the solver, ``L``, ``l`` and the number of partitions."""
    lines = ["(declare-const L Int)", "(declare-const l Int)", "(assert (>= l 0))"]
    per_topic: dict[str, list[str]] = {}
    topic_index = {t: i for i, t in enumerate(sorted(counts))}
    for ci, (topics, k) in enumerate(sorted(classes.items(), key=lambda kv: sorted(kv[0]))):
        terms: list[str] = []
        for t in sorted(topics):
            if counts.get(t, 0) <= 0:
                continue
            var = f"N{ci}_{topic_index[t]}"
            lines.append(f"(declare-const {var} Int)(assert (>= {var} 0))")
            terms.append(var)
            per_topic.setdefault(t, []).append(var)
        total = "0" if not terms else terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"
        lines.append(f"(assert (>= (* {k} L) {total}))(assert (<= (* {k} l) {total}))")
    total_partitions = 0
    for t, vars_ in per_topic.items():
        body = vars_[0] if len(vars_) == 1 else f"(+ {' '.join(vars_)})"
        lines.append(f"(assert (= {body} {counts[t]}))")
        total_partitions += counts[t]
    solver = z3.Solver()
    solver.from_string("\n".join(lines))
    return solver, z3.Int("L"), z3.Int("l"), total_partitions


def _optimise(
    classes: Mapping[frozenset[str], int],
    counts: Mapping[str, int],
    objective: str,
    timeout_ms: int,
) -> tuple[str, int | None, str]:
    """Minimise ``L`` (max load) or ``L - l`` (spread) by a sequence of satisfiability checks:
    binary search for ``L`` between 0 and the total, linear search upwards for the spread (small
    in practice). Each answer is proven: ``sat`` at the optimum, ``unsat`` just below it."""
    solver, high, low, total = _encode(classes, counts)
    deadline = time.monotonic() + timeout_ms / 1000

    def feasible(constraint: z3.BoolRef) -> bool | None:
        remaining = int((deadline - time.monotonic()) * 1000)
        if remaining <= 0:
            return None
        solver.push()
        solver.add(constraint)
        solver.set("timeout", remaining)
        answer = solver.check()
        solver.pop()
        return None if answer == z3.unknown else answer == z3.sat

    if objective == "max_load":
        lo, hi = 0, total  # L = total is always feasible
        # Try the pigeonhole bound first (all partitions spread over the members that can take
        # any): usually the optimum, so two checks settle it (sat there, unsat just below).
        takers = sum(
            k for topics, k in classes.items() if any(counts.get(t, 0) > 0 for t in topics)
        )
        guess = -(-total // takers) if takers else 0
        for probe in (guess, guess - 1):
            if lo < hi and lo <= probe < hi:
                ok = feasible(high <= probe)
                if ok is None:
                    return "unknown", hi, "timeout"
                lo, hi = (lo, probe) if ok else (probe + 1, hi)
        while lo < hi:
            mid = (lo + hi) // 2
            ok = feasible(high <= mid)
            if ok is None:
                return "unknown", hi, "timeout"
            lo, hi = (lo, mid) if ok else (mid + 1, hi)
        return "optimal", lo, ""
    for spread in range(total + 1):  # spread = total (l = 0) is always feasible
        ok = feasible(high - low <= spread)
        if ok is None:
            return "unknown", None, "timeout"
        if ok:
            return "optimal", spread, ""
    return "unknown", None, "no feasible spread"


def best_balance(
    subscriptions: Mapping[str, Subscription | Iterable[str]],
    partitions_per_topic: Mapping[str, int],
    *,
    timeout_ms: int = 30_000,
) -> BestBalance:
    """The best achievable ``max load`` and ``spread`` (module docstring), proven by Z3."""
    topics_of = _topics(subscriptions)
    if not topics_of:
        return BestBalance(status="optimal", best_max_load=0, best_spread=0, classes=0)
    classes = _classes(topics_of.values())
    s1, max_load, r1 = _optimise(classes, partitions_per_topic, "max_load", timeout_ms)
    s2, spread, r2 = _optimise(classes, partitions_per_topic, "spread", timeout_ms)
    status = "optimal" if s1 == s2 == "optimal" else "unknown"
    return BestBalance(
        status=status,
        best_max_load=max_load,
        best_spread=spread,
        classes=len(classes),
        reason="; ".join(r for r in (r1, r2) if r),
    )


def balance_gap(
    name: str,
    subscriptions: Mapping[str, Subscription | Iterable[str]],
    partitions_per_topic: Mapping[str, int],
    assignment: Mapping[str, Iterable[TopicPartition]],
    *,
    best: BestBalance | None = None,
    timeout_ms: int = 30_000,
) -> BalanceGap:
    """How far ``assignment`` (by assignor ``name``) is from the best balance."""
    if best is None:
        best = best_balance(subscriptions, partitions_per_topic, timeout_ms=timeout_ms)
    loads = [len(list(assignment.get(m, ()))) for m in subscriptions]
    max_load = max(loads, default=0)
    spread = max_load - min(loads, default=0)
    optimal = best.status == "optimal"
    return BalanceGap(
        assignor=name,
        max_load=max_load,
        spread=spread,
        best=best,
        max_load_gap=max_load - best.best_max_load
        if optimal and best.best_max_load is not None
        else None,
        spread_gap=spread - best.best_spread if optimal and best.best_spread is not None else None,
    )


def compare_assignors(
    subscriptions: Mapping[str, Subscription],
    partitions_per_topic: Mapping[str, int],
    *,
    assignors: Iterable[str] = tuple(ASSIGNORS),
    timeout_ms: int = 30_000,
) -> dict[str, BalanceGap]:
    """Run each model assignor on the same input and report its gap to the oracle's optimum."""
    best = best_balance(subscriptions, partitions_per_topic, timeout_ms=timeout_ms)
    return {
        name: balance_gap(
            name,
            subscriptions,
            partitions_per_topic,
            assign(name, partitions_per_topic, subscriptions),
            best=best,
        )
        for name in assignors
    }


def _child(conn: Any, subscriptions: Any, counts: Any, timeout_ms: int) -> None:
    conn.send(best_balance(subscriptions, counts, timeout_ms=timeout_ms))
    conn.close()


def best_balance_within(
    subscriptions: Mapping[str, Subscription | Iterable[str]],
    partitions_per_topic: Mapping[str, int],
    *,
    timeout_s: float,
) -> BestBalance:
    """:func:`best_balance` under a hard wall-clock limit: Z3's own timeout is not honoured in
    every phase (large linear problems can spend minutes in preprocessing), so the oracle runs in
    a child process that is killed at the deadline; the answer is then ``status="unknown"``."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    plain = {m: tuple(_topics({m: s})[m]) for m, s in subscriptions.items()}
    proc = ctx.Process(
        target=_child,
        args=(child, plain, dict(partitions_per_topic), int(timeout_s * 1000)),
        daemon=True,
    )
    proc.start()
    child.close()
    try:
        if parent.poll(timeout_s):
            answer: BestBalance = parent.recv()
            return answer
        classes = len(_classes(_topics(subscriptions).values()))
        return BestBalance(
            status="unknown",
            best_max_load=None,
            best_spread=None,
            classes=classes,
            reason=f"no answer within {timeout_s:g} s (wall clock)",
        )
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=10)
        parent.close()
