"""``kgc lines``: the Apache Kafka release lines kgc knows, and the sweep over them.

``kgc lines`` lists every line: its newest patch, the mode kgc runs it in, the model profile that
judges it, or why it cannot run on this machine (``kgc.conformance.artifacts.releases``). ``kgc
lines --sweep`` starts the newest patch of each line that runs (or of those named with ``--only``),
runs the differential suite on it with seeds 1..N, and prints one row per line: line, patch, mode,
seeds, requests, coverage, divergences, examples that stopped at a Kafka bug the model knows by
name (``model/known_bugs.py``: counted, not failures), wall time. Failing cases are saved under
``--traces`` as ``kgc check`` saves them. Exit status 1 if any line diverged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from kgc.cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sweep",
        action="store_true",
        help="run the suite on the newest patch of every line that runs here",
    )
    p.add_argument("--only", default=None, help="comma-separated lines, e.g. 1.0,2.4,3.9,4.4")
    p.add_argument("--seeds", type=int, default=5, help="seeds 1..N per line (default 5)")
    p.add_argument("--profile", default="ci", help="search profile (default ci)")
    p.add_argument("--traces", default="traces", help="where failing traces are saved")
    p.add_argument("--json", action="store_true", help="print the rows as JSON on stdout")


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.artifacts.releases import LINES, SUPPORTED_LINES

    chosen = list(SUPPORTED_LINES)
    if args.only:
        wanted = [x.strip() for x in args.only.split(",") if x.strip()]
        by_name = {x.line: x for x in LINES}
        unknown = [w for w in wanted if w not in by_name]
        if unknown:
            raise UserError(
                f"unknown release line(s) {', '.join(unknown)}; known: "
                f"{', '.join(x.line for x in LINES)}"
            )
        blocked = [by_name[w] for w in wanted if by_name[w].cannot_run]
        if blocked:
            raise UserError(f"Kafka {blocked[0].line}.x cannot run here: {blocked[0].cannot_run}")
        chosen = [by_name[w] for w in wanted]
    if args.seeds < 1:
        raise UserError(f"--seeds must be at least 1, got {args.seeds}")
    if not args.sweep:
        return _list(LINES, as_json=args.json)
    return _sweep(chosen, args)


def _list(lines: Any, *, as_json: bool) -> int:
    from kgc.model import profile_for_version

    rows = []
    for x in lines:
        row: dict[str, Any] = {"line": x.line, "latest": x.latest, "modes": list(x.modes)}
        if x.cannot_run:
            row["cannot_run"] = x.cannot_run
        else:
            row["rules"] = profile_for_version(x.latest).name
        rows.append(row)
    if as_json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    print(f"{'line':<6}{'newest':<10}{'mode':<20}rules / why it cannot run here")
    for r in rows:
        mode = "/".join(r["modes"])
        print(f"{r['line']:<6}{r['latest']:<10}{mode:<20}{r.get('rules') or r['cannot_run']}")
    return 0


def _sweep(lines: Any, args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.session import description_of, open_broker
    from kgc.conformance.drivers.suite import SEARCH_PROFILES, Output, Search, run_seeds
    from kgc.engine.coverage import summarise
    from kgc.model.known_bugs import KNOWN_BUGS

    if args.profile not in SEARCH_PROFILES:
        raise UserError(
            f"unknown profile {args.profile!r}; choose one of {', '.join(SEARCH_PROFILES)}"
        )
    rows: list[dict[str, Any]] = []
    header = (
        f"{'line':<6}{'patch':<9}{'mode':<11}{'seeds':>5}{'requests':>10}"
        f"{'coverage':>10}{'diverged':>10}{'known bug':>11}{'wall s':>8}"
    )
    if not args.json:
        print(header, flush=True)
    total = time.monotonic()
    for line in lines:
        t0 = time.monotonic()
        row: dict[str, Any] = {"line": line.line, "patch": line.latest, "seeds": args.seeds}
        diverged: list[str] = []
        known: dict[str, int] = {}
        with open_broker(kafka_version=line.latest) as broker:
            description = description_of(broker)
            row["mode"] = description.get("mode")
            runs = run_seeds(
                broker,
                description,
                seeds=args.seeds,
                # a line that diverges is reported, not shrunk for long
                search=Search(profile=args.profile, shrink_budget_s=60.0),
                output=Output(traces_dir=args.traces),
            )
        for seed, result in enumerate(runs.results, start=1):
            row["rules"] = result.target.get("model_profile") or row.get("rules")
            if not result.ok:
                saved = ", ".join(str(p) for p in result.saved) or "not saved"
                diverged.append(f"seed {seed}: {result.failure} ({saved})")
            for key, n in result.known_bugs.items():
                known[key] = known.get(key, 0) + n
        reached, unsupported, requests = runs.reached, runs.unsupported, runs.requests
        last = runs.results[-1].target if runs.results else None
        cov = summarise(reached, unsupported, target=last)
        row |= {
            "requests": requests,
            "coverage_percent": round(cov["percent"], 1),
            "cells": f"{cov['reached']}/{cov['cells']}",
            "divergences": diverged,
            "known_bugs": known,
            "wall_s": round(time.monotonic() - t0, 1),
        }
        rows.append(row)
        if not args.json:
            print(
                f"{row['line']:<6}{row['patch']:<9}{row['mode']!s:<11}{row['seeds']:>5}"
                f"{row['requests']:>10}{row['coverage_percent']:>9.1f}%"
                f"{len(diverged):>10}{sum(known.values()):>11}{row['wall_s']:>8.0f}",
                flush=True,
            )
            for d in diverged:
                print(f"      {d}", flush=True)
            for key, n in sorted(known.items()):
                bug = KNOWN_BUGS[key]
                print(
                    f"      {n} example(s) stopped at the known Kafka bug {key} "
                    f"(Kafka {bug.releases}, proof: {bug.proof})",
                    flush=True,
                )
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        print(f"sweep took {time.monotonic() - total:.0f} s", flush=True)
    return 1 if any(r["divergences"] for r in rows) else 0
