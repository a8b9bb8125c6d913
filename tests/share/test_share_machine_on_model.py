"""The share machine, engine and checker driven against the share-group model itself (no broker),
as ``tests/consumer/test_consumer_machine_on_model.py`` does for the consumer machine: every
history the model produces must check clean, the machine's own invariants (epochs never
backwards, settled targets keeping the ``simple`` assignor's promises) must hold on the model's
answers, and the search must reach the share cells. The broker half is
``tests/differential/test_share_differential.py``."""

from __future__ import annotations

import random
from typing import Any

from kgc.engine.coverage import share_universe
from kgc.engine.registry import build_share
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import SuiteContext, search
from kgc.properties.share_machine import share_machine_for

RECORD = {
    "name": "ShareGroupModel",
    "config": {
        "topics": [["kgc-suite", 3]],
        "session_timeout_ms": 2000,
        "heartbeat_interval_ms": 500,
        "max_size": 3,
        "assignment_interval_ms": 0,
    },
}


def _run(
    chooser_seed: int | None,
    examples: int,
    seed: int | None = None,
    record: dict[str, Any] = RECORD,
) -> SuiteContext:
    rng = random.Random(chooser_seed)
    choose = None if chooser_seed is None else (lambda options: rng.choice(options))
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=lambda gid: ModelTarget(build_share(record, gid), choose=choose),
        new_model=lambda gid: build_share(record, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        scenario="share",
    )
    ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
    search(share_machine_for(ctx), examples=examples, steps=30, seed=seed)
    return ctx


def test_share_histories_check_clean_first_choices() -> None:
    ctx = _run(None, 30, seed=1)
    assert ctx.commands > 150


def test_share_histories_check_clean_random_choices() -> None:
    # random choices: initializations complete at random moments, so members are given
    # partitions and the settled targets are checked
    ctx = _run(7, 40, seed=7)
    assert ctx.commands > 200
    assert ctx.assignment_checks > 0
    reached = {cell for cell, n in ctx.coverage.items() if n}
    universe = set(share_universe())
    assert reached <= universe | {c for c in reached if c[1] not in {r for _, r, _ in universe}}
    assert len(reached & universe) >= 0.6 * len(universe), sorted(universe - reached)


def test_share_histories_of_the_4_2_line_check_clean() -> None:
    # the 4.2 line's switches (``profiles.share_line_rules``: a new group at epoch 0, the extra
    # bump after a leave) keep the machine's own invariants on the model's answers
    ctx = _run(7, 40, seed=7, record={**RECORD, "profile": "kafka-4.2"})
    assert ctx.commands > 200
    assert ctx.assignment_checks > 0
