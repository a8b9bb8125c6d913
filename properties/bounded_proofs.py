"""Bounded proofs: every model assignor keeps its promises on *every* input up to a bound.

Two kinds of proof, both by Z3, neither by sampling:

1. **Symbolic, unbounded** (:func:`prove_range_closed_form`, :func:`prove_roundrobin_even`): the
   rule itself, as integer arithmetic, for all sizes. Range: for all ``n >= 0`` partitions and
   ``k >= 1`` subscribers, the ranges ``[i*q + min(i, r), (i+1)*q + min(i+1, r))`` with
   ``q, r = divmod(n, k)`` tile ``[0, n)`` in order (every partition has exactly one owner) and the
   i-th has ``q + [i < r]`` partitions (``RangeAssignor`` javadoc: the first ``n % k`` consumers get
   one extra). Round robin with equal subscriptions: dealing ``T`` partitions in a circle over ``M``
   members gives member ``i`` exactly ``floor(T/M) + [i < T mod M]`` partitions (loads within one).
   Z3 proves each by showing the negation unsatisfiable.

2. **Exhaustive over a finite domain** (:func:`prove_assignor`): enumerate *every* input in the
   domain, run the model assignor (a Python function), and check each output with the Z3
   invariants of ``kgc.properties.assignment_z3`` (batched: many outputs per Z3 query). Exhaustive
   enumeration of a finite domain is a proof for that domain. The domain :class:`Bound` is:

   * members ``m0 < m1 < ... `` (1 to ``max_members``), dynamic (no ``group.instance.id``). The
     assignors only *compare* member ids (they sort them), so any other ids in the same order give
     the same assignment up to renaming; static members only change that order.
   * topics ``t0 < t1 < ...`` (1 to ``max_topics``), each with 1 to ``max_partitions`` partitions,
     at most ``max_total_partitions`` in all;
   * every subscription: each member subscribes to any subset of the topics, the empty one too;
   * stateful assignors (sticky, cooperative-sticky, uniform) additionally every previous
     assignment: each partition unowned or owned by exactly one member (possibly one that no longer
     subscribes to its topic), reported as ``ownedPartitions`` with generation 1 (client side) or as
     the current target assignment (server side).

   Checked per output: exactly one owner (cooperative: at most one, unowned only while being
   revoked), only subscribers own, the assignor's balance promise, stickiness (sticky assignors,
   equal subscriptions), and for cooperative-sticky the hand-off across *two* generations: the first
   rebalance never gives a partition to a new owner while its old owner still holds it, and the
   follow-up rebalance (members now owning what the first one gave them) completes the assignment
   with the same balance and hand-off checks.

A failure is reported with the input and the violations' sentences; Z3 ``unknown`` is reported as
unknown, never as proved.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import z3
from kgc.model.assignors import (
    ASSIGNORS,
    AssignorError,
    GroupAssignment,
    Subscription,
    TopicPartition,
)
from kgc.properties.assignment_z3 import (
    CheckRequest,
    Generation,
    Result,
    Verdict,
    check_many,
)

__all__ = [
    "Bound",
    "Case",
    "ProofReport",
    "SymbolicProof",
    "domain_size",
    "enumerate_inputs",
    "prove_all",
    "prove_assignor",
    "prove_range_closed_form",
    "prove_roundrobin_even",
]

STATEFUL = ("sticky", "cooperative-sticky", "uniform")


@dataclass(frozen=True, slots=True, kw_only=True)
class Bound:
    """The finite input domain (see the module docstring)."""

    max_members: int = 3
    max_topics: int = 2
    max_partitions: int = 3
    max_total_partitions: int = 4
    empty_subscriptions: bool = True  # a member may subscribe to no topic (a pattern matching none)

    def describe(self, stateful: bool) -> str:
        text = (
            f"1..{self.max_members} members x 1..{self.max_topics} topics with "
            f"1..{self.max_partitions} partitions each (<= {self.max_total_partitions} in all), "
            "every subscription (any "
            + ("" if self.empty_subscriptions else "non-empty ")
            + "subset of topics per member)"
        )
        if stateful:
            text += ", every previous assignment (each partition unowned or owned by one member)"
        return text


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One input of the domain."""

    partitions_per_topic: dict[str, int]
    subscriptions: dict[str, Subscription]

    def describe(self) -> str:
        subs = ", ".join(
            f"{m} subscribes to {{{', '.join(s.topics)}}}"
            + (f" owning {', '.join(map(str, s.owned_partitions))}" if s.owned_partitions else "")
            for m, s in self.subscriptions.items()
        )
        counts = ", ".join(f"{t}: {n}" for t, n in self.partitions_per_topic.items())
        return f"partitions {{{counts}}}; {subs}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProofReport:
    assignor: str
    domain: str
    verdict: Verdict  # PASS = proved for the domain
    inputs: int
    checks: int
    elapsed_s: float
    failing_inputs: int = 0
    counterexamples: tuple[tuple[str, str], ...] = ()  # (input, what went wrong), the first few

    def summary(self) -> str:
        head = {Verdict.PASS: "PROVED", Verdict.FAIL: "COUNTEREXAMPLE", Verdict.UNKNOWN: "UNKNOWN"}
        failing = f", {self.failing_inputs} failing" if self.failing_inputs else ""
        text = (
            f"{self.assignor}: {head[self.verdict]} over {self.inputs} inputs{failing} "
            f"({self.checks} Z3-checked generations, {self.elapsed_s:.1f} s); domain: {self.domain}"
        )
        for case, why in self.counterexamples[:3]:
            text += f"\n  input: {case}\n  violation: {why}"
        return text


@dataclass(frozen=True, slots=True, kw_only=True)
class SymbolicProof:
    name: str
    statement: str
    verdict: Verdict
    detail: str = ""


# ----------------------------------------------------------------------------- symbolic proofs


def _prove(name: str, statement: str, claim: z3.BoolRef, timeout_ms: int) -> SymbolicProof:
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(z3.Not(claim))
    answer = solver.check()
    if answer == z3.unsat:
        return SymbolicProof(name=name, statement=statement, verdict=Verdict.PASS)
    if answer == z3.sat:
        return SymbolicProof(
            name=name, statement=statement, verdict=Verdict.FAIL, detail=str(solver.model())
        )
    return SymbolicProof(
        name=name, statement=statement, verdict=Verdict.UNKNOWN, detail=solver.reason_unknown()
    )


def prove_range_closed_form(timeout_ms: int = 30_000) -> SymbolicProof:
    """For all n >= 0, k >= 1 and 0 <= i < k: range's per-topic ranges tile [0, n) in order and
    the i-th holds q + [i < r] partitions (q, r = divmod(n, k))."""
    n, k, i = z3.Ints("n k i")
    q, r = z3.Ints("q r")

    def start(j: z3.ArithRef) -> z3.ArithRef:
        return j * q + z3.If(j < r, j, r)

    premises = z3.And(n >= 0, k >= 1, r >= 0, r < k, q >= 0, n == q * k + r, i >= 0, i < k)
    claim = z3.Implies(
        premises,
        z3.And(
            start(z3.IntVal(0)) == 0,  # the first range starts at partition 0
            start(k) == n,  # the last range ends at partition n: nothing left over
            start(i + 1) - start(i) == q + z3.If(i < r, 1, 0),  # its size
            start(i) <= start(i + 1),  # ranges are in order, so they never overlap
        ),
    )
    return _prove(
        "range-closed-form",
        "for all n >= 0 partitions and k >= 1 subscribers, range's ranges tile [0, n) and the "
        "i-th has floor(n/k) + [i < n mod k] partitions",
        claim,
        timeout_ms,
    )


def prove_roundrobin_even(timeout_ms: int = 30_000) -> SymbolicProof:
    """For all T >= 0 partitions dealt in a circle to M >= 1 members (equal subscriptions), member
    i receives the j with j mod M = i, i.e. (T - 1 - i) div M + 1 of them when i < T, and that is
    floor(T/M) + [i < T mod M]: loads within one."""
    t, m, i = z3.Ints("T M i")
    q, r = z3.Ints("q r")
    dealt = z3.Int("dealt")  # how many j in [0, T) have j = a*M + i for some a >= 0
    premises = z3.And(
        t >= 0, m >= 1, i >= 0, i < m, q >= 0, r >= 0, r < m, t == q * m + r,
        # dealt = |{a >= 0 : a*M + i < T}|: the a-th partition for member i is a*M + i
        z3.Implies(i >= t, dealt == 0),
        z3.Implies(i < t, z3.And(dealt >= 1, (dealt - 1) * m + i < t, dealt * m + i >= t)),
    )  # fmt: skip
    claim = z3.Implies(premises, dealt == q + z3.If(i < r, 1, 0))
    return _prove(
        "roundrobin-even",
        "for all T >= 0 partitions and M >= 1 members with equal subscriptions, round robin gives "
        "member i floor(T/M) + [i < T mod M] partitions",
        claim,
        timeout_ms,
    )


# ------------------------------------------------------------------------- exhaustive domains


def _partition_counts(bound: Bound) -> Iterator[dict[str, int]]:
    for num_topics in range(1, bound.max_topics + 1):
        topics = [f"t{j}" for j in range(num_topics)]
        for sizes in itertools.product(range(1, bound.max_partitions + 1), repeat=num_topics):
            if sum(sizes) <= bound.max_total_partitions:
                yield dict(zip(topics, sizes, strict=True))


def enumerate_inputs(bound: Bound, *, stateful: bool) -> Iterator[Case]:
    """Every input of the domain, in a fixed order."""
    for counts in _partition_counts(bound):
        topics = list(counts)
        subsets = [
            tuple(t for j, t in enumerate(topics) if mask >> j & 1)
            for mask in range(0 if bound.empty_subscriptions else 1, 1 << len(topics))
        ]
        partitions = [TopicPartition(t, p) for t in topics for p in range(counts[t])]
        for num_members in range(1, bound.max_members + 1):
            members = [f"m{j}" for j in range(num_members)]
            for chosen in itertools.product(subsets, repeat=num_members):
                if not stateful:
                    yield Case(
                        partitions_per_topic=counts,
                        subscriptions={
                            m: Subscription(topics=s) for m, s in zip(members, chosen, strict=True)
                        },
                    )
                    continue
                for owners in itertools.product(range(-1, num_members), repeat=len(partitions)):
                    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
                    for tp, o in zip(partitions, owners, strict=True):
                        if o >= 0:
                            owned[members[o]].append(tp)
                    yield Case(
                        partitions_per_topic=counts,
                        subscriptions={
                            m: Subscription(
                                topics=s,
                                owned_partitions=tuple(owned[m]),
                                generation_id=1 if owned[m] else None,
                            )
                            for m, s in zip(members, chosen, strict=True)
                        },
                    )


def domain_size(bound: Bound, *, stateful: bool) -> int:
    total = 0
    for counts in _partition_counts(bound):
        n_partitions = sum(counts.values())
        for num_members in range(1, bound.max_members + 1):
            choices = (1 << len(counts)) - (0 if bound.empty_subscriptions else 1)
            subs = choices**num_members
            total += subs * ((num_members + 1) ** n_partitions if stateful else 1)
    return total


def _previous(case: Case) -> Generation:
    return Generation(
        generation_id=1,
        subscriptions=case.subscriptions,
        assignment={m: frozenset(s.owned_partitions) for m, s in case.subscriptions.items()},
    )


AssignFn = Callable[[Mapping[str, int], Mapping[str, Subscription]], GroupAssignment]


def _requests(name: str, case: Case, fn: AssignFn | None = None) -> list[tuple[CheckRequest, str]]:
    """The generations to check for one input, each with a label for reports. ``fn`` replaces
    the model's assignor (to prove that a broken one is caught); its promises stay ``name``'s."""
    fn = fn or ASSIGNORS[name].function
    counts = case.partitions_per_topic
    subs = case.subscriptions
    stateful = name in STATEFUL
    first = fn(counts, subs)
    previous = _previous(case) if stateful else None
    out = [
        (
            CheckRequest(
                subscriptions=subs,
                assignment=first,
                previous=previous,
                partitions_per_topic=counts,
                generation_id=2 if stateful else 1,
                assignor=name,
            ),
            "first rebalance",
        )
    ]
    if name == "cooperative-sticky":
        follow_subs = {
            m: Subscription(
                topics=s.topics,
                owned_partitions=first.get(m, ()),
                generation_id=2,
                group_instance_id=s.group_instance_id,
            )
            for m, s in subs.items()
        }
        second = fn(counts, follow_subs)
        first_generation = Generation(
            generation_id=2,
            subscriptions=follow_subs,
            assignment={m: frozenset(v) for m, v in first.items()},
        )
        # The follow-up must complete the assignment (eager-style exactly one owner, balance and
        # stickiness as the sticky assignor promises) and still hand off safely.
        out.append(
            (
                CheckRequest(
                    subscriptions=follow_subs,
                    assignment=second,
                    previous=first_generation,
                    partitions_per_topic=counts,
                    generation_id=3,
                    assignor="sticky",
                ),
                "follow-up rebalance (complete, balanced, sticky)",
            )
        )
        out.append(
            (
                CheckRequest(
                    subscriptions=follow_subs,
                    assignment=second,
                    previous=first_generation,
                    partitions_per_topic=counts,
                    generation_id=3,
                    protocol="cooperative",
                ),
                "follow-up rebalance (hand-off)",
            )
        )
    return out


def prove_assignor(
    name: str,
    bound: Bound,
    *,
    batch: int = 400,
    max_counterexamples: int = 5,
    progress: Callable[[str], None] | None = None,
    function: AssignFn | None = None,
) -> ProofReport:
    """Enumerate the domain for assignor ``name`` and Z3-check every output (of ``function``
    instead of the model's assignor, when given)."""
    stateful = name in STATEFUL
    started = time.perf_counter()
    counterexamples: list[tuple[str, str]] = []
    failing_inputs: list[Case] = []
    inputs = checks = 0
    unknown = False
    pending: list[tuple[Case, str, CheckRequest]] = []

    def flush() -> None:
        nonlocal checks, unknown
        if not pending:
            return
        room = max(0, max_counterexamples - len(counterexamples))
        results: Sequence[Result] = check_many([r for _, _, r in pending], explain_limit=room)
        checks += len(pending)
        seen: set[int] = set()
        for (case, label, _), result in zip(pending, results, strict=True):
            if result.verdict is Verdict.UNKNOWN:
                unknown = True
            elif result.verdict is Verdict.FAIL:
                if id(case) not in seen:
                    failing_inputs.append(case)
                    seen.add(id(case))
                if len(counterexamples) < max_counterexamples:
                    counterexamples.append((case.describe(), f"{label}: {result.summary()}"))
        pending.clear()

    for case in enumerate_inputs(bound, stateful=stateful):
        inputs += 1
        try:
            requests = _requests(name, case, function)
        except AssignorError as exc:
            failing_inputs.append(case)
            if len(counterexamples) < max_counterexamples:
                counterexamples.append((case.describe(), f"the assignor failed: {exc}"))
            continue
        for request, label in requests:
            pending.append((case, label, request))
        if len(pending) >= batch:
            flush()
            if progress is not None and inputs % (batch * 25) < len(requests):
                progress(f"{name}: {inputs} inputs checked")
    flush()
    failed = bool(failing_inputs)
    verdict = Verdict.FAIL if failed else Verdict.UNKNOWN if unknown else Verdict.PASS
    return ProofReport(
        assignor=name,
        domain=bound.describe(stateful),
        verdict=verdict,
        inputs=inputs,
        checks=checks,
        elapsed_s=time.perf_counter() - started,
        failing_inputs=len(failing_inputs),
        counterexamples=tuple(counterexamples),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ProofRun:
    symbolic: tuple[SymbolicProof, ...]
    reports: tuple[ProofReport, ...]
    elapsed_s: float
    notes: tuple[str, ...] = field(default=())


def prove_all(
    bound: Bound,
    *,
    stateful_bound: Bound | None = None,
    assignors: Sequence[str] = tuple(ASSIGNORS),
    progress: Callable[[str], None] | None = None,
) -> ProofRun:
    """The symbolic proofs, then every assignor over its domain (stateful assignors over
    ``stateful_bound``, default ``bound``: their domain also ranges over previous assignments)."""
    started = time.perf_counter()
    symbolic = (prove_range_closed_form(), prove_roundrobin_even())
    reports = []
    for name in assignors:
        b = (stateful_bound or bound) if name in STATEFUL else bound
        reports.append(prove_assignor(name, b, progress=progress))
        if progress is not None:
            progress(reports[-1].summary())
    return ProofRun(
        symbolic=symbolic, reports=tuple(reports), elapsed_s=time.perf_counter() - started
    )
