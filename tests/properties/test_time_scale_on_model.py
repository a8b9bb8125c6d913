"""A broker at Kafka's default group settings gets the whole search, slower (issue: "Any
Kafka-protocol broker", item 3): ``time_scale_for`` and ``SuiteContext.wait_when_parked``, driven
against the model on a virtual clock (``ModelTarget``), so the ticks cost nothing here. The same
search against real brokers: ``tests/differential/test_time_scale.py`` (this one on the model)."""

from __future__ import annotations

from kgc.engine.registry import build
from kgc.engine.target import ModelTarget
from kgc.model.checker import CheckerConfig
from kgc.properties.machine import (
    SESSION_TIMEOUTS_MS,
    SuiteContext,
    machine_for,
    search,
    time_scale_for,
)

# Kafka's defaults for the two settings that matter (GroupCoordinatorConfig: 6000 and 3000 ms)
DEFAULTS = {
    "profile": "kafka-4.x",
    "config": {"group_min_session_timeout_ms": 6000, "group_initial_rebalance_delay_ms": 3000},
}


def test_the_factor_lifts_the_shortest_session_to_the_broker_minimum() -> None:
    assert time_scale_for({"group.min.session.timeout.ms": 6000}) == 6
    assert time_scale_for({"group.min.session.timeout.ms": 500}) == 1
    assert time_scale_for({"group.min.session.timeout.ms": 1001}) == 2
    assert time_scale_for({}) == 1
    for low in (1, 999, 1000, 1001, 6000, 45000):
        scale = time_scale_for({"group.min.session.timeout.ms": low})
        assert SESSION_TIMEOUTS_MS[0] * scale >= low > SESSION_TIMEOUTS_MS[0] * (scale - 1)


def _run(scale: int, wait: bool) -> tuple[SuiteContext, list[int]]:
    sessions: list[int] = []
    counter = iter(range(10**6))

    def target(gid: str) -> ModelTarget:
        t = ModelTarget(build(DEFAULTS, gid))
        send = t.send

        def spy(request_id, command):  # noqa: ANN001, ANN202
            if command.type == "JoinGroup":
                sessions.append(command.session_timeout_ms)
            return send(request_id, command)

        t.send = spy  # type: ignore[method-assign]
        return t

    ctx = SuiteContext(
        open_target=target,
        new_model=lambda gid: build(DEFAULTS, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
        time_scale=scale,
        wait_when_parked=wait,
    )
    ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
    machine = machine_for(ctx)
    search(machine, examples=30, steps=24, seed=20261125)
    return ctx, sessions


def _joined(ctx: SuiteContext) -> set[str]:
    return {state for state, api, error in ctx.coverage if api == "JoinGroup" and error == "NONE"}


def test_unscaled_every_join_is_refused_at_kafka_defaults() -> None:
    ctx, sessions = _run(scale=1, wait=False)
    assert sessions and max(s for s in sessions if s < 2**31 - 1) <= 2000
    assert not _joined(ctx), "a 1-2 s session was accepted by a 6 s minimum"


def test_scaled_the_search_forms_groups_and_checks_clean_at_kafka_defaults() -> None:
    ctx, sessions = _run(scale=6, wait=True)
    drawn = {s for s in sessions if s not in (1, 2**31 - 1)}  # join_invalid_session's two
    assert drawn <= {6000, 12000}, drawn
    assert {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable"} <= {
        state for state, _, _ in ctx.coverage
    }
    assert _joined(ctx)


def test_waiting_for_a_parked_join_beats_doing_nothing() -> None:
    """Every new group's first join parks for the 3 s initial delay: without the wait most steps
    drawn for a waiting client were lost (seen against 4.3.1 at Kafka's defaults: 61 requests in
    12 examples, against 323 with the suite's settings)."""
    idle, _ = _run(scale=6, wait=False)
    waiting, _ = _run(scale=6, wait=True)
    assert waiting.commands > 1.3 * idle.commands, (waiting.commands, idle.commands)
    assert len(waiting.coverage) > len(idle.coverage), (waiting.coverage, idle.coverage)
