"""Search reach, with no broker: the quality profile's random search finds every broken variant.

The target here is the *unbroken* model (``ModelTarget`` run inside ``broken.real_model()``, so it
answers as Kafka does), while the checker holds it to a broken variant: a divergence means the
random search reached the situation where the variant's rule decides an answer. The broker-backed
``tests/quality/test_broken_models.py`` then shows the same against real Kafka, with shrinking
and replay; this test guards the search's reach cheaply (generation only, no shrinking) so a
change to the machine's rules that loses a variant shows up without a broker.

``pending-join-not-alive`` needs an existing member's rejoin parked past its session while another
member does not rejoin: it was out of reach of a 300-example search before ``form_group``'s
"reconfigure" and the deadline-aimed tick.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from kgc.conformance.drivers.suite import hypothesis_settings
from kgc.engine.broken import VARIANTS, broken, real_model
from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import SuiteContext, machine_for

RECORD = {
    "profile": "kafka-4.x",
    "config": {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0},
}


class _KafkaLike:
    """A ModelTarget whose every call runs with the unbroken model."""

    def __init__(self, group_id: str) -> None:
        with real_model():
            self._inner = ModelTarget(build(RECORD, group_id), latency_ms=2.0)

    def __getattr__(self, name: str):  # noqa: ANN204
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            with real_model():
                return attr(*args, **kwargs)

        return call


def _search(variant: str | None, seed: int, ctx: SuiteContext | None = None) -> SuiteContext:
    """The quality profile's search, generation only, against Kafka's rules while the checker
    holds the target to ``variant`` (None: the unbroken model); ``ctx`` to keep the context
    when the search raises."""
    counter = iter(range(10**6))
    ctx = ctx or SuiteContext(
        open_target=_KafkaLike,
        new_model=lambda gid: build(RECORD, gid),
        checker_config=CheckerConfig(early_ms=20, late_ms=100),
        profile="quality",
    )
    ctx.new_group_id = lambda: f"kgc-reach-{next(counter)}"
    cls = machine_for(ctx)
    cls._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    quality = settings(hypothesis_settings("quality"), phases=[Phase.generate])
    if variant is None:
        run_state_machine_as_test(cls, settings=quality)
    else:
        with broken(variant):
            run_state_machine_as_test(cls, settings=quality)
    return ctx


_ROOT = Path(__file__).resolve().parents[2]
# A search is random: ``pending-join-not-alive`` was reached by 10 of 16 seeded 200-example
# searches before the ``aim`` rule and by 9 of 12 after it (seed 1 among the misses both times);
# since every version is drawn (JoinGroup v0-3 without the handshake, v0 with the session as its
# rebalance timeout) by fewer seeds of 1-3 (oldest first: seeds 4, 5 and 7 of 1-8; the versions
# drawn before put first again, ``model/requests.py`` ``every_version``: still none of 1-3); the
# others by every seed tried. So a variant counts as reached when one of six seeds reaches it.
SEEDS = (1, 2, 3, 4, 5, 6)
_PROBE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from tests.properties.test_search_reach import _search; "
    "from kgc.properties.machine import DivergenceError\n"
    "for seed in SEEDS:\n"
    "    try:\n        _search(sys.argv[2], seed=seed)\n"
    "    except DivergenceError:\n        sys.exit(0)\n"
    "sys.exit(3)"
).replace("SEEDS", repr(SEEDS))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_quality_search_reaches_each_variant(variant):
    """Run in a fresh interpreter, as ``kgc check --seed`` runs: in a long pytest process the same
    seeded search has been seen to draw differently after the Spark pipeline tests ran (the
    cause is not found yet; a fresh process is deterministic)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(_ROOT), variant],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"the search did not reach {variant}:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_unbroken_model_passes_the_same_search(seed):
    """Without a variant the same searches find nothing, on every seed a variant may be found on:
    the divergences above are the bugs."""
    ctx = _search(None, seed=seed)
    assert ctx.examples >= 200
