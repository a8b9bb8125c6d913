"""A new group is read at the last committed offset (``model/classic/describe.py`` rule 3), live.

Kafka 4.x answers a JoinGroup that creates a classic group without waiting for the empty group
record it appends, while DescribeGroups reads at the last committed offset of the group's
``__consumer_offsets`` partition. With a follower of that partition paused, nothing the
coordinator writes is committed until the follower leaves the ISR (fenced after
``broker.session.timeout.ms``), so the window that is a few milliseconds on a quiet cluster lasts
seconds: c1 joins and is answered generation 1 at once, and a DescribeGroups says the group does
not exist. c1's Heartbeat is a write operation whose answer waits for every write before it, so
once it is answered the group is described. The model explains all of it; a model without the
rule (the 3.9 switch, which creates the group in memory only) does not. On a line whose
coordinator creates the group in memory only (``KGC_FAULTS_KRAFT_VERSION=3.9.2``) the group is
described at once, as its profile says.

A write waits at most ``offsets.commit.timeout.ms`` (Kafka's 5 s) for its commit. A loaded CI
machine once fenced the follower later than that: the heartbeat was answered
``COORDINATOR_NOT_AVAILABLE`` at 5.1 s (``model/classic/cluster_group.py`` rule 7). The test then
sends it again, up to three times, until one is answered once the creation is committed.

Seen first without any fault, on a loaded machine: a DescribeGroups 18 ms after a join answered
generation 1 was told ``GROUP_ID_NOT_FOUND``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from kgc.conformance.drivers.fault_suite import FailoverBrokerTarget, settle
from kgc.engine.loop import FaultStep
from kgc.engine.registry import build_cluster
from kgc.model import commands as m
from kgc.model.checker import check
from kgc.model.classic.cluster_group import ClusterGroupModel

from tests.faults.test_coordinator_failover import SESSION_MS, VI, answer, explained, scenario

pytestmark = [pytest.mark.broker, pytest.mark.faults]

# a write's answer when its commit did not come within offsets.commit.timeout.ms (rule 7)
TIMED_OUT = "COORDINATOR_NOT_AVAILABLE"


def wait_for(machine: Any, client: str, deadline_s: float) -> m.Response | None:
    """Tick (100 ms) until ``client``'s latest request is answered, at most ``deadline_s``."""
    end = time.monotonic() + deadline_s
    while machine.target.in_flight(client) and time.monotonic() < end:
        machine.tick(100)
    return answer(machine, client)


def paused_then_joined(machine: Any, nemesis: Any, *, followers: int) -> tuple[int, list[int], str]:
    """Pause ``followers`` of the nodes that do not coordinate the group (lowest ids first), as
    events of the history, with no wait for the ISR to shrink; then c1 joins and is answered
    generation 1 at once. Returns (coordinator, the paused nodes, c1)."""
    target = machine.target
    assert isinstance(target, FailoverBrokerTarget)
    coordinator = target.coordinator_id
    paused = sorted(n for n in machine.cluster.brokers if n != coordinator)[:followers]
    for node in paused:
        machine.engine.inject(FaultStep(action="pause", node=node), nemesis)
    c1 = machine.first_client(
        session=SESSION_MS, rebalance=SESSION_MS, static=False, protocols=("range",)
    )
    machine.form_group(([c1], VI, False, "stay"))
    joined = wait_for(machine, c1, 10.0)
    assert isinstance(joined, m.JoinGroupResponse) and joined.generation_id == 1, joined
    return coordinator, paused, c1


def test_a_new_group_is_described_only_once_its_creation_is_committed(
    kraft3: Any, kraft_nemesis: Any, kgc_group_id: str, kgc_topic: str, say: Any
) -> None:
    with scenario(kraft3, kraft_nemesis, kgc_group_id, kgc_topic, "uncommitted-group") as machine:
        cluster = machine.cluster
        coordinator, (follower,), c1 = paused_then_joined(machine, kraft_nemesis, followers=1)
        c2 = machine.second_client(
            session=SESSION_MS, rebalance=SESSION_MS, static=False, protocols=("range",)
        )
        machine.describe(c2, VI)
        before = wait_for(machine, c2, 10.0)
        machine.heartbeat(c1, VI, "current")
        beat = wait_for(machine, c1, 60.0)
        for _ in range(3):
            if not (isinstance(beat, m.HeartbeatResponse) and beat.error == TIMED_OUT):
                break
            say(f"heartbeat timed out before the follower was fenced: {beat}")
            machine.heartbeat(c1, VI, "current")
            beat = wait_for(machine, c1, 60.0)
        machine.describe(c2, VI)
        after = wait_for(machine, c2, 10.0)
        machine.engine.inject(
            FaultStep(action="resume", node=follower),
            lambda action, node: (
                kraft_nemesis(action, node),
                settle(cluster, kgc_group_id, machine.partitions, set(), coordinator_hit=True),
            )[1],
        )
        trace = explained(machine)
        say(machine.report())

    say(f"coordinator {coordinator}, follower {follower} paused")
    record = trace.manifest["model"]
    model = build_cluster(record, kgc_group_id)
    assert isinstance(beat, m.HeartbeatResponse) and beat.error == "NONE", beat
    assert isinstance(after, m.DescribeGroupsResponse), after
    assert after.group_state == "CompletingRebalance", after
    assert isinstance(before, m.DescribeGroupsResponse), before
    if not model.config.profile.new_group_writes_empty_record:
        # a line whose coordinator creates the group in memory only (3.9's Scala one, with
        # KGC_FAULTS_KRAFT_VERSION=3.9.2) describes it at once, paused follower or not
        assert before.group_state == "CompletingRebalance", before
        return
    # what the broker said: the group answered generation 1 but was not described, until the
    # heartbeat's answer (held until the write before it was committed) came back
    assert before.group_state == "Dead", before
    # a model that describes what it holds in memory (3.9's switch) cannot explain it
    profile = replace(model.config.profile, new_group_writes_empty_record=False)
    without = ClusterGroupModel(
        replace(model.config, profile=profile), coordinator=record.get("coordinator")
    )
    diverged = check(without, trace.events)
    assert diverged is not None, "a model that reads uncommitted groups explained the broker"
    say(f"without the rule: diverged at event {diverged.index}: {diverged.reason}")


def test_a_write_no_follower_can_commit_is_answered_at_its_timeout(
    kraft3: Any, kraft_nemesis: Any, kgc_group_id: str, kgc_topic: str, say: Any
) -> None:
    """Rule 7 of ``model/classic/cluster_group.py``, made certain: both followers of the group's
    partition are paused, so nothing the coordinator writes can commit (and with two of the three
    controllers paused nobody shrinks the ISR). c1's Heartbeat, a write operation waiting for the
    group's creation record, is answered ``COORDINATOR_NOT_AVAILABLE`` when
    ``offsets.commit.timeout.ms`` (Kafka's 5000 ms) has passed. Once the followers are back, a
    heartbeat is answered ``NONE``. The model explains it; one whose writes never time out does
    not."""
    with scenario(kraft3, kraft_nemesis, kgc_group_id, kgc_topic, "write-timeout") as machine:
        cluster = machine.cluster
        coordinator, followers, c1 = paused_then_joined(machine, kraft_nemesis, followers=2)
        sent = machine.engine.target.now_ms()
        machine.heartbeat(c1, VI, "current")
        beat = wait_for(machine, c1, 30.0)
        held_ms = machine.engine.target.now_ms() - sent
        for i, node in enumerate(followers):
            last = i == len(followers) - 1
            machine.engine.inject(
                FaultStep(action="resume", node=node),
                lambda action, node, last=last: (
                    kraft_nemesis(action, node),
                    settle(cluster, kgc_group_id, machine.partitions, set(), coordinator_hit=True)
                    if last
                    else None,
                )[1],
            )
        machine.heartbeat(c1, VI, "current")
        again = wait_for(machine, c1, 30.0)
        trace = explained(machine)
        say(machine.report())

    say(f"coordinator {coordinator}, followers {followers} paused; heartbeat held {held_ms:.0f} ms")
    record = trace.manifest["model"]
    model = build_cluster(record, kgc_group_id)
    timeout = model.config.offsets_commit_timeout_ms
    assert isinstance(beat, m.HeartbeatResponse) and beat.error == TIMED_OUT, beat
    assert held_ms >= timeout, (held_ms, timeout)
    assert isinstance(again, m.HeartbeatResponse) and again.error == "NONE", again
    # a model whose writes wait for their commit forever cannot explain the answer
    patient = replace(model.config, offsets_commit_timeout_ms=10 * timeout)
    diverged = check(
        ClusterGroupModel(patient, coordinator=record.get("coordinator")), trace.events
    )
    assert diverged is not None, "a model without write timeouts explained the broker"
    say(f"without write timeouts: diverged at event {diverged.index}: {diverged.reason}")
