"""``kgc bench coverage``: the default search's cell coverage over ten seeds, and its wall time.

One embedded broker (``--kafka-version``, else the default); ``kgc check``'s default search
(profile ``ci``) with seeds 1-10 (``--quick``: 1-3), one after the other; coverage is of the cells
the universe counts for that broker (``engine/coverage.py`` ``summarise`` with the target).

Keys: ``seeds``, ``coverage_percent_median`` / ``_min`` / ``_max``, ``coverage_percent_by_seed``,
``union_percent`` (the seeds' cells together), ``cells``, ``wall_s_median`` / ``wall_s_max``
(each search, shrinking included), ``divergences`` (runs that failed: must be 0). The same for the
request × version × field class input cells (``engine/coverage.py`` ``summarise_inputs``):
``input_coverage_percent_median`` / ``_min`` / ``_max``, ``input_coverage_percent_by_seed``,
``input_union_percent``, ``input_cells``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.suite import CLASSIC, BrokerAccess, Output, Search, run_workload
from kgc.engine.coverage import summarise, summarise_inputs


def run(args: Any) -> dict[str, Any]:
    seeds = range(1, 4 if args.quick else 11)
    percents: dict[int, float] = {}
    walls: list[float] = []
    failed = 0
    union: dict[tuple[str, str, str], int] = {}
    input_percents: dict[int, float] = {}
    input_union: dict[tuple[str, int, str], int] = {}
    target: dict[str, Any] = {}
    with (
        open_broker(kafka_version=args.kafka_version) as broker,
        tempfile.TemporaryDirectory(prefix="kgc-bench-coverage-") as traces,
    ):
        access = BrokerAccess(
            bootstrap_servers=broker.bootstrap_servers, description=description_of(broker)
        )
        for seed in seeds:
            r = run_workload(
                CLASSIC,
                access,
                search=Search(profile="ci", seed=seed),
                output=Output(traces_dir=traces),
            )
            target = r.target
            cov = summarise(r.coverage, target=r.target)
            percents[seed] = round(cov["percent"], 1)
            walls.append(r.wall_s)
            failed += 0 if r.ok else 1
            for cell, n in r.coverage.items():
                union[cell] = union.get(cell, 0) + n
            inputs = summarise_inputs(r.input_coverage, target=r.target)
            input_percents[seed] = round(inputs["percent"], 1)
            for input_cell, n in r.input_coverage.items():
                input_union[input_cell] = input_union.get(input_cell, 0) + n
            print(
                f"kgc bench coverage: seed {seed}: {percents[seed]} % "
                f"(inputs {input_percents[seed]} %)",
                file=sys.stderr,
            )
    values = list(percents.values())
    together = summarise(union, target=target)
    input_values = list(input_percents.values())
    inputs_together = summarise_inputs(input_union, target=target)
    return {
        "seeds": len(values),
        "cells": together["cells"],
        "coverage_percent_median": statistics.median(values),
        "coverage_percent_min": min(values),
        "coverage_percent_max": max(values),
        "coverage_percent_by_seed": percents,
        "union_percent": round(together["percent"], 1),
        "wall_s_median": round(statistics.median(walls), 1),
        "wall_s_max": round(max(walls), 1),
        "divergences": failed,
        "input_cells": inputs_together["cells"],
        "input_coverage_percent_median": statistics.median(input_values),
        "input_coverage_percent_min": min(input_values),
        "input_coverage_percent_max": max(input_values),
        "input_coverage_percent_by_seed": input_percents,
        "input_union_percent": round(inputs_together["percent"], 1),
    }
