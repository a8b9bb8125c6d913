"""Group coordinator failover, live: kill (then, separately, pause) the broker coordinating a Stable
group in the middle of a run, on KRaft (Kafka 4.x) and ZooKeeper (Kafka 3.9) clusters; the members
rediscover the coordinator, and everything they saw is checked against
:class:`kgc.model.failover.FailoverModel`.

The history (requests, answers, the nemesis action) is folded by the same checker the differential
engine uses. A deliberately broken model that forgets the persisted generation on load is folded
over the *same* history and must diverge — the real broker's answers catch it.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.failover_driver import VERSIONS, GroupDriver
from kgc.conformance.nemesis import fault_steps
from kgc.engine import traces
from kgc.engine.registry import failover_manifest
from kgc.model import commands as m
from kgc.model.checker import CheckerConfig, check
from kgc.model.failover import (
    FailoverModel,
    FailoverRules,
    GroupRecord,
    LoadedGroup,
)

pytestmark = [pytest.mark.broker, pytest.mark.faults]

CHECKER = CheckerConfig(late_ms=1000.0, early_ms=100.0)


class ForgetsGeneration(FailoverRules):
    """Deliberately broken: the new coordinator forgets the persisted generation and members."""

    def load(self, record: GroupRecord, at_ms: float) -> LoadedGroup:
        return super().load(GroupRecord(generation_id=0), at_ms)


def heartbeat(client: str, member: str, generation: int) -> m.Heartbeat:
    return m.Heartbeat(
        client=client, member_id=member, generation_id=generation, version=VERSIONS["Heartbeat"]
    )


def commit(client: str, member: str, generation: int, topic: str, offset: int) -> m.OffsetCommit:
    return m.OffsetCommit(
        client=client,
        member_id=member,
        generation_id=generation,
        offsets=(m.TopicPartitionOffset(topic=topic, partition=0, offset=offset),),
        version=VERSIONS["OffsetCommit"],
    )


def fetch(client: str, topic: str) -> m.OffsetFetch:
    return m.OffsetFetch(
        client=client,
        partitions=(m.TopicPartition(topic=topic, partition=0),),
        version=VERSIONS["OffsetFetch"],
    )


def run_failover(
    cluster: Any, nemesis: Any, group_id: str, topic: str, action: str, say: Any
) -> tuple[list[Any], Any, dict[str, Any]]:
    """The scenario; returns the recorded history, the member-id map it used and the manifest's
    model record (a FailoverModel starting from the formed group)."""
    driver = GroupDriver(cluster.bootstrap_servers, group_id, nemesis=nemesis, log=say)
    try:
        driver.create_topic(topic, partitions=1, replication_factor=3)
        record = driver.form_group(["c1", "c2"])
        gen = record.generation_id
        coordinator = driver.coordinator_of("c1")
        assert coordinator is not None
        members = dict(driver.member_ids)
        say(f"group {group_id}: generation {gen} on node {coordinator}, leader {record.leader}")

        driver.recording = True
        start_ms = driver.now_ms()
        assert driver.call(commit("c1", members["c1"], gen, topic, 5)) == m.OffsetCommitResponse(
            partitions=(m.PartitionError(topic=topic, partition=0, error="NONE"),)
        )
        driver.call(heartbeat("c2", members["c2"], gen))

        driver.fault(action, coordinator)

        after: dict[str, m.Response] = {}
        for c in ("c1", "c2"):
            after[c] = driver.until_answered(lambda c=c: heartbeat(c, members[c], gen))
        new_coordinator = driver.coordinator_of("c1")
        driver.until_answered(lambda: commit("c1", members["c1"], gen, topic, 9))
        offsets = driver.until_answered(lambda: fetch("c2", topic))
        stale = driver.until_answered(lambda: heartbeat("c2", members["c2"], gen - 1))
        described = driver.until_answered(lambda: m.DescribeGroups(client="c1", version=5))

        if action == "pause":
            driver.fault("resume", coordinator)
            # a member still talking to the old coordinator after it resumed
            driver.call(heartbeat("c1", members["c1"], gen), node=coordinator)
        else:
            driver.fault("restart", coordinator)
        driver.until_answered(lambda: heartbeat("c1", members["c1"], gen))
        events = list(driver.events)
    finally:
        driver.close()

    say(f"coordinator {coordinator} -> {new_coordinator}; {len(events)} events")
    assert new_coordinator != coordinator
    # what Kafka's rules say survives the failover (read straight off the broker's answers)
    assert after == {
        "c1": m.HeartbeatResponse(error="NONE"),
        "c2": m.HeartbeatResponse(error="NONE"),
    }
    assert stale == m.HeartbeatResponse(error="ILLEGAL_GENERATION")
    assert isinstance(offsets, m.OffsetFetchResponse)
    assert [(p.offset, p.error) for p in offsets.partitions] == [(9, "NONE")]
    assert isinstance(described, m.DescribeGroupsResponse)
    assert described.group_state == "Stable"
    assert [(x.member_id, x.assignment) for x in described.members] == [
        (p.member_id, p.assignment) for p in record.members
    ]

    def model(rules: FailoverRules | None = None) -> FailoverModel:
        return FailoverModel(
            record=record,
            coordinator=coordinator,
            nodes=cluster.node_ids,
            offsets=(),
            started_at_ms=start_ms,
            rules=rules,
        )

    divergence = check(model(), events, CHECKER)
    assert divergence is None, f"{divergence.reason}\nallowed: {divergence.allowed}"
    broken = check(model(ForgetsGeneration()), events, CHECKER)
    assert broken is not None, "a model that forgets the generation explained the broker"
    say(f"broken model diverged at event {broken.index}: {broken.reason}")
    model_record = failover_manifest(
        record=record, coordinator=coordinator, nodes=cluster.node_ids, started_at_ms=start_ms
    )
    return events, driver.ids, model_record


@pytest.mark.parametrize("action", ["kill", "pause"])
@pytest.mark.parametrize("mode", ["kraft", "zookeeper"])
def test_coordinator_failover_keeps_generation_members_and_offsets(
    request: pytest.FixtureRequest,
    mode: str,
    action: str,
    kgc_group_id: str,
    kgc_topic: str,
    say: Any,
) -> None:
    # KRaft: Kafka 4.x's group coordinator (group-coordinator module); ZooKeeper: Kafka 3.9's
    # Scala GroupCoordinator. The same rules hold for both.
    cluster = request.getfixturevalue("kraft3" if mode == "kraft" else "zk3")
    nemesis = request.getfixturevalue("kraft_nemesis" if mode == "kraft" else "zk_nemesis")
    run_failover(cluster, nemesis, kgc_group_id, kgc_topic, action, say)


def test_failover_trace_replays_with_the_same_faults_at_the_same_steps(
    kraft3: Any,
    kraft_nemesis: Any,
    kgc_group_id: str,
    kgc_topic: str,
    say: Any,
    tmp_path: Path,
) -> None:
    events, ids, model_record = run_failover(
        kraft3, kraft_nemesis, kgc_group_id, kgc_topic, "pause", say
    )
    manifest = traces.new_manifest(
        target=kraft3.describe(),
        group_id=kgc_group_id,
        seed=None,
        profile="faults",
        scenario="coordinator-failover-pause",
        model=model_record,
        checker=dataclasses.asdict(CHECKER),
    )
    saved = traces.save(traces.Trace(manifest=manifest, events=events), tmp_path / "failover.json")
    loaded = traces.load(saved)
    recorded = fault_steps(loaded.events)
    assert recorded == fault_steps(events)
    assert [a for _, a, _ in recorded] == ["pause", "resume"]
    # the saved trace re-checks with no broker, through the FailoverModel its manifest rebuilds
    analyzed = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "analyze", str(saved)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert analyzed.returncode == 0 and "PASS" in analyzed.stdout, analyzed.stdout + analyzed.stderr
    # replay on the same group with the same members (the recording's id map)
    driver = GroupDriver(
        kraft3.bootstrap_servers, kgc_group_id, nemesis=kraft_nemesis, ids=ids, log=say
    )
    try:
        replayed = driver.replay(loaded.events)
    finally:
        driver.close()
    say(f"recorded faults {recorded}; replayed {fault_steps(replayed)}")
    assert fault_steps(replayed) == recorded
