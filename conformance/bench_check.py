"""``kgc bench check``: how fast the differential suite runs against the embedded broker.

Keys:

* ``requests_per_s`` — requests sent and checked per second of wall time *not* spent in ticks
  (ticks are time the suite lets pass on purpose), over one ci-profile run; target >= 200.
* ``ci_profile_wall_s`` — wall time of that run (target <= 180).
* ``shrink_s_<variant>`` — time to find and shrink each deliberately broken model variant
  (``kgc.properties.broken``), and ``trace_commands_<variant>`` the length of the saved trace.
  ``--quick`` skips the variants.
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Any

from kgc.conformance.session import description_of, open_broker
from kgc.conformance.suite import run_suite
from kgc.properties.broken import VARIANTS, broken
from kgc.properties.traces import load


def run(args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with (
        open_broker(kafka_version=getattr(args, "kafka_version", None)) as broker,
        tempfile.TemporaryDirectory() as tmp,
    ):
        description = description_of(broker)
        out["kafka_version"] = description.get("version")
        print("bench check: ci profile…", file=sys.stderr)
        r = run_suite(
            bootstrap_servers=broker.bootstrap_servers,
            description=description,
            profile="ci",
            seed=20261121,
            traces_dir=tmp,
        )
        busy = max(r.wall_s - r.tick_ms / 1000.0, 1e-9)
        out.update(
            ci_profile_wall_s=round(r.wall_s, 1),
            ci_profile_examples=r.examples,
            ci_profile_requests=r.commands,
            ci_profile_divergences=0 if r.ok else 1,
            requests_per_s=round(r.commands / busy, 1),
            tick_s=round(r.tick_ms / 1000.0, 1),
        )
        if not getattr(args, "quick", False):
            for name in VARIANTS:
                print(f"bench check: variant {name}…", file=sys.stderr)
                t0 = time.monotonic()
                with broken(name):
                    v = run_suite(
                        bootstrap_servers=broker.bootstrap_servers,
                        description=description,
                        profile="quality",
                        seed=1,
                        traces_dir=tmp,
                    )
                key = name.replace("-", "_")
                out[f"shrink_s_{key}"] = round(time.monotonic() - t0, 1)
                out[f"caught_{key}"] = v.failure
                out[f"trace_commands_{key}"] = len(load(v.saved[0]).commands) if v.saved else None
    return out
