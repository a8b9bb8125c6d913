"""Each broken share-group variant (``kgc.engine.broken.SHARE_VARIANTS``) is told apart from the
real model by the share machine, with no broker: the target answers as the unbroken model
(``real_model()``, its initializations completing at random moments) while the checker holds it
to the variant. The broker half — the variants caught against Apache Kafka, shrunk and replayed —
is ``tests/quality/test_broken_share_models.py``."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from kgc.engine.broken import SHARE_VARIANTS, broken, real_model
from kgc.engine.registry import build_share
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import DivergenceError, SuiteContext
from kgc.properties.share_machine import share_machine_for

RECORD = {
    "name": "ShareGroupModel",
    "config": {
        "topics": [["kgc-suite", 3]],
        "session_timeout_ms": 2000,
        "max_size": 3,
        "initialization_ms": 2000,
    },
}


class RealModelTarget(ModelTarget):
    def send(self, request_id: int, command: Any) -> None:
        with real_model():
            super().send(request_id, command)

    def poll(self, timeout_ms: float) -> list[Any]:
        with real_model():
            return super().poll(timeout_ms)


@pytest.mark.parametrize("variant", sorted(SHARE_VARIANTS))
def test_share_variant_is_caught_on_the_model(variant: str) -> None:
    counter = iter(range(10**6))
    ctx = SuiteContext(
        # each example's target draws its own choices the same way, so a failing example
        # fails again when Hypothesis runs it once more
        open_target=lambda gid: RealModelTarget(
            build_share(RECORD, gid), choose=random.Random(1).choice
        ),
        new_model=lambda gid: build_share(RECORD, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
    )
    ctx.new_group_id = lambda: f"kgc-q-{next(counter)}"
    with broken(variant), pytest.raises(DivergenceError):
        run_state_machine_as_test(
            share_machine_for(ctx),
            settings=settings(
                max_examples=300,
                stateful_step_count=30,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                derandomize=True,  # the same draws every run: a variant caught once is always
                report_multiple_bugs=False,  # one divergence is all this asks
                # told apart is all this asks (the broker half shrinks and replays): no shrinking
                phases=(Phase.explicit, Phase.reuse, Phase.generate),
            ),
        )
