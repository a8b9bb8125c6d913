"""``kgc bench workers``: examples per minute with 1 and with 4 workers, side by side.

The same work twice on one embedded broker, one run after the other: the searches a
``kgc check --workers 4`` run makes (``conformance/drivers/workers.py``: the profile's examples
four times, cut into shorter searches with seeds 1, 2, …; profile ``ci``, ``quick`` with
``--quick``), first one after another in this process, then on four worker processes at once. The
workers' process starts and imports count in the second run's wall time. The ratio of the two
rates, measured in one run on one machine, is the number to read; absolute rates move with the
machine's load.

Keys: ``searches`` (how many), ``examples_per_min_1_worker``, ``examples_per_min_4_workers``,
``ratio_4_over_1`` (target >= 2.5), ``wall_s_1_worker``, ``wall_s_4_workers``,
``examples_1_worker``, ``examples_4_workers``, ``divergences_1_worker``,
``divergences_4_workers`` (both must be 0: a faster search that reports false divergences is no
gain).
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.workers import plan, run_tasks

WORKERS = 4


def run(args: Any) -> dict[str, Any]:
    profile = "quick" if args.quick else "ci"
    out: dict[str, Any] = {"profile": profile}
    with (
        open_broker(kafka_version=args.kafka_version) as broker,
        tempfile.TemporaryDirectory(prefix="kgc-bench-workers-") as traces,
    ):
        common = {
            "bootstrap_servers": broker.bootstrap_servers,
            "description": description_of(broker),
            "profile": profile,
            "traces_dir": traces,
        }
        tasks = plan(profile, WORKERS, seed=1)
        out["searches"] = len(tasks)
        for n, label in ((1, "1_worker"), (WORKERS, f"{WORKERS}_workers")):
            print(f"kgc bench workers: {len(tasks)} searches on {n} worker(s)", file=sys.stderr)
            r = run_tasks(tasks, n, **common)
            failed = sum(1 for w in r.workers if w["failure"])
            out[f"examples_{label}"] = r.examples
            out[f"wall_s_{label}"] = round(r.wall_s, 1)
            out[f"examples_per_min_{label}"] = round(r.examples / r.wall_s * 60, 1)
            out[f"divergences_{label}"] = failed
    out["ratio_4_over_1"] = round(
        out[f"examples_per_min_{WORKERS}_workers"] / out["examples_per_min_1_worker"], 2
    )
    return out
