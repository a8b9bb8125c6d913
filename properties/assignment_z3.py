"""Z3-checked invariants of one generation's partition assignment.

Rule: a consumer group is only correct if every partition has exactly one owner at a time. In the
classic protocol the leader client computes the assignment (``ConsumerPartitionAssignor``) and the
coordinator relays it in SyncGroup, so bugs hide in client assignors and in the hand-off between
generations; under KIP-848 the coordinator's assignor (``UniformAssignor``/``RangeAssignor`` in
``group-coordinator/.../assignor/``) must keep the same promises.

Each invariant below is a Z3 formula over Boolean ownership variables ``own(m, p)`` (member ``m``
owns partition ``p`` in this generation), fixed to the observed assignment. Every *instance* (one
partition, one member, one topic, ...) is asserted under its own tracking literal, so an
unsatisfiable check yields an unsat core: a minimal set of instances that cannot all hold, turned
into a sentence naming the partition, the members and the generation.

Invariants (names are the ``Violation.invariant`` values):

* ``exactly-one-owner`` — every partition of a subscribed topic has exactly one owner. Under the
  cooperative protocol a partition may have *no* owner for one generation when its previous owner
  is still a member (it is being revoked; ``CooperativeStickyAssignor.adjustAssignment``), but
  never two.
* ``subscribed-owner`` — only members of the generation that subscribe to a topic own its
  partitions, and only partitions that exist (when partition counts are known).
* ``balance`` — what the assignor promises (``kgc.model.assignors.Balance``): per-topic ranges
  (range assignors: the i-th subscriber in Kafka's member order owns partitions
  ``[i*q + min(i, r), (i+1)*q + min(i+1, r))`` with ``q, r = divmod(n, k)``); loads within one of
  each other (round robin with equal subscriptions; sticky and uniform with equal subscriptions);
  or "as balanced as possible" (no member owning a partition of topic ``t`` has two or more
  partitions more than a member subscribed to ``t``).
* ``stickiness`` — for sticky assignors with equal subscriptions: the number of previously owned
  partitions that stay with their owner is the maximum any balanced assignment can keep,
  ``sum_m min(v_m, floor(T/M)) + min(T mod M, |{m : v_m > floor(T/M)}|)`` where ``v_m`` counts the
  partitions ``m`` owned before that are still valid for it (it is still a member and subscribed,
  the partition exists and was not claimed twice); and no member keeps fewer of its valid
  partitions than its new share allows (``min(v_m, |new_m|)``).
* ``cooperative-handoff`` — under the cooperative protocol a partition owned in the previous
  generation by a member that is still in the group is not given to another member: revocation
  comes a generation before reassignment.

A check is tri-state (:class:`Verdict`): ``PASS``, ``FAIL`` (with violations), or ``UNKNOWN`` when
Z3 answers ``unknown`` or times out — never reported as a pass. Invariants that could not be checked
(no partition counts, no previous generation, no promise for this input) are listed in
``Result.skipped`` with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeAlias

import z3
from kgc.model.assignors import (
    ASSIGNORS,
    AssignorSpec,
    Balance,
    Subscription,
    TopicPartition,
    sorted_members,
)
from kgc.properties.assignment_codec import decode_assignment, decode_subscription, partitions_of

__all__ = [
    "CheckRequest",
    "Generation",
    "Result",
    "Verdict",
    "Violation",
    "check_generation",
    "check_many",
    "check_ownership_timeline",
    "check_history",
    "normalize_assignment",
    "normalize_subscriptions",
    "max_retention",
]

EXACTLY_ONE_OWNER = "exactly-one-owner"
SUBSCRIBED_OWNER = "subscribed-owner"
BALANCE = "balance"
STICKINESS = "stickiness"
COOPERATIVE_HANDOFF = "cooperative-handoff"


class Verdict(Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One minimal counterexample: what broke, where, and a sentence a person can read."""

    invariant: str
    message: str
    partitions: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    generation_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    verdict: Verdict
    violations: tuple[Violation, ...] = ()
    checked: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (invariant, why it was not checked)
    reason: str = ""  # why UNKNOWN

    @property
    def ok(self) -> bool:
        """True only for a proven pass (UNKNOWN is not ok)."""
        return self.verdict is Verdict.PASS

    def summary(self) -> str:
        if self.verdict is Verdict.PASS:
            return f"pass ({', '.join(self.checked)})"
        if self.verdict is Verdict.UNKNOWN:
            return f"unknown: {self.reason}"
        return "; ".join(v.message for v in self.violations)


@dataclass(frozen=True, slots=True, kw_only=True)
class Generation:
    """One generation as observed: who was in it, what they subscribed to, who owned what."""

    generation_id: int | None
    subscriptions: Mapping[str, Subscription]
    assignment: Mapping[str, frozenset[TopicPartition]]


# ------------------------------------------------------------------------------- normalisation

SubscriptionLike: TypeAlias = Subscription | str | Iterable[str]
AssignmentLike: TypeAlias = str | Mapping[str, Iterable[int]] | Iterable[Any]


def normalize_subscriptions(
    subscriptions: Mapping[str, SubscriptionLike],
) -> dict[str, Subscription]:
    """Accept model ``Subscription`` records, encoded strings (``assignment_codec``) or topic
    lists."""
    out: dict[str, Subscription] = {}
    for member, sub in subscriptions.items():
        if isinstance(sub, Subscription):
            out[member] = sub
        elif isinstance(sub, str):
            out[member] = decode_subscription(sub)
        else:
            out[member] = Subscription(topics=tuple(sorted(set(sub))))
    return out


def normalize_assignment(
    assignment: Mapping[str, AssignmentLike],
) -> dict[str, frozenset[TopicPartition]]:
    """Accept encoded strings, ``{topic: [partitions]}`` or sequences of (topic, partition)."""
    out: dict[str, frozenset[TopicPartition]] = {}
    for member, value in assignment.items():
        if isinstance(value, str):
            out[member] = frozenset(partitions_of(decode_assignment(value)))
        elif isinstance(value, Mapping):
            out[member] = frozenset(partitions_of(value))
        else:
            pairs: Iterable[Any] = value
            out[member] = frozenset(TopicPartition(str(t), int(p)) for t, p in pairs)
    return out


def _as_generation(
    value: Generation | Mapping[str, AssignmentLike] | None,
    subscriptions: Mapping[str, Subscription],
    generation_id: int | None,
) -> Generation | None:
    if value is None or isinstance(value, Generation):
        return value
    previous_id = None if generation_id is None else generation_id - 1
    return Generation(
        generation_id=previous_id,
        subscriptions=subscriptions,
        assignment=normalize_assignment(value),
    )


# --------------------------------------------------------------------------------- the problem


@dataclass(slots=True)
class _Instance:
    invariant: str
    key: tuple[Any, ...]
    formula: str  # SMT-LIB2 Boolean term


def _smt_sum(terms: Sequence[str]) -> str:
    if not terms:
        return "0"
    return terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"


def _smt_and(terms: Sequence[str]) -> str:
    if not terms:
        return "true"
    return terms[0] if len(terms) == 1 else f"(and {' '.join(terms)})"


def _smt_int(n: int) -> str:
    return str(n) if n >= 0 else f"(- {-n})"


class _Problem:
    """Ownership variables fixed to the observation, and tracked invariant instances, written as
    SMT-LIB2 text (building terms through Z3's Python API costs ~10 µs each; text is parsed in C++).
    """

    def __init__(
        self, assignment: Mapping[str, frozenset[TopicPartition]], prefix: str = ""
    ) -> None:
        self.prefix = prefix
        self.assignment = assignment
        self.own: dict[tuple[str, TopicPartition], str] = {}
        self.owners: dict[TopicPartition, list[str]] = {}
        self.decls: list[str] = []
        for member in sorted(assignment):
            for tp in sorted(assignment[member]):
                var = f"{prefix}o{len(self.own)}"
                self.own[(member, tp)] = var
                self.owners.setdefault(tp, []).append(member)
                self.decls.append(f"(declare-const {var} Bool)(assert {var})")
        self.instances: list[_Instance] = []
        self._loads: dict[str, str] = {}
        self._ints = 0

    def owns(self, member: str, tp: TopicPartition) -> str:
        """The ownership variable, or ``false`` for a pair that is not in the observation."""
        return self.own.get((member, tp), "false")

    def count(self, member: str, partitions: Iterable[TopicPartition]) -> str:
        return _smt_sum([f"(ite {self.own[(member, tp)]} 1 0)" for tp in partitions])

    def load(self, member: str) -> str:
        """An Int constant defined as the number of partitions ``member`` owns."""
        if member not in self._loads:
            name = f"{self.prefix}l{len(self._loads)}"
            total = self.count(member, sorted(self.assignment.get(member, ())))
            self.decls.append(f"(declare-const {name} Int)(assert (= {name} {total}))")
            self._loads[member] = name
        return self._loads[member]

    def int_var(self) -> str:
        name = f"{self.prefix}i{self._ints}"
        self._ints += 1
        self.decls.append(f"(declare-const {name} Int)")
        return name

    def add(self, invariant: str, key: tuple[Any, ...], formula: str) -> None:
        self.instances.append(_Instance(invariant, key, formula))

    def text(self, tracked: bool) -> tuple[str, list[str]]:
        """SMT-LIB2 for the problem. ``tracked``: one tracking literal per instance (for cores);
        otherwise one literal for the whole problem (for batches)."""
        lines = list(self.decls)
        if tracked:
            names = [f"{self.prefix}t{i}" for i in range(len(self.instances))]
            for name, inst in zip(names, self.instances, strict=True):
                lines.append(f"(declare-const {name} Bool)(assert (=> {name} {inst.formula}))")
            return "\n".join(lines), names
        name = f"{self.prefix}all"
        lines.append(f"(declare-const {name} Bool)")
        lines.extend(f"(assert (=> {name} {inst.formula}))" for inst in self.instances)
        return "\n".join(lines), [name]

    def solve(self, *, timeout_ms: int, max_cores: int) -> tuple[str, list[list[_Instance]], str]:
        """Return ("sat"|"unsat"|"unknown", cores, reason). Each core is a minimal list of
        instances that cannot hold together with the observation.

        First one query with a single tracking literal (cheap: most assignments pass); only when
        that is unsatisfiable, a second query with one literal per instance, for the cores."""
        quick_text, (quick,) = self.text(tracked=False)
        quick_solver = z3.Solver()
        quick_solver.set("timeout", max(1, int(timeout_ms)))
        quick_solver.from_string(quick_text)
        quick_answer = quick_solver.check(z3.Bool(quick))
        if quick_answer == z3.sat:
            return "sat", [], ""
        if quick_answer == z3.unknown:
            return "unknown", [], str(quick_solver.reason_unknown())
        text, names = self.text(tracked=True)
        solver = z3.Solver()
        solver.set("timeout", max(1, int(timeout_ms)))
        solver.set("core.minimize", True)
        solver.from_string(text)
        by_name = dict(zip(names, self.instances, strict=True))
        index = {name: i for i, name in enumerate(names)}
        active = {name: z3.Bool(name) for name in names}
        cores: list[list[_Instance]] = []
        while True:
            answer = solver.check(*active.values())
            if answer == z3.sat:
                return ("sat" if not cores else "unsat", cores, "")
            if answer == z3.unknown:
                if cores:
                    return "unsat", cores, ""
                return "unknown", cores, str(solver.reason_unknown())
            core = [c.decl().name() for c in solver.unsat_core()]
            if not core:  # the observation facts alone are contradictory: cannot happen
                return "unknown", cores, "empty unsat core"
            cores.append([by_name[name] for name in sorted(core, key=index.__getitem__)])
            for name in core:
                active.pop(name, None)
            if len(cores) >= max_cores:
                return "unsat", cores, ""


# ------------------------------------------------------------------------------ the invariants


@dataclass(frozen=True, slots=True, kw_only=True)
class _Prepared:
    problem: _Problem
    subs: dict[str, Subscription]
    assignment: dict[str, frozenset[TopicPartition]]
    counts: dict[str, int] | None
    prev: Generation | None
    spec: AssignorSpec | None
    generation_id: int | None
    checked: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]


def _prepare(
    subscriptions: Mapping[str, SubscriptionLike],
    assignment_by_member: Mapping[str, AssignmentLike],
    previous: Generation | Mapping[str, AssignmentLike] | None,
    *,
    partitions_per_topic: Mapping[str, int] | None,
    generation_id: int | None,
    assignor: str | AssignorSpec | None,
    protocol: str | None,
    check_handoff: bool = True,
    prefix: str = "",
) -> _Prepared:
    subs = normalize_subscriptions(subscriptions)
    assignment = normalize_assignment(assignment_by_member)
    prev = _as_generation(previous, subs, generation_id)
    if isinstance(assignor, str):
        try:
            spec: AssignorSpec | None = ASSIGNORS[assignor]
        except KeyError:
            raise ValueError(
                f"unknown assignor {assignor!r}: choose one of {', '.join(sorted(ASSIGNORS))}"
            ) from None
    else:
        spec = assignor
    if protocol is None:
        protocol = "cooperative" if spec is not None and spec.cooperative else "eager"
    if protocol not in ("eager", "cooperative"):
        raise ValueError(f"protocol must be 'eager' or 'cooperative', got {protocol!r}")
    counts = dict(partitions_per_topic) if partitions_per_topic is not None else None

    problem = _Problem(assignment, prefix)
    checked: list[str] = []
    skipped: list[tuple[str, str]] = []
    in_transfer = _encode_ownership(problem, subs, counts, prev, protocol, checked, skipped)
    _encode_subscribed_owner(problem, subs, counts, checked)
    complete = not in_transfer
    if spec is None:
        skipped.append((BALANCE, "no assignor given, so no balance promise"))
        skipped.append((STICKINESS, "no assignor given, so no stickiness promise"))
    else:
        _encode_balance(problem, spec, subs, counts, complete, checked, skipped)
        _encode_stickiness(problem, spec, subs, counts, prev, complete, checked, skipped)
    if protocol == "cooperative":
        if prev is None:
            skipped.append((COOPERATIVE_HANDOFF, "no previous generation given"))
        elif not check_handoff:
            skipped.append((COOPERATIVE_HANDOFF, "the previous generation may not be adjacent"))
        else:
            _encode_handoff(problem, subs, prev)
            checked.append(COOPERATIVE_HANDOFF)
    return _Prepared(
        problem=problem,
        subs=subs,
        assignment=assignment,
        counts=counts,
        prev=prev,
        spec=spec,
        generation_id=generation_id,
        checked=tuple(checked),
        skipped=tuple(skipped),
    )


def _result(prepared: _Prepared, *, timeout_ms: int, max_violations: int) -> Result:
    status, cores, reason = prepared.problem.solve(timeout_ms=timeout_ms, max_cores=max_violations)
    if status == "unknown":
        return Result(
            verdict=Verdict.UNKNOWN,
            checked=prepared.checked,
            skipped=prepared.skipped,
            reason=f"z3 answered unknown ({reason or 'no reason given'})",
        )
    if status == "sat":
        return Result(verdict=Verdict.PASS, checked=prepared.checked, skipped=prepared.skipped)
    explainer = _Explainer(
        prepared.subs,
        prepared.assignment,
        prepared.counts,
        prepared.prev,
        prepared.spec,
        prepared.generation_id,
    )
    return Result(
        verdict=Verdict.FAIL,
        violations=tuple(explainer.explain(core) for core in cores),
        checked=prepared.checked,
        skipped=prepared.skipped,
    )


def check_generation(
    subscriptions: Mapping[str, SubscriptionLike],
    assignment_by_member: Mapping[str, AssignmentLike],
    previous: Generation | Mapping[str, AssignmentLike] | None = None,
    *,
    partitions_per_topic: Mapping[str, int] | None = None,
    generation_id: int | None = None,
    assignor: str | AssignorSpec | None = None,
    protocol: str | None = None,
    check_handoff: bool = True,
    timeout_ms: int = 10_000,
    max_violations: int = 5,
) -> Result:
    """Check one generation's assignment with Z3.

    ``subscriptions``: member -> subscription (model record, encoded string or topic list); the
    members of this generation. ``assignment_by_member``: member -> assignment (encoded string,
    ``{topic: [partitions]}`` or (topic, partition) pairs). ``previous``: the previous generation's
    assignment (a :class:`Generation` or the same shapes), for stickiness and the cooperative
    hand-off. ``partitions_per_topic``: topic metadata; without it only at-most-one-owner and
    subscription checks run. ``assignor``: name in ``kgc.model.assignors.ASSIGNORS`` whose promises
    (balance, stickiness) are checked. ``protocol``: ``"eager"`` or ``"cooperative"`` (default: the
    assignor's, else eager). ``check_handoff``: set it false when ``previous`` is an earlier
    generation but maybe not the one just before (it still relaxes coverage for partitions being
    revoked). ``max_violations``: how many distinct counterexamples to report.
    """
    prepared = _prepare(
        subscriptions,
        assignment_by_member,
        previous,
        partitions_per_topic=partitions_per_topic,
        generation_id=generation_id,
        assignor=assignor,
        protocol=protocol,
        check_handoff=check_handoff,
    )
    return _result(prepared, timeout_ms=timeout_ms, max_violations=max_violations)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRequest:
    """The arguments of one :func:`check_generation` call, for :func:`check_many`."""

    subscriptions: Mapping[str, SubscriptionLike]
    assignment: Mapping[str, AssignmentLike]
    previous: Generation | Mapping[str, AssignmentLike] | None = None
    partitions_per_topic: Mapping[str, int] | None = None
    generation_id: int | None = None
    assignor: str | AssignorSpec | None = None
    protocol: str | None = None


def check_many(
    requests: Sequence[CheckRequest],
    *,
    timeout_ms: int = 60_000,
    max_violations: int = 5,
    explain_limit: int | None = None,
) -> list[Result]:
    """Check many generations in one Z3 query (one tracking literal per generation); only the
    generations in an unsat core are re-checked one by one, for their counterexamples. Same
    verdicts as calling :func:`check_generation` on each, much faster for many small inputs.
    ``explain_limit``: at most this many failing generations get counterexample sentences; the
    others fail with an ``unexplained`` violation (their verdict is still proven)."""
    prepared = [
        _prepare(
            r.subscriptions,
            r.assignment,
            r.previous,
            partitions_per_topic=r.partitions_per_topic,
            generation_id=r.generation_id,
            assignor=r.assignor,
            protocol=r.protocol,
            prefix=f"g{i}_",
        )
        for i, r in enumerate(requests)
    ]
    texts: list[str] = []
    names: list[str] = []
    for p in prepared:
        text, (name,) = p.problem.text(tracked=False)
        texts.append(text)
        names.append(name)
    solver = z3.Solver()
    solver.set("timeout", max(1, int(timeout_ms)))
    solver.from_string("\n".join(texts))
    active = {name: z3.Bool(name) for name in names}
    failing: set[str] = set()
    answer = solver.check(*active.values())
    if answer != z3.sat:
        # Some generation fails (or Z3 gave up): ask about each one on its own, in a small
        # solver of its own, so each gets its own verdict.
        for p, name in zip(prepared, names, strict=True):
            single = z3.Solver()
            single.set("timeout", max(1, int(timeout_ms)))
            single.from_string(p.problem.text(tracked=False)[0])
            if single.check(z3.Bool(name)) != z3.sat:
                failing.add(name)
    results: list[Result] = []
    explained = 0
    for p, name in zip(prepared, names, strict=True):
        if name in failing and explain_limit is not None and explained >= explain_limit:
            unexplained = Violation(
                invariant="unexplained",
                message="violates an invariant (counterexample not extracted: explain limit)",
                generation_id=p.generation_id,
            )
            results.append(
                Result(
                    verdict=Verdict.FAIL,
                    violations=(unexplained,),
                    checked=p.checked,
                    skipped=p.skipped,
                )
            )
        elif name in failing:
            result = _result(p, timeout_ms=timeout_ms, max_violations=max_violations)
            explained += result.verdict is Verdict.FAIL
            results.append(result)
        else:
            results.append(Result(verdict=Verdict.PASS, checked=p.checked, skipped=p.skipped))
    return results


def _subscribed_partitions(
    subs: Mapping[str, Subscription], counts: Mapping[str, int]
) -> list[TopicPartition]:
    topics = sorted({t for s in subs.values() for t in s.topics if counts.get(t, 0) > 0})
    return [TopicPartition(t, p) for t in topics for p in range(counts[t])]


def _encode_ownership(
    problem: _Problem,
    subs: Mapping[str, Subscription],
    counts: Mapping[str, int] | None,
    prev: Generation | None,
    protocol: str,
    checked: list[str],
    skipped: list[tuple[str, str]],
) -> bool:
    """Exactly one owner per subscribed partition. Returns whether some partition is legitimately
    unowned because it is being revoked (cooperative protocol)."""
    in_transfer = False
    revoking: set[TopicPartition] = set()
    if protocol == "cooperative" and prev is not None:
        for member, owned in prev.assignment.items():
            if member in subs:
                revoking.update(tp for tp in owned if tp not in problem.assignment.get(member, ()))
    if counts is None:
        for tp, owners in sorted(problem.owners.items()):
            terms = " ".join(problem.own[(m, tp)] for m in owners)
            problem.add(EXACTLY_ONE_OWNER, (tp,), f"((_ at-most 1) {terms})")
        checked.append(EXACTLY_ONE_OWNER + " (at most one: partition counts unknown)")
        skipped.append((EXACTLY_ONE_OWNER, "partition counts unknown: unowned partitions not seen"))
        return False
    subscribed = _subscribed_partitions(subs, counts)
    for tp in subscribed:
        owners = problem.owners.get(tp, [])
        if not owners:
            if tp in revoking:
                in_transfer = True  # being revoked: may be unowned for one generation
            else:
                problem.add(EXACTLY_ONE_OWNER, (tp,), "false")
            continue
        terms = " ".join(problem.own[(m, tp)] for m in owners)
        problem.add(EXACTLY_ONE_OWNER, (tp,), f"(and ((_ at-most 1) {terms}) (or {terms}))")
    subscribed_set = set(subscribed)
    for tp, owners in sorted(problem.owners.items()):
        if tp not in subscribed_set and len(owners) > 1:
            terms = " ".join(problem.own[(m, tp)] for m in owners)
            problem.add(EXACTLY_ONE_OWNER, (tp,), f"((_ at-most 1) {terms})")
    checked.append(EXACTLY_ONE_OWNER)
    return in_transfer


def _encode_subscribed_owner(
    problem: _Problem,
    subs: Mapping[str, Subscription],
    counts: Mapping[str, int] | None,
    checked: list[str],
) -> None:
    topics_of = {m: frozenset(s.topics) for m, s in subs.items()}
    for (member, tp), var in sorted(problem.own.items()):
        allowed = member in topics_of and tp.topic in topics_of[member]
        if counts is not None:
            allowed = allowed and 0 <= tp.partition < counts.get(tp.topic, 0)
        if not allowed:  # a permitted pair contributes (=> var true): nothing to assert
            problem.add(SUBSCRIBED_OWNER, (member, tp), f"(not {var})")
    checked.append(SUBSCRIBED_OWNER)


def _homogeneous(subs: Mapping[str, Subscription]) -> bool:
    return len({frozenset(s.topics) for s in subs.values()}) <= 1


def _encode_balance(
    problem: _Problem,
    spec: AssignorSpec,
    subs: Mapping[str, Subscription],
    counts: Mapping[str, int] | None,
    complete: bool,
    checked: list[str],
    skipped: list[tuple[str, str]],
) -> None:
    if not subs:
        skipped.append((BALANCE, "no members"))
        return
    if not complete:
        skipped.append(
            (
                BALANCE,
                "partitions are being revoked: balance is promised once the follow-up "
                "rebalance completes",
            )
        )
        return
    if spec.balance is Balance.PER_TOPIC:
        if counts is None:
            skipped.append((BALANCE, "partition counts unknown: per-topic ranges not checkable"))
            return
        order = sorted_members(subs)
        for topic in sorted({t for s in subs.values() for t in s.topics}):
            n = counts.get(topic, 0)
            if n <= 0:
                continue
            subscribers = [m for m in order if topic in subs[m].topics]
            q, r = divmod(n, len(subscribers))
            for i, member in enumerate(subscribers):
                start, end = i * q + min(i, r), (i + 1) * q + min(i + 1, r)
                mine = sorted(tp for tp in problem.assignment.get(member, ()) if tp.topic == topic)
                owns_range = [
                    problem.owns(member, TopicPartition(topic, p)) for p in range(start, end)
                ]
                formula = _smt_and(
                    [f"(= {problem.count(member, mine)} {end - start})", *owns_range]
                )
                problem.add(BALANCE, ("range", topic, i, member, start, end), formula)
        checked.append(BALANCE + " (per-topic ranges)")
        return
    homogeneous = _homogeneous(subs)
    if spec.balance is Balance.EVEN_IF_HOMOGENEOUS and not homogeneous:
        skipped.append((BALANCE, f"{spec.name} promises no balance when subscriptions differ"))
        return
    if homogeneous:
        band = problem.int_var()
        for member in sorted(subs):
            load = problem.load(member)
            problem.add(
                BALANCE, ("band", member), f"(and (<= {band} {load}) (<= {load} (+ {band} 1)))"
            )
        checked.append(BALANCE + " (loads within one)")
        return
    # As balanced as possible, subscriptions differ: for every topic t, every owner of a partition
    # of t has at most one partition more than any subscriber of t.
    owners_of: dict[str, set[str]] = {}
    for member, tp in problem.own:
        if member in subs:
            owners_of.setdefault(tp.topic, set()).add(member)
    for topic in sorted({t for s in subs.values() for t in s.topics}):
        subscribers = [m for m in sorted(subs) if topic in subs[m].topics]
        owners = sorted(owners_of.get(topic, ()))
        if not owners:
            continue
        floor = problem.int_var()
        for member in subscribers:
            problem.add(BALANCE, ("floor", topic, member), f"(<= {floor} {problem.load(member)})")
        for member in owners:
            problem.add(
                BALANCE, ("owner", topic, member), f"(<= {problem.load(member)} (+ {floor} 1))"
            )
    checked.append(BALANCE + " (as balanced as possible)")


def _valid_previous(
    subs: Mapping[str, Subscription],
    counts: Mapping[str, int],
    prev: Generation,
) -> dict[str, set[TopicPartition]]:
    """Per member, the previously owned partitions it may keep: still a member, still subscribed,
    the partition exists, and no other member owned it too."""
    claims: dict[TopicPartition, int] = {}
    for owned in prev.assignment.values():
        for tp in owned:
            claims[tp] = claims.get(tp, 0) + 1
    valid: dict[str, set[TopicPartition]] = {}
    for member, owned in prev.assignment.items():
        if member not in subs:
            continue
        topics = set(subs[member].topics)
        valid[member] = {
            tp
            for tp in owned
            if tp.topic in topics and tp.partition < counts.get(tp.topic, 0) and claims[tp] == 1
        }
    return valid


def max_retention(total: int, members: Sequence[str], valid: Mapping[str, set[Any]]) -> int:
    """The most previously owned partitions any balanced assignment of ``total`` partitions over
    ``members`` (all subscribed to the same topics) can leave with their owners."""
    if not members:
        return 0
    floor, extra = divmod(total, len(members))
    v = [len(valid.get(m, ())) for m in members]
    return sum(min(x, floor) for x in v) + min(extra, sum(1 for x in v if x > floor))


def _encode_stickiness(
    problem: _Problem,
    spec: AssignorSpec,
    subs: Mapping[str, Subscription],
    counts: Mapping[str, int] | None,
    prev: Generation | None,
    complete: bool,
    checked: list[str],
    skipped: list[tuple[str, str]],
) -> None:
    if not spec.sticky:
        return
    if prev is None:
        skipped.append((STICKINESS, "no previous generation given"))
        return
    if counts is None:
        skipped.append((STICKINESS, "partition counts unknown"))
        return
    if not _homogeneous(subs):
        skipped.append((STICKINESS, "subscriptions differ: Kafka promises no optimum"))
        return
    if not complete:
        skipped.append((STICKINESS, "partitions are being revoked: checked after the follow-up"))
        return
    valid = _valid_previous(subs, counts, prev)
    members = sorted(subs)
    total = len(_subscribed_partitions(subs, counts))
    best = max_retention(total, members, valid)
    kept_terms: list[str] = []
    for member in members:
        kept = _smt_sum(
            [f"(ite {problem.owns(member, tp)} 1 0)" for tp in sorted(valid.get(member, ()))]
        )
        kept_terms.append(kept)
        share = problem.load(member)
        v = len(valid.get(member, ()))
        problem.add(
            STICKINESS, ("member", member), f"(>= {kept} (ite (< {share} {v}) {share} {v}))"
        )
    problem.add(STICKINESS, ("total", best), f"(>= {_smt_sum(kept_terms)} {best})")
    checked.append(STICKINESS)


def _encode_handoff(problem: _Problem, subs: Mapping[str, Subscription], prev: Generation) -> None:
    for old_owner in sorted(prev.assignment):
        if old_owner not in subs:
            continue  # it left the group: its partitions may move at once
        for tp in sorted(prev.assignment[old_owner]):
            for new_owner in problem.owners.get(tp, []):
                if new_owner != old_owner:
                    problem.add(
                        COOPERATIVE_HANDOFF,
                        (tp, old_owner, new_owner),
                        f"(not {problem.own[(new_owner, tp)]})",
                    )


# ------------------------------------------------------------------------------ explanations


class _Explainer:
    def __init__(
        self,
        subs: Mapping[str, Subscription],
        assignment: Mapping[str, frozenset[TopicPartition]],
        counts: Mapping[str, int] | None,
        prev: Generation | None,
        spec: AssignorSpec | None,
        generation_id: int | None,
    ) -> None:
        self.subs = subs
        self.assignment = assignment
        self.counts = counts
        self.prev = prev
        self.spec = spec
        self.gen = generation_id
        self.owners: dict[TopicPartition, list[str]] = {}
        for m in sorted(assignment):
            for tp in assignment[m]:
                self.owners.setdefault(tp, []).append(m)

    def _in_gen(self) -> str:
        return f" in generation {self.gen}" if self.gen is not None else ""

    def _prev_gen(self) -> str:
        if self.prev is not None and self.prev.generation_id is not None:
            return f"generation {self.prev.generation_id}"
        return "the previous generation"

    def load(self, member: str) -> int:
        return len(self.assignment.get(member, ()))

    def explain(self, core: list[_Instance]) -> Violation:
        inst = core[0]
        kind = inst.invariant
        if kind == EXACTLY_ONE_OWNER:
            tp = inst.key[0]
            owners = self.owners.get(tp, [])
            if owners:
                msg = (
                    f"partition {tp} is owned by {len(owners)} members at once{self._in_gen()}: "
                    f"{_and(owners)}"
                )
            else:
                who = self._subscribers(tp.topic)
                verb = "subscribes" if len(who) == 1 else "subscribe"
                msg = (
                    f"partition {tp} has no owner{self._in_gen()} although {_and(who)} "
                    f"{verb} to {tp.topic}"
                )
            return Violation(
                invariant=kind,
                message=msg,
                partitions=(str(tp),),
                members=tuple(owners),
                generation_id=self.gen,
            )
        if kind == SUBSCRIBED_OWNER:
            member, tp = inst.key
            if member not in self.subs:
                why = f"{member} is not a member of the generation"
            elif tp.topic not in self.subs[member].topics:
                why = f"{member} does not subscribe to {tp.topic}"
            else:
                n = 0 if self.counts is None else self.counts.get(tp.topic, 0)
                why = f"{tp.topic} has only {n} partitions"
            return Violation(
                invariant=kind,
                message=f"partition {tp} is assigned to {member}{self._in_gen()} but {why}",
                partitions=(str(tp),),
                members=(member,),
                generation_id=self.gen,
            )
        if kind == COOPERATIVE_HANDOFF:
            tp, old, new = inst.key
            msg = (
                f"partition {tp} is assigned to {new}{self._in_gen()} while {old}, which owned it "
                f"in {self._prev_gen()} and is still a member, has not revoked it: the revocation "
                f"generation was skipped, so {old} and {new} own {tp} at the same time"
            )
            return Violation(
                invariant=kind,
                message=msg,
                partitions=(str(tp),),
                members=(old, new),
                generation_id=self.gen,
            )
        if kind == BALANCE:
            return self._explain_balance(core)
        return self._explain_stickiness(core)

    def _subscribers(self, topic: str) -> list[str]:
        return [m for m in sorted(self.subs) if topic in self.subs[m].topics]

    def _explain_balance(self, core: list[_Instance]) -> Violation:
        name = self.spec.name if self.spec is not None else "the assignor"
        first = core[0].key
        if first[0] == "range":
            _, topic, i, member, start, end = first
            mine = sorted(
                tp.partition for tp in self.assignment.get(member, ()) if tp.topic == topic
            )
            subscribers = len(self._subscribers(topic))
            msg = (
                f"{name} promises {member} (subscriber {i + 1} of {subscribers} to {topic} in "
                f"Kafka's member order) partitions {topic}-[{start}..{end}){self._in_gen()}, "
                f"but it owns {_plist(topic, mine)}"
            )
            return Violation(
                invariant=BALANCE, message=msg, members=(member,), generation_id=self.gen
            )
        members = sorted({inst.key[-1] for inst in core}, key=self.load)
        if first[0] == "band":
            lo, hi = members[0], members[-1]
            msg = (
                f"{name} promises loads within one of each other when all members subscribe to "
                f"the same topics, but {hi} owns {self.load(hi)} partitions and {lo} owns "
                f"{self.load(lo)}{self._in_gen()}"
            )
            return Violation(
                invariant=BALANCE, message=msg, members=(hi, lo), generation_id=self.gen
            )
        topic = first[1]
        owners = [inst.key[2] for inst in core if inst.key[0] == "owner"]
        floors = [inst.key[2] for inst in core if inst.key[0] == "floor"]
        hi = max(owners, key=self.load) if owners else members[-1]
        lo = min(floors, key=self.load) if floors else members[0]
        movable = sorted(tp for tp in self.assignment.get(hi, ()) if tp.topic == topic)
        example = f" (e.g. {movable[0]})" if movable else ""
        msg = (
            f"{name} promises an assignment as balanced as possible, but {hi} owns "
            f"{self.load(hi)} partitions including some of {topic}{example} while {lo}, also "
            f"subscribed to {topic}, owns only {self.load(lo)}{self._in_gen()}: moving one "
            f"would improve balance"
        )
        return Violation(
            invariant=BALANCE,
            message=msg,
            partitions=(str(movable[0]),) if movable else (),
            members=(hi, lo),
            generation_id=self.gen,
        )

    def _explain_stickiness(self, core: list[_Instance]) -> Violation:
        assert self.prev is not None and self.counts is not None
        valid = _valid_previous(self.subs, self.counts, self.prev)
        name = self.spec.name if self.spec is not None else "the assignor"
        for inst in core:
            if inst.key[0] == "member":
                member = inst.key[1]
                mine = self.assignment.get(member, frozenset())
                lost = sorted(valid.get(member, set()) - mine)
                new = sorted(mine - valid.get(member, set()))
                tp = lost[0] if lost else None
                to = self.owners.get(tp, ["nobody"])[0] if tp is not None else "nobody"
                msg = (
                    f"{name} should keep partitions with their owners where balance allows, but "
                    f"partition {tp} moved from {member} to {to}{self._in_gen()} although "
                    f"{member} received {len(new)} partition(s) it did not own"
                    + (f" (e.g. {new[0]})" if new else "")
                )
                return Violation(
                    invariant=STICKINESS,
                    message=msg,
                    partitions=(str(tp),) if tp else (),
                    members=(member, to),
                    generation_id=self.gen,
                )
        best = core[0].key[1]
        kept = sum(
            len(valid.get(m, set()) & self.assignment.get(m, frozenset())) for m in self.subs
        )
        msg = (
            f"{name} should keep as many partitions with their owners as any balanced assignment "
            f"can: {best} of those owned in {self._prev_gen()} could stay, but only {kept} did"
            f"{self._in_gen()}"
        )
        return Violation(invariant=STICKINESS, message=msg, generation_id=self.gen)


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if not items:
        return "no member"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _plist(topic: str, partitions: Sequence[int]) -> str:
    if not partitions:
        return f"no partition of {topic}"
    return ", ".join(f"{topic}-{p}" for p in partitions)


# ------------------------------------------------------------------------------------ histories


def check_history(
    generations: Sequence[Generation],
    *,
    partitions_per_topic: Mapping[str, int] | None = None,
    assignor: str | AssignorSpec | None = None,
    protocol: str | None = None,
    timeout_ms: int = 10_000,
) -> list[Result]:
    """Check each generation, with the one before it as ``previous``."""
    results: list[Result] = []
    prev: Generation | None = None
    for g in generations:
        results.append(
            check_generation(
                g.subscriptions,
                g.assignment,
                prev,
                partitions_per_topic=partitions_per_topic,
                generation_id=g.generation_id,
                assignor=assignor,
                protocol=protocol,
                timeout_ms=timeout_ms,
            )
        )
        prev = g
    return results


def replace_assignment(
    g: Generation, assignment: Mapping[str, Iterable[TopicPartition]]
) -> Generation:
    """A copy of ``g`` with another assignment (handy in tests)."""
    return dataclasses.replace(g, assignment={m: frozenset(v) for m, v in assignment.items()})


# ------------------------------------------------------------------------- ownership in real time


def check_ownership_timeline(
    intervals: Sequence[tuple[str, tuple[str, int] | TopicPartition, float, float]],
    *,
    timeout_ms: int = 10_000,
    max_violations: int = 5,
) -> Result:
    """No partition is owned by two members at the same moment.

    ``intervals``: (member, partition, from, to) as the members themselves report ownership
    (rebalance-listener callbacks), in one clock. For each partition and each pair of intervals
    of *different* members, Z3 checks ``to_a <= from_b or to_b <= from_a`` (touching is allowed:
    one revokes, then the other is assigned). A violation names the partition, both members and
    the overlapping time span.
    """
    by_partition: dict[TopicPartition, list[tuple[str, float, float]]] = {}
    for member, tp, start, end in intervals:
        key = TopicPartition(str(tp[0]), int(tp[1]))
        by_partition.setdefault(key, []).append((member, float(start), float(end)))
    problem = _Problem({})
    for tp, spans in sorted(by_partition.items()):
        spans.sort(key=lambda s: (s[1], s[0]))
        for i, (a, a_from, a_to) in enumerate(spans):
            for b, b_from, b_to in spans[i + 1 :]:
                if a == b:
                    continue
                formula = (
                    f"(or (<= {_real(a_to)} {_real(b_from)}) (<= {_real(b_to)} {_real(a_from)}))"
                )
                problem.add(COOPERATIVE_HANDOFF, (tp, a, b, a_from, a_to, b_from, b_to), formula)
    status, cores, reason = problem.solve(timeout_ms=timeout_ms, max_cores=max_violations)
    checked = ("one owner at a time",)
    if status == "unknown":
        return Result(verdict=Verdict.UNKNOWN, checked=checked, reason=f"z3: {reason}")
    if status == "sat":
        return Result(verdict=Verdict.PASS, checked=checked)
    violations = []
    for core in cores:
        tp, a, b, a_from, a_to, b_from, b_to = core[0].key
        overlap = min(a_to, b_to) - max(a_from, b_from)
        violations.append(
            Violation(
                invariant="one-owner-at-a-time",
                message=(
                    f"partition {tp} was owned by {a} and {b} at the same time for "
                    f"{overlap * 1000:.0f} ms ({a} from {a_from:.3f} to {a_to:.3f}, {b} from "
                    f"{b_from:.3f} to {b_to:.3f})"
                ),
                partitions=(str(tp),),
                members=(a, b),
            )
        )
    return Result(verdict=Verdict.FAIL, violations=tuple(violations), checked=checked)


def _real(x: float) -> str:
    text = f"{x:.6f}"
    return text if x >= 0 else f"(- {text[1:]})"
