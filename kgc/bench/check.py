"""``kgc bench check``: how fast the differential suite runs against the embedded broker.

Two ci-profile runs on one broker, same seed, one after the other (after a short warm-up run, so
the broker's JIT does not favour the second): the engine as it was — every step listened a fixed
20 ms for late answers and every example opened new connections — and as it is now (a step ends
once the answers every model state expects are in; it waits before a send only while another
client's request is unanswered and younger than ``settle_ms``; idle connections are reused). On a
noisy shared machine the ratio of the two, measured side by side, says more than either number.

Keys:

* ``requests_per_s`` — requests sent and checked per second of wall time *not* spent in ticks
  (ticks are time the suite lets pass on purpose), over one ci-profile run; target >= 200.
  ``requests_per_s_grace20``: the same with the old engine settings (``quiet_ms=20``, no
  connection reuse); ``requests_per_s_ratio`` = new / old.
* ``ci_profile_wall_s`` — wall time of that run (target <= 180); ``…_grace20`` the old one.
* ``ci_profile_examples``, ``ci_profile_requests``, ``ci_profile_divergences`` (and ``…_grace20``).
* ``tick_s`` — time spent in ticks (nominal), excluded from ``requests_per_s``.
* ``shrink_s_<variant>`` — time to find and shrink each deliberately broken model variant
  (``kgc.engine.broken``), and ``trace_commands_<variant>`` the length of the saved trace.
  ``--quick`` skips the variants.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.suite import CLASSIC, BrokerAccess, Output, Search, run_workload
from kgc.engine.broken import VARIANTS, broken
from kgc.engine.loop import EngineConfig
from kgc.engine.traces import load

SEED = 20261121
# the engine before it stopped listening a fixed 20 ms after every step
GRACE20 = EngineConfig(grace_ms=20.0, quiet_ms=20.0, final_ms=0.0)


def _ci(broker: Any, description: dict[str, Any], tmp: str, *, old: bool) -> dict[str, Any]:
    suffix = "_grace20" if old else ""
    print(f"bench check: ci profile{' (old settings)' if old else ''}…", file=sys.stderr)
    r = run_workload(
        CLASSIC,
        BrokerAccess(
            bootstrap_servers=broker.bootstrap_servers,
            description=description,
            reuse_connections=not old,
        ),
        search=Search(profile="ci", seed=SEED, engine_config=GRACE20 if old else EngineConfig()),
        output=Output(traces_dir=tmp),
    )
    busy = max(r.wall_s - r.tick_ms / 1000.0, 1e-9)
    out = {
        f"ci_profile_wall_s{suffix}": round(r.wall_s, 1),
        f"ci_profile_examples{suffix}": r.examples,
        f"ci_profile_requests{suffix}": r.commands,
        f"ci_profile_divergences{suffix}": 0 if r.ok else 1,
        f"requests_per_s{suffix}": round(r.commands / busy, 1),
        f"tick_s{suffix}": round(r.tick_ms / 1000.0, 1),
    }
    return out


def run(args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with (
        open_broker(kafka_version=getattr(args, "kafka_version", None)) as broker,
        tempfile.TemporaryDirectory() as tmp,
    ):
        description = description_of(broker)
        out["kafka_version"] = description.get("version")
        print("bench check: warm-up (quick profile)…", file=sys.stderr)
        access = BrokerAccess(bootstrap_servers=broker.bootstrap_servers, description=description)
        run_workload(
            CLASSIC,
            access,
            search=Search(profile="quick", seed=SEED),
            output=Output(traces_dir=tmp),
        )
        load_before = os.getloadavg()[0]
        out.update(_ci(broker, description, tmp, old=True))
        out.update(_ci(broker, description, tmp, old=False))
        out["load_avg_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        out["requests_per_s_ratio"] = round(
            out["requests_per_s"] / max(out["requests_per_s_grace20"], 1e-9), 2
        )
        if not getattr(args, "quick", False):
            for name in VARIANTS:
                print(f"bench check: variant {name}…", file=sys.stderr)
                t0 = time.monotonic()
                with broken(name):
                    v = run_workload(
                        CLASSIC,
                        access,
                        search=Search(profile="quality", seed=1),
                        output=Output(traces_dir=tmp),
                    )
                key = name.replace("-", "_")
                out[f"shrink_s_{key}"] = round(time.monotonic() - t0, 1)
                out[f"caught_{key}"] = v.failure
                out[f"trace_commands_{key}"] = len(load(v.saved[0]).commands) if v.saved else None
    return out
