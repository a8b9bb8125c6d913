"""Group coordinator failover, live: kill (then, separately, pause) the broker coordinating a Stable
group in the middle of a run, on KRaft (Kafka 4.x) and ZooKeeper (Kafka 3.9) clusters; the members
rediscover the coordinator, and everything they saw is checked against
:class:`~kgc.model.classic.cluster_group.ClusterGroupModel`.

The scenario runs on the fault suite's own machinery, driven rule by rule instead of drawn:
a :class:`~kgc.conformance.drivers.fault_suite.FaultGroupMachine` (the engine, a
:class:`~kgc.conformance.drivers.fault_suite.FailoverBrokerTarget`, the nemesis with the settle
wait after each fault, the model folding every event as it is recorded). ``form_group`` forms a
Stable group of c1 and c2, c1 commits, and the aimed ``coordinator_failover`` rule kills or pauses
the node coordinating the group; then each member does what a consumer does — FindCoordinator, the
request, and again after a routing answer or none. What Kafka's rules say survives a failover is
read straight off the broker's answers: the generation, the members and their assignments, the
committed offsets. The same history folded with the broken variant ``failover-forgets-generation``
(the new coordinator loads the group at generation 0) must diverge: the real broker's answers
catch it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.fault_suite import (
    FAILOVER_BACKOFF_MS,
    FailoverBrokerTarget,
    FaultGroupMachine,
    agree_on_coordinator,
    fault_machine_for,
    replay_faulty,
    settle_all,
)
from kgc.conformance.faults.nemesis import fault_steps
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import ClientError, Cluster, create_topics, error_name
from kgc.engine import traces
from kgc.engine.broken import broken
from kgc.engine.registry import build_cluster, cluster_manifest
from kgc.model import commands as m
from kgc.model.checker import CheckerConfig, check
from kgc.model.errors import ROUTING_ERRORS
from kgc.properties.machine import TOPIC_PARTITIONS, SuiteContext, assignment_for

pytestmark = [pytest.mark.broker, pytest.mark.faults]

# JoinGroup v5 (the KIP-394 member-id handshake), SyncGroup v3, Heartbeat v4, OffsetCommit v8,
# OffsetFetch v7, DescribeGroups v5, FindCoordinator v3: accepted by Kafka 3.9 and 4.x
VI = 1
SESSION_MS = 30_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Failover:
    """What the scenario saw: the trace, and the answers the assertions read."""

    trace: traces.Trace
    coordinator: int
    new_coordinator: int
    formed: tuple[tuple[str, str], ...]  # (member id, assignment) of the Stable group formed
    after: dict[str, m.Response | None]  # each member's heartbeat after the failover
    committed: m.Response | None
    offsets: m.Response | None
    stale: m.Response | None
    described: m.Response | None


def create_topic(cluster: Cluster, topic: str, *, deadline_s: float = 30.0) -> None:
    """CreateTopics through the controller (a ZooKeeper-mode broker answers ``NOT_CONTROLLER``;
    KRaft brokers forward), replicated on every node; then wait until every partition has a
    leader."""
    cluster.refresh_metadata()
    handle = create_topics(
        cluster.connection(cluster.controller_id),
        [(topic, TOPIC_PARTITIONS, len(cluster.brokers))],
    )
    cluster.poller.wait([handle], deadline_s)
    for t in handle.result().topics:
        assert error_name(t.error_code) in ("NONE", "TOPIC_ALREADY_EXISTS"), t
    end = time.monotonic() + deadline_s
    while True:
        try:
            leaders = cluster.partition_leaders(topic)
            if len(leaders) == TOPIC_PARTITIONS and all(n >= 0 for n in leaders.values()):
                return
        except ClientError:
            pass
        assert time.monotonic() < end, f"topic {topic!r} has no leaders after {deadline_s} s"
        time.sleep(0.1)


def failover_machine(
    broker: Any, nemesis: Any, cluster: Cluster, group_id: str, topic: str, scenario: str
) -> FaultGroupMachine:
    """A fault machine for ``group_id`` on ``broker``, as ``run_fault_suite`` builds one for an
    example: the cluster settled, a target on the coordinator every node agrees on, the
    fault-aware model built for that coordinator (its record goes into the trace's manifest)."""
    description = {**description_of(broker), **facts(cluster)}
    partitions = int(description["group_config"].get("offsets.topic.num.partitions", 50))
    create_topic(cluster, topic)
    settle_all(cluster, set(cluster.brokers))
    models: list[dict[str, Any]] = []
    targets: list[FailoverBrokerTarget] = []

    def open_target(gid: str) -> FailoverBrokerTarget:
        end = time.monotonic() + 30.0
        while True:
            leader = agree_on_coordinator(cluster, gid, partitions)
            target = FailoverBrokerTarget(cluster, gid, description=description, nemesis=nemesis)
            if target.coordinator_id == leader or time.monotonic() > end:
                break  # (a disagreement left at the deadline shows as a divergence)
            target.close()
            time.sleep(0.1)
        targets.append(target)
        return target

    def new_model(gid: str) -> Any:
        record = cluster_manifest({**description, **facts(cluster)}, targets[-1].coordinator_id)
        models.append(record)
        return build_cluster(record, gid)

    context = SuiteContext(
        open_target=open_target,
        new_model=new_model,
        scenario=scenario,
        profile="faults",
        checker_config=CheckerConfig(),
        topic=topic,
    )
    context.new_group_id = lambda: group_id
    machine_cls = fault_machine_for(
        context, broker=broker, cluster=cluster, nemesis=nemesis, partitions=partitions
    )
    machine_cls.models = models  # type: ignore[attr-defined]
    return machine_cls()


@contextmanager
def scenario(
    broker: Any, nemesis: Any, group_id: str, topic: str, name: str
) -> Iterator[FaultGroupMachine]:
    """A :func:`failover_machine` on its own connections to ``broker``; torn down (the cluster
    healed) and closed after, whatever happened."""
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-failover")
    machine = failover_machine(broker, nemesis, cluster, group_id, topic, name)
    try:
        yield machine
    finally:
        try:
            machine.teardown()
        finally:
            cluster.close()


def explained(machine: FaultGroupMachine) -> traces.Trace:
    """End the history; the model must have explained every event. Returns its trace."""
    machine.engine.finish()
    assert machine.engine.divergence is None, machine.report()
    return machine.trace()


def answer(machine: FaultGroupMachine, client: str) -> m.Response | None:
    """The answer to ``client``'s latest request, or None if none came."""
    engine = machine.engine
    mine = [rid for rid, c in engine.requests.items() if c.client == client]
    if not mine:
        return None
    return next(
        (e.response for e in engine.events if e.kind == "receive" and e.request_id == max(mine)),
        None,
    )


def error_of(response: m.Response) -> str:
    parts = getattr(response, "partitions", None)
    if isinstance(response, m.OffsetCommitResponse) and parts:
        return str(parts[0].error)
    return str(getattr(response, "error", "NONE"))


# 5 s of 250 ms back-offs: well inside the members' sessions
AFTER_FAILOVER_TRIES = 20


def until_answered(
    machine: FaultGroupMachine, client: str, send: Callable[[], None]
) -> m.Response | None:
    """What a consumer does after a failover, as ``coordinator_failover`` does it: FindCoordinator
    (its connection moves to the node named), the request; on a routing answer or none, back off
    and again, for up to ``AFTER_FAILOVER_TRIES`` tries (a consumer retries routing errors for as
    long as its request timeout lets it; a CI run under load saw both members' heartbeats still
    answered COORDINATOR_NOT_AVAILABLE after ``FAILOVER_TRIES``). Returns the last answer."""
    response = None
    for attempt in range(AFTER_FAILOVER_TRIES):
        if attempt:
            machine.tick(FAILOVER_BACKOFF_MS)
        machine.find_coordinator(client, VI)
        send()
        response = answer(machine, client)
        if response is not None and error_of(response) not in ROUTING_ERRORS:
            break
    return response


def stalled(seen: Failover) -> bool:
    """Whether c1 never had an answer from the new coordinator's loaded state: its last answer
    after the failover is a routing error or none (``coordinator_failover`` gave up retrying)."""
    c1 = seen.after["c1"]
    return c1 is None or error_of(c1) in ROUTING_ERRORS


def finish_forming(machine: FaultGroupMachine, clients: list[str]) -> list[m.Response | None]:
    """What the consumers of a ``form_group`` do until they share a Stable generation, as a
    consumer's poll loop does it: wait for an answer left pending (100 ms ticks); after a
    JoinGroup answer, sync (the leader first); after REBALANCE_IN_PROGRESS, or any other error,
    rejoin with the member id; once synced, heartbeat while another member is not, so a
    rebalance it started is learnt. At most 30 s. Returns each client's SyncGroup answer.

    A new group's join phase ends on the coordinator's timer
    (``group.initial.rebalance.delay.ms=0``, then a write), which ``form_group``'s own steps do
    not wait for. Both ways this went wrong on loaded CI machines (4.3.1 KRaft, three nodes) are
    handled here: neither join answered 80 ms after it was sent; and c1's join completed
    generation 1 alone just before c2's join came, so c2's join started generation 2, parked
    until c1 rejoins, and c1's sync was answered REBALANCE_IN_PROGRESS. With the group formed
    during the macro, as is usual, this sends nothing."""
    views = machine.views
    synced: dict[str, m.Response | None] = {}
    for step in range(300):
        last = {c: answer(machine, c) for c in clients}
        for c in clients:
            r = last[c]
            if isinstance(r, m.SyncGroupResponse) and r.error == "NONE":
                synced[c] = r
        generations = {views[c].generation_id for c in clients}
        if (
            len(synced) == len(clients)
            and len(generations) == 1
            and all(
                not machine.target.in_flight(c) and error_of(last[c]) == "NONE" for c in clients
            )
        ):
            break
        order = sorted(clients, key=lambda c: not views[c].leader)  # the leader syncs first
        for c in order:
            r = last[c]
            if machine.target.in_flight(c) or r is None:
                continue
            if isinstance(r, m.JoinGroupResponse) and r.error == "NONE":
                machine.sync(c, 0, False)
            elif error_of(r) != "NONE":
                synced.pop(c, None)
                machine.rejoin(c, VI, "same")
            elif step % 10 == 0:  # synced, or heartbeating: learn of a rebalance, once a second
                machine.heartbeat(c, VI, "current")
        machine.tick(100)
    return [synced.get(c) for c in clients]


def run_failover(
    broker: Any, nemesis: Any, group_id: str, topic: str, action: str, say: Any
) -> Failover:
    """The scenario on ``broker``; asserts that the model explained every answer and that the
    broken variant does not."""
    with scenario(broker, nemesis, group_id, topic, f"coordinator-failover-{action}") as machine:
        c1, c2 = (
            machine.first_client(
                session=SESSION_MS, rebalance=SESSION_MS, static=False, protocols=("range",)
            ),
            machine.second_client(
                session=SESSION_MS, rebalance=SESSION_MS, static=False, protocols=("range",)
            ),
        )
        machine.form_group(([c1, c2], VI, True, "stay"))
        synced = finish_forming(machine, [c1, c2])
        assert all(isinstance(r, m.SyncGroupResponse) and r.error == "NONE" for r in synced), (
            f"no Stable group formed: {synced}\n{machine.report()}"
        )
        views = machine.views
        gen = views[c1].generation_id
        leader = c1 if views[c1].leader else c2
        formed = tuple(
            (a.member_id, a.assignment) for a in assignment_for(views[leader].members, topic)
        )
        target = machine.target
        assert isinstance(target, FailoverBrokerTarget)
        coordinator = target.coordinator_id
        say(f"group {group_id}: generation {gen} on node {coordinator}, members {formed}")

        machine.commit(c1, VI, "current", 5)
        assert answer(machine, c1) == m.OffsetCommitResponse(
            partitions=(m.PartitionError(topic=topic, partition=0, error="NONE"),)
        )
        machine.heartbeat(c2, VI, "current")

        # kill or pause the coordinator (then settle); c1 rediscovers it and heartbeats
        machine.coordinator_failover(([c1, c2], action, "heartbeat", VI))
        after = {
            c1: answer(machine, c1),
            c2: until_answered(machine, c2, lambda: machine.heartbeat(c2, VI, "current")),
        }
        new_coordinator = target.route(c1)
        committed = until_answered(machine, c1, lambda: machine.commit(c1, VI, "current", 9))
        offsets = until_answered(machine, c2, lambda: machine.fetch(c2, VI))
        stale = until_answered(machine, c2, lambda: machine.heartbeat(c2, VI, "stale"))
        described = until_answered(machine, c1, lambda: machine.describe(c1, VI))

        if action == "pause":
            machine.nemesis_resume(0)
            # a connection that still goes to the old coordinator after it resumed: a client
            # that never rediscovered, with c1's member id and generation
            c3 = machine.new_client(
                session=SESSION_MS, rebalance=SESSION_MS, static=False, protocols=("range",)
            )
            machine.engine.execute(
                m.Heartbeat(client=c3, member_id=views[c1].member_id, generation_id=gen, version=4)
            )
        else:
            machine.nemesis_restart(0)
        until_answered(machine, c1, lambda: machine.heartbeat(c1, VI, "current"))
        trace = explained(machine)

    events = trace.events
    say(f"coordinator {coordinator} -> {new_coordinator}; {len(events)} events")
    say(traces.render(trace))
    assert [(a, n) for _, a, n in fault_steps(events)] == [
        (action, coordinator),
        ("resume" if action == "pause" else "restart", coordinator),
    ]
    with broken("failover-forgets-generation"):
        diverged = check(build_cluster(trace.manifest["model"], group_id), events)
    assert diverged is not None, "a model that forgets the generation explained the broker"
    say(f"broken model diverged at event {diverged.index}: {diverged.reason}")
    return Failover(
        trace=trace,
        coordinator=coordinator,
        new_coordinator=new_coordinator,
        formed=formed,
        after=after,
        committed=committed,
        offsets=offsets,
        stale=stale,
        described=described,
    )


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
    seen = run_failover(cluster, nemesis, kgc_group_id, kgc_topic, action, say)
    if stalled(seen):
        # Seen once in CI (4.3.1, kill, the quality tests running beside): the new coordinator
        # timed every heartbeat out (a write op's 5 s offsets.commit.timeout.ms, answered
        # COORDINATOR_NOT_AVAILABLE) for over 60 s after the settle saw its ISR whole, so c1's
        # session expired before any answer showed what the node reloaded. The model explained
        # every answer; nothing was judged. Once more, on a fresh group and topic.
        say(f"no loaded answer after the failover ({seen.after}); the scenario once more")
        kgc_group_id, kgc_topic = f"{kgc_group_id}-again", f"{kgc_topic}-again"
        seen = run_failover(cluster, nemesis, kgc_group_id, kgc_topic, action, say)
    # what Kafka's rules say survives the failover (read straight off the broker's answers)
    assert seen.new_coordinator != seen.coordinator
    assert seen.after == {
        "c1": m.HeartbeatResponse(error="NONE"),
        "c2": m.HeartbeatResponse(error="NONE"),
    }
    assert seen.committed == m.OffsetCommitResponse(
        partitions=(m.PartitionError(topic=kgc_topic, partition=0, error="NONE"),)
    )
    assert seen.stale == m.HeartbeatResponse(error="ILLEGAL_GENERATION")
    assert isinstance(seen.offsets, m.OffsetFetchResponse), seen.offsets
    assert [(p.offset, p.error) for p in seen.offsets.partitions] == [(9, "NONE")]
    assert isinstance(seen.described, m.DescribeGroupsResponse), seen.described
    assert seen.described.group_state == "Stable"
    assert sorted((x.member_id, x.assignment) for x in seen.described.members) == sorted(
        seen.formed
    )


def test_failover_trace_replays_with_the_same_faults_at_the_same_steps(
    kraft3: Any,
    kraft_nemesis: Any,
    kgc_group_id: str,
    kgc_topic: str,
    say: Any,
    tmp_path: Path,
) -> None:
    seen = run_failover(kraft3, kraft_nemesis, kgc_group_id, kgc_topic, "pause", say)
    saved = traces.save(seen.trace, tmp_path / "failover.json")
    loaded = traces.load(saved)
    recorded = fault_steps(loaded.events)
    assert recorded == fault_steps(seen.trace.events)
    assert [a for _, a, _ in recorded] == ["pause", "resume"]
    # the saved trace re-checks with no broker, through the ClusterGroupModel its manifest rebuilds
    analyzed = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "analyze", str(saved)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert analyzed.returncode == 0 and "PASS" in analyzed.stdout, analyzed.stdout + analyzed.stderr
    # replay: a fresh group the same node coordinates, the same commands, the same faults
    replayed = replay_faulty(kraft3, loaded)
    say(f"recorded faults {recorded}; replayed {fault_steps(replayed.trace.events)}")
    assert fault_steps(replayed.trace.events) == recorded
    assert replayed.engine.divergence is None, traces.render(replayed.trace)
