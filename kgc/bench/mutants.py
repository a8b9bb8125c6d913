"""``kgc bench mutants``: the default search against each broker mutant: share killed, how fast.

One embedded broker; in front of it a :class:`~kgc.conformance.mutants.proxy.MutantProxy` per
mutant (``conformance/mutants/catalogue.py``), and ``kgc check``'s default search (profile ``ci``,
seed 1, its default shrink and minimise budgets) pointed at the proxy, as a user points it at a
broker. First the proxy with no mutant: it must pass, or the proxy itself would be what the search
finds. A mutant is *killed* when the search reports a failure (a divergence, or a closed
connection).

Keys: ``mutants``, ``killed``, ``killed_share``, ``identity_proxy_divergences`` (must be 0),
``find_s_median`` / ``find_s_max`` (search start to the first failure seen, killed mutants),
``shrink_s_median`` (first failure to the end of shrinking and minimising),
``trace_commands_median`` (commands in the saved trace), ``survivors`` (names), and per mutant
``mutant_<name>``: ``killed``, ``find_s``, ``shrink_s``, ``trace_commands``, ``answers_mutated``.
``--quick``: the ``quick`` profile.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
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
from kgc.conformance.mutants.catalogue import MUTANTS, Mutant
from kgc.conformance.mutants.proxy import MutantProxy
from kgc.engine.traces import load


def against(
    upstream: str, description: dict[str, Any], mutant: Mutant | None, *, profile: str, traces: str
) -> tuple[SuiteResult, int]:
    """The search against ``mutant`` in a proxy before ``upstream``: (result, answers mutated)."""
    with MutantProxy(upstream, mutant) as proxy:
        result = run_workload(
            CLASSIC,
            BrokerAccess(
                bootstrap_servers=proxy.bootstrap_servers,
                description={**description, "name": f"mutant {mutant.name if mutant else 'none'}"},
            ),
            search=Search(profile=profile, seed=1),
            output=Output(traces_dir=traces),
        )
        return result, proxy.mutated


def run(args: Any) -> dict[str, Any]:
    profile = "quick" if args.quick else "ci"
    out: dict[str, Any] = {"profile": profile, "mutants": len(MUTANTS)}
    rows: dict[str, dict[str, Any]] = {}
    with (
        open_broker(kafka_version=args.kafka_version) as broker,
        tempfile.TemporaryDirectory(prefix="kgc-bench-mutants-") as traces,
    ):
        description = description_of(broker)
        upstream = broker.bootstrap_servers.split(",")[0]
        base, _ = against(upstream, description, None, profile=profile, traces=traces)
        out["identity_proxy_divergences"] = 0 if base.ok else 1
        for m in MUTANTS:
            print(f"kgc bench mutants: {m.name}", file=sys.stderr, flush=True)
            r, mutated = against(upstream, description, m, profile=profile, traces=traces)
            row: dict[str, Any] = {"killed": not r.ok, "answers_mutated": mutated}
            if not r.ok and r.first_failure_s is not None:
                row["find_s"] = round(r.first_failure_s, 1)
                row["shrink_s"] = round(r.wall_s - r.first_failure_s, 1)
            if r.saved:
                row["trace_commands"] = len(load(r.saved[0]).commands)
            rows[m.name] = row
    killed = [r for r in rows.values() if r["killed"]]
    finds = [r["find_s"] for r in killed if "find_s" in r]
    shrinks = [r["shrink_s"] for r in killed if "shrink_s" in r]
    lengths = [r["trace_commands"] for r in killed if "trace_commands" in r]
    out |= {
        "killed": len(killed),
        "killed_share": round(len(killed) / len(rows), 3),
        "find_s_median": round(statistics.median(finds), 1) if finds else None,
        "find_s_max": max(finds) if finds else None,
        "shrink_s_median": round(statistics.median(shrinks), 1) if shrinks else None,
        "trace_commands_median": statistics.median(lengths) if lengths else None,
        "survivors": sorted(n for n, r in rows.items() if not r["killed"]),
    }
    out |= {f"mutant_{name}": row for name, row in rows.items()}
    return out
