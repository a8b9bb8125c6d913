"""The fault-aware classic model (``kgc.model.classic.cluster_group``) on small hand-written
histories.

No broker: each test writes the history a 3-node cluster could produce (or must not produce) when
the node coordinating a Stable group dies, and folds it through the checker. Node 1 leads the
group's only ``__consumer_offsets`` partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from kgc.engine.broken import broken
from kgc.model import commands as m
from kgc.model.checker import Checker, CheckerConfig, Divergence, check
from kgc.model.classic.cluster_group import ClusterGroupModel, ClusterGroupState
from kgc.model.history import (
    Event,
    Fault,
    Invoke,
    Quiet,
    Receive,
    TraceFormatError,
    event_from_json,
    event_to_json,
)
from kgc.model.profiles import PROFILES, GroupConfig

CONFIG = GroupConfig(
    group_id="kgc-g",
    offsets_topic_num_partitions=1,
    offsets_partition_leaders=(1,),
    node_ids=(1, 2, 3),
    group_initial_rebalance_delay_ms=0,
    group_min_session_timeout_ms=500,
)
PROTOCOLS = (m.Protocol(name="range", metadata="sub"),)
SESSION = 10_000


@dataclass
class History:
    events: list[Event] = field(default_factory=list)
    now: float = 0.0
    rid: int = 0

    def call(self, command: m.Request, answer: m.Response | None, *, after_ms: float = 5) -> None:
        self.now += after_ms
        step = len(self.events)
        rid = self.rid
        self.rid += 1
        self.events.append(Invoke(step=step, at_ms=self.now, request_id=rid, command=command))
        if answer is not None:
            self.now += 1
            self.events.append(Receive(step=step, at_ms=self.now, request_id=rid, response=answer))
        self.now += 20
        self.events.append(Quiet(step=step, at_ms=self.now))

    def fault(
        self, action: str, node: int, *, settle_ms: float = 3500, served_by: int | None = None
    ) -> None:
        """``served_by``: the node the runner saw serve the group at the end of ``settle_ms``."""
        self.events.append(
            Fault(
                step=len(self.events),
                at_ms=self.now,
                action=action,
                node=node,
                served_by=served_by,
                served_at_ms=None if served_by is None else self.now + settle_ms,
            )
        )
        self.now += settle_ms
        self.events.append(Quiet(step=len(self.events), at_ms=self.now))


def stable_group_with_commit() -> History:
    """c1 and c2 form generation 1 on node 1; c1 commits offset 5."""
    h = History()
    join = dict(session_timeout_ms=SESSION, rebalance_timeout_ms=SESSION, protocols=PROTOCOLS)
    h.call(m.JoinGroup(client="c1", version=3, **join), None)  # v3: no member-id handshake
    # the delayed join of an initial rebalance completes after the (0 ms) delay
    h.call(
        m.JoinGroup(client="c2", version=3, **join),
        None,
    )
    h.now += 200
    h.events.append(
        Receive(
            step=1,
            at_ms=h.now,
            request_id=0,
            response=m.JoinGroupResponse(
                error="NONE",
                generation_id=1,
                protocol_name="range",
                leader="c1-1",
                member_id="c1-1",
                members=(
                    m.JoinedMember(member_id="c1-1", metadata="sub"),
                    m.JoinedMember(member_id="c2-1", metadata="sub"),
                ),
            ),
        )
    )
    h.events.append(
        Receive(
            step=1,
            at_ms=h.now,
            request_id=1,
            response=m.JoinGroupResponse(
                error="NONE",
                generation_id=1,
                protocol_name="range",
                leader="c1-1",
                member_id="c2-1",
            ),
        )
    )
    assignments = (
        m.Assignment(member_id="c1-1", assignment="a1"),
        m.Assignment(member_id="c2-1", assignment="a2"),
    )
    h.call(
        m.SyncGroup(
            client="c1", member_id="c1-1", generation_id=1, assignments=assignments, version=4
        ),
        m.SyncGroupResponse(error="NONE", assignment="a1"),
    )
    h.call(
        m.SyncGroup(client="c2", member_id="c2-1", generation_id=1, version=4),
        m.SyncGroupResponse(error="NONE", assignment="a2"),
    )
    h.call(commit("c1", "c1-1", 1, 5), commit_answer("NONE"))
    return h


def commit(client: str, member: str, generation: int, offset: int) -> m.OffsetCommit:
    return m.OffsetCommit(
        client=client,
        member_id=member,
        generation_id=generation,
        offsets=(m.TopicPartitionOffset(topic="t", partition=0, offset=offset),),
        version=8,
    )


def commit_answer(error: str) -> m.OffsetCommitResponse:
    return m.OffsetCommitResponse(
        partitions=(m.PartitionError(topic="t", partition=0, error=error),)
    )


def heartbeat(client: str, member: str, generation: int) -> m.Heartbeat:
    return m.Heartbeat(client=client, member_id=member, generation_id=generation, version=4)


def find(client: str) -> m.FindCoordinator:
    return m.FindCoordinator(client=client, version=3)


def fetch(client: str) -> m.OffsetFetch:
    return m.OffsetFetch(
        client=client, partitions=(m.TopicPartition(topic="t", partition=0),), version=7
    )


def fetched(offset: int) -> m.OffsetFetchResponse:
    return m.OffsetFetchResponse(
        error="NONE",
        partitions=(m.FetchedOffset(topic="t", partition=0, offset=offset, leader_epoch=-1),),
    )


def described(client: str, assignment: str) -> m.DescribedMember:
    """A Stable member as DescribeGroups shows it, its client fields kept across a failover."""
    return m.DescribedMember(
        member_id=f"{client}-1",
        client_id=m.client_id_of(client),
        client_host="/127.0.0.1",
        metadata="sub",
        assignment=assignment,
    )


def run(h: History, model: ClusterGroupModel | None = None) -> Divergence | None:
    return check(model or ClusterGroupModel(CONFIG), h.events, CheckerConfig())


def kill_then_recover(h: History) -> None:
    """A failover as a consumer sees it: the coordinator (node 1) is killed, c1's request to it
    is never answered, FindCoordinator names node 2, which first answers as a node still taking
    the group over (``NOT_COORDINATOR``, then ``COORDINATOR_LOAD_IN_PROGRESS`` while it loads);
    c2 rediscovers too. Every later answer comes from the reloaded group."""
    h.fault("kill", 1)
    h.call(heartbeat("c1", "c1-1", 1), None)  # its connection goes to the dead node
    h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NOT_COORDINATOR"))
    h.call(fetch("c1"), m.OffsetFetchResponse(error="COORDINATOR_LOAD_IN_PROGRESS"))
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))


def test_without_faults_the_history_is_the_classic_one() -> None:
    h = stable_group_with_commit()
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
    h.call(heartbeat("c1", "c1-1", 0), m.HeartbeatResponse(error="ILLEGAL_GENERATION"))
    h.call(fetch("c1"), fetched(5))
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=1))
    assert run(h) is None


def test_routing_error_without_a_fault_is_a_divergence() -> None:
    # nothing happened to the coordinator: NOT_COORDINATOR has no excuse
    h = stable_group_with_commit()
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NOT_COORDINATOR"))
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]  # the answer


def test_killed_coordinator_old_connection_gets_nothing_and_others_say_not_coordinator() -> None:
    h = stable_group_with_commit()
    h.fault("kill", 1)
    h.call(heartbeat("c1", "c1-1", 1), None)  # its connection goes to the dead node: no answer
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=3))
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is None


def test_generation_members_assignments_and_offsets_survive_failover() -> None:
    h = stable_group_with_commit()
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(heartbeat("c2", "c2-1", 0), m.HeartbeatResponse(error="ILLEGAL_GENERATION"))
    h.call(
        fetch("c2"),
        m.OffsetFetchResponse(
            error="NONE",
            partitions=(m.FetchedOffset(topic="t", partition=0, offset=5, leader_epoch=-1),),
        ),
    )
    h.call(
        m.DescribeGroups(client="c2", version=5),
        m.DescribeGroupsResponse(
            error="NONE",
            group_state="Stable",
            protocol_type="consumer",
            protocol_data="range",
            members=(described("c1", "a1"), described("c2", "a2")),
        ),
    )
    assert run(h) is None


def test_a_new_coordinator_that_forgot_the_generation_is_caught() -> None:
    # The broker accepted the generation-1 commit; a model whose loaded group forgot the
    # persisted generation predicts ILLEGAL_GENERATION there.
    from kgc.model.classic import cluster_group

    h = stable_group_with_commit()
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    # (a Heartbeat is answered NONE while loading too; a commit is not)
    h.call(commit("c2", "c2-1", 1, 7), commit_answer("NONE"))
    assert run(h) is None
    original = cluster_group.load_group

    def forgets(*args: object, **kwargs: object) -> object:
        from dataclasses import replace

        g = original(*args, **kwargs)  # type: ignore[arg-type]
        return replace(g, generation_id=0)

    cluster_group.load_group = forgets  # type: ignore[assignment]
    try:
        divergence = run(h)
    finally:
        cluster_group.load_group = original
    assert divergence is not None
    assert divergence.event.step == h.events[-2].step  # the heartbeat's answer


def test_a_node_that_is_not_the_coordinator_answers_not_coordinator() -> None:
    h = stable_group_with_commit()
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))  # node 2 coordinates
    h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=3))  # stale? not allowed
    assert run(h) is not None  # once node 2 answered as coordinator, node 3 cannot be named


def test_in_memory_rebalance_progress_is_lost() -> None:
    # c2 left (PreparingRebalance in memory, nothing written): after failover the loaded group is
    # the last record, Stable with both members.
    h = stable_group_with_commit()
    h.call(
        m.LeaveGroup(client="c2", members=(m.MemberIdentity(member_id="c2-1"),), version=3),
        m.LeaveGroupResponse(
            error="NONE", members=(m.MemberResult(member_id="c2-1", error="NONE"),)
        ),
    )
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is None
    # whereas the old coordinator, had it lived, no longer knows c2-1
    h2 = stable_group_with_commit()
    h2.call(
        m.LeaveGroup(client="c2", members=(m.MemberIdentity(member_id="c2-1"),), version=3),
        m.LeaveGroupResponse(
            error="NONE", members=(m.MemberResult(member_id="c2-1", error="NONE"),)
        ),
    )
    h2.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h2) is not None


def test_fault_on_another_node_changes_nothing() -> None:
    h = stable_group_with_commit()
    h.fault("kill", 3)
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))
    h.fault("restart", 3)
    h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=1))
    assert run(h) is None
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    assert run(h) is not None


def test_state_set_names_the_loading_phase() -> None:
    model = ClusterGroupModel(CONFIG)
    s = model.initial()
    assert isinstance(s, ClusterGroupState)
    (lost, *_rest) = model.fault(s, action="kill", node=1, at_ms=0.0)
    assert model.group_state(lost) in ("Loading", "Empty")


def test_loading_ends_by_the_time_the_runner_saw_the_group_served() -> None:
    # Without the runner's word the new coordinator may still be loading 3.5 s after the kill
    # (rule 4 has no other bound); once the runner saw node 2 serve the group, it is not.
    for served_by, loading_allowed in ((None, True), (2, False)):
        h = stable_group_with_commit()
        h.fault("kill", 1, served_by=served_by)
        h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=2))
        h.call(fetch("c1"), m.OffsetFetchResponse(error="COORDINATOR_LOAD_IN_PROGRESS"))
        assert (run(h) is None) is loading_allowed, served_by
        h.events[-2] = replace(h.events[-2], response=fetched(5))  # type: ignore[call-arg]
        assert run(h) is None, served_by


def test_a_group_served_by_a_node_no_world_allows_is_caught() -> None:
    # the runner saw the dead node 1 serve the group: no world of the model has that
    h = stable_group_with_commit()
    h.fault("kill", 1, served_by=1)
    divergence = run(h)
    assert divergence is not None and isinstance(divergence.event, Fault)
    # a fault elsewhere leaves node 1 serving; the runner saying so keeps the history allowed
    h = stable_group_with_commit()
    h.fault("kill", 3, served_by=1)
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is None


def test_paused_coordinator_resumes_as_a_zombie_then_unloads() -> None:
    # node 1 stalls; the group moves; node 1 resumes and may still answer a heartbeat from memory,
    # or NOT_COORDINATOR -- after which it has unloaded the group and cannot answer from memory.
    h = stable_group_with_commit()
    h.fault("pause", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.fault("resume", 1, settle_ms=400)
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))  # zombie, from memory
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NOT_COORDINATOR"))
    assert run(h) is None
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is not None  # unloaded: no memory left to answer from


def test_ids_the_clients_never_saw_die_with_the_coordinator() -> None:
    # c1 and c2 join (v3: the id comes with the answer) and the coordinator dies before answering:
    # the ids it handed out were never seen, so the conformance layer never named them, and the
    # first id c2 sees from the new coordinator is its "c2-1" (seen live on 4.3.1, fault suite).
    join = dict(session_timeout_ms=SESSION, rebalance_timeout_ms=SESSION, protocols=PROTOCOLS)
    h = History()
    h.call(m.JoinGroup(client="c2", version=3, **join), None)
    h.call(m.JoinGroup(client="c1", version=3, **join), None)
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(
        m.JoinGroup(client="c2", version=3, **join),
        m.JoinGroupResponse(
            error="NONE",
            generation_id=1,
            protocol_name="range",
            leader="c2-1",
            member_id="c2-1",
            members=(m.JoinedMember(member_id="c2-1", metadata="sub"),),
        ),
        after_ms=100,
    )
    assert run(h) is None


def test_generation_members_and_offsets_survive_a_kill_as_a_consumer_sees_it() -> None:
    # c1 commits 9 (acknowledged), the coordinator dies; after the routing and loading answers the
    # new coordinator answers from the reloaded group: generation 1, both members, offset 9.
    h = stable_group_with_commit()
    h.call(commit("c1", "c1-1", 1, 9), commit_answer("NONE"))
    kill_then_recover(h)
    h.call(commit("c1", "c1-1", 1, 9), commit_answer("NONE"))  # generation-checked: loaded
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))
    h.call(heartbeat("c2", "c2-1", 0), m.HeartbeatResponse(error="ILLEGAL_GENERATION"))
    h.call(fetch("c2"), fetched(9))
    h.call(
        m.DescribeGroups(client="c2", version=5),
        m.DescribeGroupsResponse(
            error="NONE",
            group_state="Stable",
            protocol_type="consumer",
            protocol_data="range",
            members=(described("c1", "a1"), described("c2", "a2")),
        ),
    )
    assert run(h) is None


def test_acknowledged_commit_lost_after_failover_is_a_divergence() -> None:
    # the commit of 9 was acknowledged, so every in-sync replica has it: fetching 5 is wrong
    h = stable_group_with_commit()
    h.call(commit("c1", "c1-1", 1, 9), commit_answer("NONE"))
    kill_then_recover(h)
    h.call(fetch("c2"), fetched(5))
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]  # the fetch's answer


def test_commit_in_flight_at_the_kill_may_or_may_not_survive() -> None:
    # the commit of 9 was written to the log or not when the coordinator died; its answer never
    # came, so either offset may be read back after the failover, and nothing else
    for survivor, ok in ((5, True), (9, True), (7, False)):
        h = stable_group_with_commit()
        h.call(commit("c1", "c1-1", 1, 9), None)  # no answer before the kill
        kill_then_recover(h)
        h.call(fetch("c2"), fetched(survivor))
        assert (run(h) is None) == ok, survivor


def test_a_contradicting_answer_after_the_group_answered_from_the_new_coordinator() -> None:
    # once node 2 has answered from the reloaded group (a generation-checked commit), it serves
    # the group: an answer contradicting the loaded state, and a loading answer, are divergences
    def served() -> History:
        h = stable_group_with_commit()
        kill_then_recover(h)
        h.call(commit("c1", "c1-1", 1, 9), commit_answer("NONE"))
        return h

    h = served()
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is None
    h = served()
    h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="UNKNOWN_MEMBER_ID"))
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]
    h = served()
    h.call(fetch("c1"), m.OffsetFetchResponse(error="COORDINATOR_LOAD_IN_PROGRESS"))
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]


def test_a_zombie_answers_from_memory_not_from_a_reload() -> None:
    # the paused coordinator resumes and answers c1 from the group it held: that answer is
    # explained even by a model whose new coordinator forgets the generation on load
    h = stable_group_with_commit()
    h.fault("pause", 1)
    h.fault("resume", 1, settle_ms=400)
    h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error="NONE"))
    assert run(h) is None
    with broken("failover-forgets-generation"):
        assert run(h) is None


def test_zombie_cannot_commit() -> None:
    # the resumed old coordinator can no longer write: its answer to a commit is NOT_COORDINATOR
    # (and it unloads the group); the failed commit left nothing behind
    h = stable_group_with_commit()
    h.fault("pause", 1)
    h.fault("resume", 1, settle_ms=400)
    h.call(commit("c1", "c1-1", 1, 11), commit_answer("NOT_COORDINATOR"))
    h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(fetch("c1"), fetched(5))
    assert run(h) is None
    accepted = stable_group_with_commit()
    accepted.fault("pause", 1)
    accepted.fault("resume", 1, settle_ms=400)
    accepted.call(commit("c1", "c1-1", 1, 11), commit_answer("NONE"))
    divergence = run(accepted)
    assert divergence is not None and divergence.event == accepted.events[-2]


def test_a_join_after_failover_gets_the_classic_answer() -> None:
    # the reloaded group is a classic group: a follower rejoining a Stable group with unchanged
    # metadata gets the current generation at once (no rebalance), a new member the KIP-394
    # handshake; a join answered as if the generation were lost diverges
    join = dict(session_timeout_ms=SESSION, rebalance_timeout_ms=SESSION, protocols=PROTOCOLS)

    def rejoined(generation_id: int) -> History:
        h = stable_group_with_commit()
        kill_then_recover(h)
        h.call(
            m.JoinGroup(client="c2", member_id="c2-1", version=3, **join),
            m.JoinGroupResponse(
                error="NONE",
                generation_id=generation_id,
                protocol_name="range",
                leader="c1-1",
                member_id="c2-1",
            ),
        )
        return h

    h = rejoined(1)
    h.call(find("c3"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(
        m.JoinGroup(client="c3", version=4, **join),
        m.JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c3-1"),
    )
    assert run(h) is None
    h = rejoined(2)
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]


def test_sessions_expire_after_load_as_in_a_classic_group() -> None:
    # loaded members' sessions start when loading ends; after more than a session of silence
    # both have expired, the group is Empty, and a heartbeat is answered UNKNOWN_MEMBER_ID
    def silent(answer: str) -> History:
        h = stable_group_with_commit()
        kill_then_recover(h)
        h.call(commit("c1", "c1-1", 1, 9), commit_answer("NONE"))
        h.call(heartbeat("c1", "c1-1", 1), m.HeartbeatResponse(error=answer), after_ms=15_000)
        return h

    h = silent("UNKNOWN_MEMBER_ID")
    h.call(
        m.DescribeGroups(client="c1", version=5),
        m.DescribeGroupsResponse(error="NONE", group_state="Empty", protocol_type="consumer"),
    )
    assert run(h) is None
    h = silent("NONE")
    divergence = run(h)
    assert divergence is not None and divergence.event == h.events[-2]


def _joined_never_synced() -> History:
    """c1 and c2 form generation 1 on node 1 and never sync: nothing but what creating the group
    wrote is in the log when node 1 is killed; c2 then commits for generation 1 on node 2."""
    h = stable_group_with_commit()
    h.events = h.events[:6]  # the two joins, their quiets and their answers only
    assert [type(e).__name__ for e in h.events[4:]] == ["Receive", "Receive"]
    h.rid, h.now = 2, h.events[-1].at_ms
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    return h


def test_a_group_created_by_a_join_is_loaded_empty_after_failover_on_4x() -> None:
    # 4.x writes an empty group record when a JoinGroup creates the group
    # (``Profile.new_group_writes_empty_record``): node 2 loads the group Empty, so a member it
    # never persisted is unknown there (seen in a fault replay on 4.3.1)
    h = _joined_never_synced()
    h.call(commit("c2", "c2-1", 1, 7), commit_answer("UNKNOWN_MEMBER_ID"))
    assert run(h) is None
    # no group at all is 3.9's answer (the Scala coordinator only creates it in memory): the
    # commit of a generation then meets no group and is ILLEGAL_GENERATION
    old = ClusterGroupModel(replace(CONFIG, profile=PROFILES["kafka-3.9"]))
    assert run(h, old) is not None
    h3 = _joined_never_synced()
    h3.call(commit("c2", "c2-1", 1, 7), commit_answer("ILLEGAL_GENERATION"))
    assert run(h3, old) is None


def test_a_group_without_members_loads_as_one_world_however_long_the_fault() -> None:
    # when a group with no members finished loading shows in nothing a client can see: no
    # session or join timer starts at the load. One world per 50 ms of a 30 s fault window made
    # 3,212 states at once in a CI run (the checker gives up past 4,096)
    h = History()
    h.call(m.DescribeGroups(client="c1", version=6), None)
    h.fault("kill", 1, settle_ms=30_000)
    h.call(find("c1"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    h.call(
        m.DescribeGroups(client="c1", version=6),
        m.DescribeGroupsResponse(error="GROUP_ID_NOT_FOUND", group_state="Dead"),
    )
    checker = Checker(ClusterGroupModel(CONFIG), CheckerConfig())
    assert checker.feed_all(h.events) is None
    assert checker.peak_states < 20, checker.peak_states


# ----------------------------------------------------------------- rule 7: write timeouts
def held(h: History, command: m.Request, answer: m.Response, *, after_ms: float) -> None:
    """``command`` sent now, ``answer`` read ``after_ms`` later (a write held waiting for its
    commit: nothing else happens meanwhile)."""
    h.now += 5
    step = len(h.events)
    rid = h.rid
    h.rid += 1
    h.events.append(Invoke(step=step, at_ms=h.now, request_id=rid, command=command))
    h.now += after_ms
    h.events.append(Receive(step=step, at_ms=h.now, request_id=rid, response=answer))
    h.now += 20
    h.events.append(Quiet(step=step, at_ms=h.now))


TIMED_OUT_BEAT = m.HeartbeatResponse(error="COORDINATOR_NOT_AVAILABLE")
COMMIT_TIMEOUT = CONFIG.offsets_commit_timeout_ms  # Kafka's 5000 ms


def test_a_held_heartbeat_times_out_only_after_the_commit_timeout_and_only_under_a_fault() -> None:
    # a paused follower still in the ISR: the heartbeat waits for a commit that does not come
    def beat(
        fault: bool, after_ms: float, answer: m.Response, config: GroupConfig = CONFIG
    ) -> bool:
        h = stable_group_with_commit()
        if fault:
            h.fault("pause", 3, settle_ms=100)
        held(h, heartbeat("c1", "c1-1", 1), answer, after_ms=after_ms)
        h.call(heartbeat("c2", "c2-1", 1), m.HeartbeatResponse(error="NONE"))
        return run(h, ClusterGroupModel(config)) is None

    assert beat(True, COMMIT_TIMEOUT + 10, TIMED_OUT_BEAT)
    assert beat(True, 3200, m.HeartbeatResponse(error="NONE"))  # the commit came: held, answered
    assert not beat(True, 1000, TIMED_OUT_BEAT)  # before the timeout: no
    assert not beat(False, COMMIT_TIMEOUT + 10, TIMED_OUT_BEAT)  # nothing stalls without a fault
    # the timeout is the broker's offsets.commit.timeout.ms
    shorter = replace(CONFIG, offsets_commit_timeout_ms=2000)
    assert beat(True, 2010, TIMED_OUT_BEAT, shorter)
    assert not beat(True, 2010, TIMED_OUT_BEAT)
    # 3.9's coordinator: a heartbeat writes nothing, so it never waits for a commit
    old = replace(CONFIG, profile=PROFILES["kafka-3.9"])
    assert not beat(True, COMMIT_TIMEOUT + 10, TIMED_OUT_BEAT, old)
    assert ClusterGroupModel(old).hold_ms() == 0.0
    assert ClusterGroupModel(CONFIG).hold_ms() == COMMIT_TIMEOUT


def commit_timed_out_under_a_pause() -> History:
    """A Stable group with offset 5 committed; node 3 paused; c1's commit of 9 answered by its
    timeout."""
    h = stable_group_with_commit()
    h.fault("pause", 3, settle_ms=100)
    held(
        h,
        commit("c1", "c1-1", 1, 9),
        commit_answer("COORDINATOR_NOT_AVAILABLE"),
        after_ms=COMMIT_TIMEOUT + 10,
    )
    return h


def test_a_timed_out_commit_is_not_acknowledged() -> None:
    # an acknowledged commit survives the failover (test above: reading 5 back diverges); one
    # answered by its timeout was appended but maybe never committed: either offset may be read
    for survivor, ok in ((5, True), (9, True), (7, False)):
        h = commit_timed_out_under_a_pause()
        h.fault("resume", 3, settle_ms=100)
        kill_then_recover(h)
        h.call(fetch("c2"), fetched(survivor))
        assert (run(h) is None) == ok, survivor
    # the in-memory group kept the commit: before any failover it is read back
    h = commit_timed_out_under_a_pause()
    h.call(fetch("c2"), fetched(9))
    assert run(h) is None
    h.events[-2] = replace(h.events[-2], response=fetched(5))  # type: ignore[call-arg]
    assert run(h) is not None


def test_a_fault_records_who_served_the_group_and_a_bad_record_is_refused() -> None:
    fault = Fault(step=3, at_ms=10.0, action="kill", node=1, served_by=2, served_at_ms=900.5)
    assert event_from_json(event_to_json(fault)) == fault
    bare = Fault(step=3, at_ms=10.0, action="kill", node=1)
    assert "served_by" not in event_to_json(bare)
    assert event_from_json(event_to_json(bare)) == bare
    for broken_record, field_name in (
        ({"served_by": 2}, "served_at_ms"),
        ({"served_at_ms": 20.0}, "served_by"),
        ({"served_by": 2, "served_at_ms": 5.0}, "served_at_ms"),
    ):
        with pytest.raises(TraceFormatError, match=field_name):
            event_from_json({**event_to_json(bare), **broken_record})
