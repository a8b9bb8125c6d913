"""The nemesis without a broker: refusals, bookkeeping, replay schedule, shrinkable rules.

A fake cluster records what was done to it; the real kill/pause/resume/restart are exercised by
the broker-backed scenarios in ``tests/faults``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant, run_state_machine_as_test
from kgc.conformance.faults.nemesis import (
    FaultSchedule,
    FaultsNotSupported,
    InvalidFault,
    Nemesis,
    fault_steps,
    nemesis_rules,
)
from kgc.model.commands import FindCoordinator
from kgc.model.history import Fault, Invoke, Tick


class FakeCluster:
    can_inject_faults = True

    def __init__(self, nodes: int = 3) -> None:
        self.node_ids = list(range(1, nodes + 1))
        self.log: list[tuple[str, int]] = []

    def describe(self) -> dict[str, Any]:
        return {"implementation": "fake", "version": "0"}

    def kill(self, n: int) -> None:
        self.log.append(("kill", n))

    def pause(self, n: int) -> None:
        self.log.append(("pause", n))

    def resume(self, n: int) -> None:
        self.log.append(("resume", n))

    def restart(self, n: int) -> None:
        self.log.append(("restart", n))


class External(FakeCluster):
    can_inject_faults = False


def test_refuses_a_target_kgc_did_not_start() -> None:
    with pytest.raises(FaultsNotSupported, match="kgc did not start it"):
        Nemesis(External())


def test_refuses_impossible_actions_without_doing_anything() -> None:
    cluster = FakeCluster()
    nemesis = Nemesis(cluster)
    for action, node in [("resume", 1), ("pause", 9), ("explode", 1)]:
        with pytest.raises(InvalidFault):
            nemesis.act(action, node)
    nemesis.kill(2)
    with pytest.raises(InvalidFault, match="already dead"):
        nemesis.pause(2)
    with pytest.raises(InvalidFault, match="already dead"):
        nemesis.kill(2)
    assert cluster.log == [("kill", 2)]


def test_faults_are_events_with_clock_and_step() -> None:
    clock = iter([10.0, 20.0])
    steps = iter([4, 7])
    seen: list[Fault] = []
    nemesis = Nemesis(
        FakeCluster(), clock=lambda: next(clock), step=lambda: next(steps), on_fault=seen.append
    )
    a = nemesis.pause(3)
    b = nemesis.resume(3)
    assert (a.step, a.at_ms, a.action, a.node) == (4, 10.0, "pause", 3)
    assert (b.step, b.at_ms, b.action, b.node) == (7, 20.0, "resume", 3)
    assert seen == [a, b] == nemesis.faults


def test_heal_resumes_paused_and_restarts_killed() -> None:
    cluster = FakeCluster()
    with Nemesis(cluster) as nemesis:
        nemesis.pause(1)
        nemesis.kill(3)
    assert cluster.log[-2:] == [("resume", 1), ("restart", 3)]
    assert nemesis.stopped == set()


def test_a_heal_awaits_every_node_not_the_brokers_a_client_last_saw() -> None:
    # the fault suite settles the cluster after each example's heal on the nodes the nemesis
    # knows, not on the client's broker list: a broker restarted by the heal may be missing from
    # KRaft's Metadata while still fenced, and the ISR it rejoins would never equal the rest
    from kgc.conformance.drivers.fault_suite import _whole

    nemesis = Nemesis(FakeCluster())
    nemesis.kill(2)
    assert _whole(nemesis) == {1, 3}
    nemesis.heal()
    assert _whole(nemesis) == {1, 2, 3}


def test_heal_runs_when_the_test_body_fails() -> None:
    cluster = FakeCluster()
    with pytest.raises(RuntimeError), Nemesis(cluster) as nemesis:
        nemesis.pause(2)
        raise RuntimeError("the scenario failed while node 2 was paused")
    assert cluster.log == [("pause", 2), ("resume", 2)]


def test_engine_runner_form_updates_state_but_leaves_recording_to_the_engine() -> None:
    nemesis = Nemesis(FakeCluster())
    nemesis("pause", 1)
    assert nemesis.paused == {1} and nemesis.faults == []


def test_schedule_replays_the_same_faults_at_the_same_steps() -> None:
    recorded = [
        Tick(step=0, at_ms=0.0, ms=5),
        Fault(step=1, at_ms=3.0, action="pause", node=2),
        Invoke(step=3, at_ms=5.0, request_id=0, command=FindCoordinator(client="c1", version=3)),
        Fault(step=5, at_ms=9.0, action="resume", node=2),
        Fault(step=5, at_ms=9.5, action="kill", node=1),
    ]
    schedule = FaultSchedule.of(recorded)
    cluster = FakeCluster()
    nemesis = Nemesis(cluster)
    replayed = [f for step in range(8) for f in schedule.replay(nemesis, step)]
    assert (
        fault_steps(replayed)
        == fault_steps(recorded)
        == [
            (1, "pause", 2),
            (5, "resume", 2),
            (5, "kill", 1),
        ]
    )
    assert cluster.log == [("pause", 2), ("resume", 2), ("kill", 1)]


# --------------------------------------------------------------------- shrinkable Hypothesis rules


class PlantedBug(Exception):
    pass


def test_nemesis_rules_shrink_to_the_single_fault_that_matters() -> None:
    # a fake system that breaks whenever node 3 is paused: whatever sequence Hypothesis finds
    # first, the shrunk counterexample must be that one step
    clusters: list[FakeCluster] = []

    class Machine(nemesis_rules(max_nodes=3, max_stopped=2)):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            cluster = FakeCluster()
            clusters.append(cluster)
            self.nemesis = Nemesis(cluster)

        @invariant()
        def node_three_runs(self) -> None:
            if 3 in self.nemesis.paused:
                raise PlantedBug("node 3 paused")

    with pytest.raises(PlantedBug):
        run_state_machine_as_test(
            Machine,
            settings=settings(
                max_examples=200,
                stateful_step_count=10,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            ),
        )
    last = clusters[-1].log
    assert last[0] == ("pause", 3)
    assert last[1:] in ([], [("resume", 3)])  # the teardown heal may resume it
