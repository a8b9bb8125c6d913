"""Each broken online-migration variant (``kgc.engine.broken.MIGRATION_VARIANTS``) is told apart
from the real model by the migration machine, with no broker: the target answers as the unbroken
model (``real_model()``) while the checker holds it to the variant. The broker half — the variants
caught against Apache Kafka, shrunk and replayed — is
``tests/quality/test_broken_migration_models.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from kgc.engine.broken import MIGRATION_VARIANTS, broken, real_model
from kgc.engine.registry import build_migration
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import DivergenceError, SuiteContext
from kgc.properties.migration_machine import migration_machine_for

RECORD = {
    "name": "MigratingGroupModel",
    "profile": "kafka-4.3",
    "classic": {"group_min_session_timeout_ms": 500, "group_initial_rebalance_delay_ms": 0},
    "consumer": {"topics": [["kgc-suite", 3]], "session_timeout_ms": 2000},
    "migration_policy": "bidirectional",
}


class RealModelTarget(ModelTarget):
    def send(self, request_id: int, command: Any) -> None:
        with real_model():
            super().send(request_id, command)

    def poll(self, timeout_ms: float) -> list[Any]:
        with real_model():
            return super().poll(timeout_ms)


@pytest.mark.parametrize("variant", sorted(MIGRATION_VARIANTS))
def test_variant_is_caught_on_the_model(variant: str) -> None:
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: RealModelTarget(build_migration(RECORD, gid)),
        new_model=lambda gid: build_migration(RECORD, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        scenario="migration",
    )
    ctx.new_group_id = lambda: f"kgc-q-{next(counter)}"
    with broken(variant), pytest.raises(DivergenceError):
        run_state_machine_as_test(
            migration_machine_for(ctx),
            settings=settings(
                max_examples=300,
                stateful_step_count=30,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            ),
        )
