"""``kgc bench NAME``: benchmarks print exactly one JSON object on stdout; keys name their unit.

Progress and diagnostics go to stderr. Each benchmark is a function ``run(args) -> dict`` in its
own module, imported only when chosen.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

BENCHMARKS: dict[str, str] = {
    "broker": "kgc.conformance.bench_broker:run",
    "model": "kgc.bench_model:run",
    "check": "kgc.conformance.bench_check:run",
    "workers": "kgc.conformance.bench_workers:run",
    "mutants": "kgc.conformance.bench_mutants:run",
    "coverage": "kgc.conformance.bench_coverage:run",
    "timing": "kgc.conformance.timing:run",
    "reorder": "kgc.conformance.reorder:run",
    "z3": "kgc.properties.bench_z3:run",
    "pipeline": "kgc.pipeline.bench_pipeline:run",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=sorted(BENCHMARKS), help="which benchmark")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--kafka-version", default=None, help="embedded Kafka version, if used")


def run(args: argparse.Namespace) -> int:
    module_name, func_name = BENCHMARKS[args.name].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    result = func(args)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0
