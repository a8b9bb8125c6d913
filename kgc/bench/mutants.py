"""``kgc bench mutants``: the default search against each broker mutant: share killed, how fast.

One embedded broker; in front of it a :class:`~kgc.conformance.mutants.proxy.MutantProxy` per
mutant (``conformance/mutants/catalogue.py``: the ``answer`` family; ``requests.py``: ``kept``,
``timer``, ``decision``), and ``kgc check``'s default search (profile ``ci``, seed 1, its default
shrink and minimise budgets) pointed at the proxy, as a user points it at a broker.

Kill rules (:func:`judge`), all three enforced:

1. **Faithful proxy.** The same seed first runs through the proxy with no mutant; it must pass,
   or the proxy itself would be what the search finds, and no kill counts.
2. **Re-encode control.** The same seed runs through a proxy that decodes and encodes again,
   unchanged, every request and answer of every API the chosen mutants touch, and sends the
   re-encoded bytes; it must pass (if it fails, each API is run alone to name the culprits), and a
   mutant touching an API whose control failed is not counted killed.
3. **Divergence at or after the first mutated exchange.** The proxy stamps each exchange the
   mutant changed with its group id (:attr:`MutantProxy.mutations`). As each example ends, its
   failure time (the divergence event's ``at_ms``, or for an invariant or connection failure its
   last event's) is put on the proxy's clock; the example's failure is *attributed* when its group
   had a mutated exchange no later (1 ms slack for putting the two clocks together). A mutant is
   killed when the search failed and its first failing example is attributed.

Keys: ``mutants``, ``killed``, ``killed_share``, ``identity_proxy_divergences`` (the faithful
proxy; must be 0), ``reencode_control`` (``apis``, ``divergences`` (must be 0),
``frames_reencoded``, ``frames_changed`` (bytes a round trip changed, must be 0), ``failed_apis``),
``find_s_median`` / ``find_s_max`` (search start to the first failure seen, killed mutants),
``shrink_s_median`` (first failure to the end of shrinking and minimising),
``trace_commands_median`` (commands in the saved trace), ``survivors`` (names), ``wall_s`` (the
whole bench), ``families`` (per family: ``killed``, ``total``, ``killed_share``, ``survivors``
as ``{name: reason}``), and per mutant ``mutant_<name>``: ``family``, ``killed``,
``search_failed``, ``failure`` (divergence, invariant, connection, flaky or None), ``find_s``,
``shrink_s``, ``trace_commands``, ``answers_mutated`` (exchanges the mutant changed),
``failing_examples``, ``unattributed_failures``, ``first_failure_after_mutation_ms``,
``first_mutated_api``, ``reason`` (why it is not counted killed), ``proxy_errors`` /
``proxy_error_first`` (hooks that raised: that exchange went through unchanged; none expected).
``--quick``: the ``quick`` profile. ``--family answer,timer``: only those families;
``--mutant NAME,…``: only those mutants.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.suite import (
    CLASSIC,
    BrokerAccess,
    Output,
    Search,
    SuiteResult,
    run_workload,
)
from kgc.conformance.mutants.catalogue import BY_NAME, MUTANTS, Mutant
from kgc.conformance.mutants.proxy import FAMILIES, MutantProxy
from kgc.engine.traces import load

CLOCK_SLACK_S = 0.001  # putting the engine's clock onto the proxy's (two reads back to back)
SEED = 1


@dataclass(slots=True)
class Failing:
    """One failing example: when it failed (proxy clock) and its group's first mutation."""

    group_id: str
    failed_at_s: float
    first_mutation_s: float | None
    first_mutated_api: str | None

    @property
    def attributed(self) -> bool:
        return (
            self.first_mutation_s is not None
            and self.first_mutation_s <= self.failed_at_s + CLOCK_SLACK_S
        )


@dataclass(slots=True)
class Run:
    result: SuiteResult
    proxy: MutantProxy
    failing: list[Failing] = field(default_factory=list)


def failed_at(machine: Any) -> float | None:
    """When ``machine``'s example failed, on ``time.monotonic()``; None if it did not."""
    if machine.failed_check in (None, "known-bug", "lost"):
        return None
    engine = machine.engine
    divergence = engine.divergence
    if divergence is not None:
        at_ms = divergence.event.at_ms
    elif engine.events:
        at_ms = engine.events[-1].at_ms
    else:
        return None
    origin = time.monotonic() - machine.target.now_ms() / 1000.0
    return origin + at_ms / 1000.0


def against(
    upstream: str,
    description: dict[str, Any],
    mutant: Mutant | None,
    *,
    profile: str,
    traces: str,
    reencode: frozenset[str] = frozenset(),
) -> Run:
    """The search against ``mutant`` in a proxy before ``upstream``, each failing example noted."""
    with MutantProxy(upstream, mutant, reencode=reencode) as proxy:
        run = Run(result=SuiteResult(profile=profile, seed=SEED), proxy=proxy)

        def on_example(machine: Any) -> None:
            at = failed_at(machine)
            if at is None:
                return
            first = proxy.first_mutation(machine.group_id)
            run.failing.append(
                Failing(
                    group_id=machine.group_id,
                    failed_at_s=at,
                    first_mutation_s=first.at_s if first else None,
                    first_mutated_api=first.api if first else None,
                )
            )

        name = mutant.name if mutant else ("re-encode control" if reencode else "none")
        run.result = run_workload(
            CLASSIC,
            BrokerAccess(
                bootstrap_servers=proxy.bootstrap_servers,
                description={**description, "name": f"mutant {name}"},
            ),
            search=Search(profile=profile, seed=SEED),
            output=Output(traces_dir=traces, on_example=on_example),
        )
        return run


def judge(run: Run, *, faithful_ok: bool, control_failed: set[str], apis: tuple[str, ...]) -> str:
    """Why ``run``'s search does not count as a kill ("" when it does): the three rules."""
    if run.result.ok:
        return "the search passed"
    if not faithful_ok:
        return "the faithful proxy failed with the same seed"
    bad = sorted(control_failed & set(apis))
    if bad:
        return f"the re-encode control failed for {', '.join(bad)}"
    if not run.failing:
        return "the search failed but no failing example was seen"
    first = run.failing[0]
    if first.first_mutation_s is None:
        return "the first failing example's group had no mutated exchange"
    if not first.attributed:
        return "the first failing example failed before its group's first mutated exchange"
    return ""


def chosen(args: Any) -> tuple[Mutant, ...]:
    """The mutants ``--family`` and ``--mutant`` choose (all by default)."""
    families = _names(getattr(args, "family", None))
    names = _names(getattr(args, "mutant", None))
    unknown = sorted(families - set(FAMILIES)) + sorted(names - set(BY_NAME))
    if unknown:
        raise SystemExit(
            f"kgc bench mutants: unknown {', '.join(unknown)}; families are "
            f"{', '.join(FAMILIES)}, mutants are listed in conformance/mutants/"
        )
    return tuple(
        m
        for m in MUTANTS
        if (not families or m.family in families) and (not names or m.name in names)
    )


def _names(text: str | None) -> set[str]:
    return {n.strip() for n in (text or "").split(",") if n.strip()}


def control(
    upstream: str, description: dict[str, Any], apis: frozenset[str], *, profile: str, traces: str
) -> dict[str, Any]:
    """Kill rule 2: the re-encode control over ``apis``; on failure each API alone."""
    run = against(upstream, description, None, profile=profile, traces=traces, reencode=apis)
    out: dict[str, Any] = {
        "apis": sorted(apis),
        "divergences": 0 if run.result.ok else 1,
        "frames_reencoded": run.proxy.reencoded,
        "frames_changed": run.proxy.reencode_differs,
        "failed_apis": [],
    }
    if not run.result.ok or run.proxy.reencode_differs:
        for api in sorted(apis):
            alone = against(
                upstream,
                description,
                None,
                profile=profile,
                traces=traces,
                reencode=frozenset({api}),
            )
            if not alone.result.ok or alone.proxy.reencode_differs:
                out["failed_apis"].append(api)
    return out


def row_of(m: Mutant, run: Run, reason: str) -> dict[str, Any]:
    r = run.result
    row: dict[str, Any] = {
        "family": m.family,
        "killed": not reason,
        "search_failed": not r.ok,
        "failure": r.failure,
        "answers_mutated": run.proxy.mutated,
        "failing_examples": len(run.failing),
        "unattributed_failures": sum(not f.attributed for f in run.failing),
    }
    if run.proxy.errors:
        row["proxy_errors"] = len(run.proxy.errors)
        row["proxy_error_first"] = run.proxy.errors[0]
    if reason:
        row["reason"] = reason
    if run.failing and run.failing[0].first_mutation_s is not None:
        first = run.failing[0]
        assert first.first_mutation_s is not None
        row["first_failure_after_mutation_ms"] = round(
            (first.failed_at_s - first.first_mutation_s) * 1000.0, 1
        )
        row["first_mutated_api"] = first.first_mutated_api
    if not r.ok and r.first_failure_s is not None:
        row["find_s"] = round(r.first_failure_s, 1)
        row["shrink_s"] = round(r.wall_s - r.first_failure_s, 1)
    if r.saved:
        row["trace_commands"] = len(load(r.saved[0]).commands)
    return row


def run(args: Any) -> dict[str, Any]:
    started = time.monotonic()
    profile = "quick" if args.quick else "ci"
    mutants = chosen(args)
    out: dict[str, Any] = {"profile": profile, "seed": SEED, "mutants": len(mutants)}
    rows: dict[str, dict[str, Any]] = {}
    with (
        open_broker(kafka_version=args.kafka_version) as broker,
        tempfile.TemporaryDirectory(prefix="kgc-bench-mutants-") as traces,
    ):
        description = description_of(broker)
        upstream = broker.bootstrap_servers.split(",")[0]
        print("kgc bench mutants: faithful proxy", file=sys.stderr, flush=True)
        base = against(upstream, description, None, profile=profile, traces=traces)
        out["identity_proxy_divergences"] = 0 if base.result.ok else 1
        apis = frozenset(a for m in mutants for a in m.apis)
        print(f"kgc bench mutants: re-encode control {sorted(apis)}", file=sys.stderr, flush=True)
        out["reencode_control"] = control(
            upstream, description, apis, profile=profile, traces=traces
        )
        failed_apis = set(out["reencode_control"]["failed_apis"])
        if out["reencode_control"]["divergences"] and not failed_apis:
            failed_apis = set(apis)  # the whole control failed, no API alone: trust none
        for m in mutants:
            print(f"kgc bench mutants: {m.name}", file=sys.stderr, flush=True)
            r = against(upstream, description, m, profile=profile, traces=traces)
            reason = judge(r, faithful_ok=base.result.ok, control_failed=failed_apis, apis=m.apis)
            rows[m.name] = row_of(m, r, reason)
    out |= summary(rows)
    out |= {f"mutant_{name}": row for name, row in rows.items()}
    out["wall_s"] = round(time.monotonic() - started, 1)
    return out


def summary(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The totals over ``rows`` and per family."""
    killed = [r for r in rows.values() if r["killed"]]
    finds = [r["find_s"] for r in killed if "find_s" in r]
    shrinks = [r["shrink_s"] for r in killed if "shrink_s" in r]
    lengths = [r["trace_commands"] for r in killed if "trace_commands" in r]
    families: dict[str, dict[str, Any]] = {}
    for name, r in rows.items():
        f = families.setdefault(r["family"], {"killed": 0, "total": 0, "survivors": {}})
        f["total"] += 1
        f["killed"] += int(r["killed"])
        if not r["killed"]:
            f["survivors"][name] = r.get("reason", "")
    for f in families.values():
        f["killed_share"] = round(f["killed"] / f["total"], 3)
    return {
        "killed": len(killed),
        "killed_share": round(len(killed) / len(rows), 3) if rows else None,
        "find_s_median": round(statistics.median(finds), 1) if finds else None,
        "find_s_max": max(finds) if finds else None,
        "shrink_s_median": round(statistics.median(shrinks), 1) if shrinks else None,
        "trace_commands_median": statistics.median(lengths) if lengths else None,
        "survivors": sorted(n for n, r in rows.items() if not r["killed"]),
        "families": families,
    }
