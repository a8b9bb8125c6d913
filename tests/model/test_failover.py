"""Coordinator failover (kgc.model.failover) checked on small hand-written histories.

Each history is what a client could see around a coordinator failover; the comment says what Kafka's
rules allow. The expected verdicts come from those rules (GroupMetadataManager replay / onLoaded,
CoordinatorRuntime's loading errors), not from running the model.
"""

from __future__ import annotations

from kgc.model.checker import check
from kgc.model.commands import (
    DescribedMember,
    DescribeGroups,
    DescribeGroupsResponse,
    FetchedOffset,
    FindCoordinator,
    FindCoordinatorResponse,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
    Protocol,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.failover import (
    CommittedOffset,
    FailoverModel,
    FailoverRules,
    GroupRecord,
    LoadedGroup,
    PersistedMember,
)
from kgc.model.history import Event, Fault, Invoke, Receive

TOPIC = "t"
RECORD = GroupRecord(
    generation_id=3,
    protocol_name="range",
    leader="c1-1",
    members=(
        PersistedMember(
            member_id="c1-1",
            assignment="a1",
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
        ),
        PersistedMember(
            member_id="c2-1",
            assignment="a2",
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
        ),
    ),
)
OFFSETS = (CommittedOffset(topic=TOPIC, partition=0, offset=7),)


def model(rules: FailoverRules | None = None) -> FailoverModel:
    return FailoverModel(
        record=RECORD, coordinator=2, nodes=[1, 2, 3], offsets=OFFSETS, rules=rules
    )


class History:
    """Builds Invoke/Receive/Fault events with increasing times and request ids."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.t = 0.0
        self.rid = 0

    def _tick(self, ms: float) -> float:
        self.t += ms
        return self.t

    def call(self, command, response=None, after_ms: float = 100):  # type: ignore[no-untyped-def]
        self.rid += 1
        rid = self.rid
        self.events.append(
            Invoke(
                step=len(self.events), at_ms=self._tick(after_ms), request_id=rid, command=command
            )
        )
        if response is not None:
            self.events.append(
                Receive(
                    step=len(self.events), at_ms=self._tick(5), request_id=rid, response=response
                )
            )
        return rid

    def fault(self, action: str, node: int, after_ms: float = 100) -> None:
        self.events.append(
            Fault(step=len(self.events), at_ms=self._tick(after_ms), action=action, node=node)
        )


def hb(client: str, generation: int = 3) -> Heartbeat:
    return Heartbeat(client=client, member_id=f"{client}-1", generation_id=generation, version=4)


def fetch(client: str = "c1") -> OffsetFetch:
    return OffsetFetch(
        client=client, partitions=(TopicPartition(topic=TOPIC, partition=0),), version=7
    )


def fetched(offset: int) -> OffsetFetchResponse:
    return OffsetFetchResponse(
        error="NONE", partitions=(FetchedOffset(topic=TOPIC, partition=0, offset=offset),)
    )


def commit(client: str, offset: int, generation: int = 3) -> OffsetCommit:
    return OffsetCommit(
        client=client,
        member_id=f"{client}-1",
        generation_id=generation,
        offsets=(TopicPartitionOffset(topic=TOPIC, partition=0, offset=offset),),
        version=8,
    )


def committed(error: str = "NONE") -> OffsetCommitResponse:
    return OffsetCommitResponse(partitions=(PartitionError(topic=TOPIC, partition=0, error=error),))


def kill_then_recover(h: History) -> None:
    """The usual failover as clients see it: kill the coordinator, a request is lost, the new
    leader is still loading, then it answers."""
    h.fault("kill", 2)
    h.call(hb("c1"))  # sent to the dead node: never answered
    h.call(
        FindCoordinator(client="c1", version=3), FindCoordinatorResponse(error="NONE", node_id=2)
    )
    h.call(hb("c1"), HeartbeatResponse(error="NOT_COORDINATOR"))
    h.call(hb("c1"), HeartbeatResponse(error="COORDINATOR_LOAD_IN_PROGRESS"))


def test_stable_group_before_any_fault() -> None:
    h = History()
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    h.call(hb("c2", generation=2), HeartbeatResponse(error="ILLEGAL_GENERATION"))
    h.call(fetch(), fetched(7))
    assert check(model(), h.events) is None


def test_routing_error_without_a_fault_is_a_divergence() -> None:
    # nothing happened to the coordinator: NOT_COORDINATOR has no excuse
    h = History()
    h.call(hb("c1"), HeartbeatResponse(error="NOT_COORDINATOR"))
    d = check(model(), h.events)
    assert d is not None and d.index == 1


def test_generation_members_and_offsets_survive_a_kill() -> None:
    h = History()
    h.call(commit("c1", 9), committed())
    kill_then_recover(h)
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    h.call(hb("c2", generation=2), HeartbeatResponse(error="ILLEGAL_GENERATION"))
    h.call(fetch(), fetched(9))
    h.call(
        DescribeGroups(client="c2", version=5),
        DescribeGroupsResponse(
            error="NONE",
            group_state="Stable",
            protocol_type="consumer",
            protocol_data="range",
            members=(
                DescribedMember(member_id="c1-1", assignment="a1"),
                DescribedMember(member_id="c2-1", assignment="a2"),
            ),
        ),
    )
    assert check(model(), h.events) is None


def test_acknowledged_commit_lost_after_failover_is_a_divergence() -> None:
    # the commit of 9 was acknowledged, so every in-sync replica has it: fetching 7 is wrong
    h = History()
    h.call(commit("c1", 9), committed())
    kill_then_recover(h)
    h.call(fetch(), fetched(7))
    d = check(model(), h.events)
    assert d is not None and isinstance(d.event, Receive)


def test_commit_in_flight_at_the_kill_may_or_may_not_survive() -> None:
    for survivor in (7, 9):
        h = History()
        h.call(commit("c1", 9))  # no answer before the kill
        kill_then_recover(h)
        h.call(fetch(), fetched(survivor))
        assert check(model(), h.events) is None, survivor


def test_load_in_progress_after_the_group_answered_from_the_new_coordinator() -> None:
    # the model does not track which node answers, so a later LOAD_IN_PROGRESS is a routing
    # answer it allows; what it forbids is an answer that contradicts the loaded state
    h = History()
    kill_then_recover(h)
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    h.call(hb("c2"), HeartbeatResponse(error="UNKNOWN_MEMBER_ID"))
    d = check(model(), h.events)
    assert d is not None and d.event == h.events[-1]


class ForgetsGeneration(FailoverRules):
    """Deliberately broken: loading forgets the persisted generation and members."""

    def load(self, record: GroupRecord, at_ms: float) -> LoadedGroup:
        return super().load(GroupRecord(generation_id=0, protocol_type=record.protocol_type), at_ms)


def test_broken_model_that_forgets_the_generation_is_caught() -> None:
    h = History()
    kill_then_recover(h)
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    assert check(model(), h.events) is None
    d = check(model(ForgetsGeneration()), h.events)
    assert d is not None and d.event == h.events[-1]


def test_paused_coordinator_may_answer_as_a_zombie_after_resume() -> None:
    # the old coordinator resumes and answers from memory before it learns it lost leadership
    h = History()
    h.fault("pause", 2)
    h.call(hb("c1"))  # stalls
    h.fault("resume", 2, after_ms=5000)
    h.call(hb("c2"), HeartbeatResponse(error="NONE"))
    assert check(model(ForgetsGeneration()), h.events) is None  # explained by the zombie


def test_zombie_cannot_commit() -> None:
    h = History()
    h.fault("pause", 2)
    h.fault("resume", 2, after_ms=5000)
    h.call(commit("c1", 11), committed("NOT_COORDINATOR"))
    h.call(fetch(), fetched(7))  # the failed commit left nothing behind
    assert check(model(), h.events) is None


def test_fault_on_another_node_changes_nothing() -> None:
    h = History()
    h.fault("kill", 3)
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    assert check(model(), h.events) is None


def test_join_is_outside_the_model() -> None:
    h = History()
    h.call(
        JoinGroup(
            client="c3",
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
            protocols=(Protocol(name="range"),),
            version=5,
        )
    )
    d = check(model(), h.events)
    assert d is not None and d.index == 0


def test_session_expiry_after_load_is_outside_the_model() -> None:
    # loaded members get a fresh 30 s session at load; 40 s of silence expires them
    h = History()
    kill_then_recover(h)
    h.call(hb("c1"), HeartbeatResponse(error="NONE"))
    h.call(hb("c1"), HeartbeatResponse(error="NONE"), after_ms=40_000)
    d = check(model(), h.events)
    assert d is not None and d.event == h.events[-2]
