"""``kgc bench soak``: no false alarm and no lost catch, measured under load.

For each Kafka release of ``--versions`` (default 4.4.0, 4.3.1, 3.9.2): one embedded broker, two
busy loops beside it (processes that each spin a core: a CI machine running a second job), and the
default search (profile ``ci``; ``quick`` with ``--quick``) with seeds 1 to ``--seeds`` (default
20), one after another. Then, on the first release only and still under load, each quality variant
(``engine/broken.py`` ``VARIANTS``: a rule of the model broken on purpose) is searched once with
seed 1: each must come back as a divergence (not "flaky", not a pass), minimised to a 1-minimal
trace (``conformance/drivers/minimize.py``).

Keys (counts unless named otherwise):

* ``searches``, ``examples``, ``passed`` (examples that passed), ``divergences`` (searches that
  failed: must be 0), and ``divergences_<version>`` per release;
* ``allowances_<name>``: passing examples that passed *only* through that allowance
  (``engine/allowances.py``: with it switched off alone, the history diverges);
* ``variants``, ``variants_caught`` (must equal ``variants``), ``variants_1_minimal``, and
  ``variants_missed``: the names of those not caught, with what the search said;
* ``busy_loops``, ``wall_s``.

There are no resends to count: the engine sends each request once and takes its answer, whatever
it is (``engine/loop.py``); the tests' own resends were removed (dc184c9).
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.suite import run_suite
from kgc.engine.allowances import ALLOWANCES
from kgc.engine.broken import VARIANTS, broken
from kgc.engine.traces import load

VERSIONS = ("4.4.0", "4.3.1", "3.9.2")
BUSY_LOOPS = 2


def _spin(stop: Any) -> None:
    while not stop.is_set():
        sum(range(10_000))


@contextmanager
def busy(n: int) -> Any:
    """``n`` processes spinning a core each for the block."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    loops = [context.Process(target=_spin, args=(stop,), daemon=True) for _ in range(n)]
    for p in loops:
        p.start()
    try:
        yield
    finally:
        stop.set()
        for p in loops:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def _say(text: str) -> None:
    print(f"kgc bench soak: {text}", file=sys.stderr, flush=True)


def run(args: Any) -> dict[str, Any]:
    versions = tuple(v.strip() for v in (args.versions or ",".join(VERSIONS)).split(",") if v)
    seeds = int(args.seeds or (3 if args.quick else 20))
    profile = "quick" if args.quick else "ci"
    out: dict[str, Any] = {"profile": profile, "busy_loops": BUSY_LOOPS, "versions": versions}
    out.update(searches=0, examples=0, passed=0, divergences=0)
    allowances = dict.fromkeys(ALLOWANCES, 0)
    failures: list[str] = []
    start = time.monotonic()
    for i, version in enumerate(versions):
        with (
            open_broker(kafka_version=version) as broker,
            tempfile.TemporaryDirectory(prefix="kgc-bench-soak-") as traces,
            busy(BUSY_LOOPS),
        ):
            common = {
                "bootstrap_servers": broker.bootstrap_servers,
                "description": description_of(broker),
                "traces_dir": traces,
            }
            failed = 0
            for seed in range(1, seeds + 1):
                r = run_suite(profile=profile, seed=seed, **common)
                out["searches"] += 1
                out["examples"] += r.examples
                out["passed"] += r.passed
                for name, n in r.allowances.items():
                    allowances[name] = allowances.get(name, 0) + n
                if not r.ok:
                    failed += 1
                    failures.append(f"{version} seed {seed}: {r.failure}: {r.message[:300]}")
                _say(f"{version} seed {seed}: {r.examples} examples, {r.failure or 'pass'}")
            out[f"divergences_{version}"] = failed
            out["divergences"] += failed
            if i == 0:
                out.update(_variants(common, profile="quality"))
    for name, n in allowances.items():
        out[f"allowances_{name.replace(' ', '_')}"] = n
    out["failures"] = failures
    out["wall_s"] = round(time.monotonic() - start, 1)
    return out


def _variants(common: dict[str, Any], *, profile: str) -> dict[str, Any]:
    caught = minimal = 0
    missed: list[str] = []
    for name in VARIANTS:
        with broken(name):
            r = run_suite(
                profile=profile, seed=1, shrink_budget_s=30, minimize_budget_s=60, **common
            )
        if r.failure == "divergence" and r.saved:
            caught += 1
            manifest = load(r.saved[0]).manifest
            minimal += manifest.get("minimal") == "1-minimal"
            _say(f"variant {name}: caught ({manifest.get('minimal')})")
        else:
            missed.append(f"{name}: {r.failure or 'pass'}")
            _say(f"variant {name}: missed ({r.failure or 'pass'})")
    return {
        "variants": len(VARIANTS),
        "variants_caught": caught,
        "variants_1_minimal": minimal,
        "variants_missed": missed,
    }
