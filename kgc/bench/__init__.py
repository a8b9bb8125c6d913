"""``kgc bench NAME``: benchmarks print exactly one JSON object on stdout; keys name their unit.

Progress and diagnostics go to stderr. Each benchmark is a function ``run(args) -> dict`` in its
own module of this package, imported only when chosen:

* ``broker.py``   — how fast the embedded Apache Kafka comes up and answers a Heartbeat.
* ``model.py``    — checker + model throughput, classic and KIP-848, with no broker.
* ``check.py``    — how fast the differential suite runs against the embedded broker.
* ``workers.py``  — examples per minute with 1 and with 4 workers, side by side.
* ``mutants.py``  — the default search against each broker mutant: share killed, how fast.
* ``coverage.py`` — the default search's cell coverage over ten seeds, and its wall time.
* ``timing.py``   — how late a broker fires its group timers (the checker's tolerance window).
* ``reorder.py``  — how often a broker handles two clients' requests out of send order.
* ``z3.py``       — the Z3 assignment checks, the balance oracle and the bounded proofs.
* ``pipeline.py`` — re-checking a large synthetic corpus on Spark.
* ``soak.py``     — N seeds per release under load: divergences (0), allowances used, and every
  quality variant caught.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

BENCHMARKS: dict[str, str] = {
    "broker": "kgc.bench.broker:run",
    "model": "kgc.bench.model:run",
    "check": "kgc.bench.check:run",
    "workers": "kgc.bench.workers:run",
    "mutants": "kgc.bench.mutants:run",
    "coverage": "kgc.bench.coverage:run",
    "timing": "kgc.bench.timing:run",
    "reorder": "kgc.bench.reorder:run",
    "z3": "kgc.bench.z3:run",
    "pipeline": "kgc.bench.pipeline:run",
    "soak": "kgc.bench.soak:run",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=sorted(BENCHMARKS), help="which benchmark")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--kafka-version", default=None, help="embedded Kafka version, if used")
    parser.add_argument(
        "--family", default=None, help="mutants: only these families (comma-separated)"
    )
    parser.add_argument("--mutant", default=None, help="mutants: only these (comma-separated)")
    parser.add_argument("--seeds", type=int, default=None, help="soak: seeds per release (20)")
    parser.add_argument(
        "--versions", default=None, help="soak: Kafka releases (default 4.4.0,4.3.1,3.9.2)"
    )


def run(args: argparse.Namespace) -> int:
    module_name, func_name = BENCHMARKS[args.name].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    result = func(args)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0
