"""Group coordinator failover: what survives when the broker coordinating a group dies or stalls.

The coordinator of a group is the leader of partition ``abs(groupId.hashCode()) %
offsets.topic.num.partitions`` of ``__consumer_offsets`` (``GroupCoordinatorService.java``). All
that survives a change of leader is what was written to that partition (``GroupMetadataManager`` /
``OffsetMetadataManager`` in ``group-coordinator``; ``GroupMetadataManager.scala`` in 3.x):

* a *group metadata record*, written when a classic group's leader completes SyncGroup (the
  generation's assignment), when the group becomes Empty, and on each new generation with no
  members: generation id, protocol type and name, leader, and every member with its session and
  rebalance timeouts and its assignment;
* an *offset commit record* per committed partition; a commit is acknowledged only after every
  in-sync replica has it (``acks=all``), so an acknowledged commit survives a clean leader change.

Rules modelled here (a failover as seen by the group's clients):

1. The old coordinator stops answering (killed: connection refused; paused: no answer). When it
   resumes it learns it lost leadership and unloads the group: ``NOT_COORDINATOR``. Until it has
   learned, a resumed coordinator may still answer from its in-memory group (a *zombie*); it
   cannot commit offsets any more (its append fails, answered ``NOT_COORDINATOR``).
2. The new leader loads the partition; while loading it answers ``COORDINATOR_LOAD_IN_PROGRESS``
   (``CoordinatorRuntime``: a LOADING context throws ``CoordinatorLoadInProgressException``); a node
   that does not (yet) lead the partition answers ``NOT_COORDINATOR``. FindCoordinator may name the
   old node (stale metadata), a new one, or answer ``COORDINATOR_NOT_AVAILABLE`` (no leader).
3. Loading replays the records: a group with members comes back ``Stable`` at the persisted
   generation with the persisted members and assignments, one without members comes back
   ``Empty`` (``ClassicGroup.fromRecord``); every loaded member's session timer restarts at load
   time (``GroupMetadataManager.onLoaded`` -> ``rescheduleClassicGroupMemberHeartbeat``). In-memory
   progress that was never written (a rebalance in progress) is lost. Committed offsets are those
   of acknowledged commits; a commit in flight when the coordinator died may or may not have been
   written.
4. After loading, requests follow the classic-group rules for the loaded state (Heartbeat:
   ``UNKNOWN_MEMBER_ID`` for a stranger, ``ILLEGAL_GENERATION`` for a stale generation, ``NONE``
   when Stable; OffsetCommit likewise; OffsetFetch returns the committed offsets).

Scope, stated rather than guessed: this model covers a Stable group across failovers
(Heartbeat, OffsetCommit, OffsetFetch, DescribeGroups, FindCoordinator). JoinGroup, SyncGroup and
LeaveGroup, and a member's session expiring, are left to the group model: a state in which one
happens has no successor, so the checker reports it as outside this model instead of guessing.
Which node answers a request is the client's business, not the model's, so after a fault every
request may also get a routing error (``NOT_COORDINATOR``, ``COORDINATOR_LOAD_IN_PROGRESS``) or no
answer at all; an answer that is not a routing error must match the group state exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import product
from typing import Literal

from kgc.model.commands import (
    UNKNOWN_MEMBER_ID,
    DescribedMember,
    DescribeGroups,
    DescribeGroupsResponse,
    FetchedOffset,
    FindCoordinator,
    FindCoordinatorResponse,
    Heartbeat,
    HeartbeatResponse,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
    Request,
    Response,
)

NONE = "NONE"
NOT_COORDINATOR = "NOT_COORDINATOR"
COORDINATOR_LOAD_IN_PROGRESS = "COORDINATOR_LOAD_IN_PROGRESS"
COORDINATOR_NOT_AVAILABLE = "COORDINATOR_NOT_AVAILABLE"
UNKNOWN_MEMBER_ID_ERROR = "UNKNOWN_MEMBER_ID"
ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"

ROUTING_ERRORS = (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS)


# ================================================================================ persisted state


@dataclass(frozen=True, slots=True, kw_only=True)
class PersistedMember:
    """One member as the group metadata record stores it."""

    member_id: str
    group_instance_id: str | None = None
    assignment: str = ""
    session_timeout_ms: int
    rebalance_timeout_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRecord:
    """The latest group metadata record of a classic group (``GroupMetadataValue``)."""

    generation_id: int
    protocol_type: str = "consumer"
    protocol_name: str | None = None
    leader: str | None = None
    members: tuple[PersistedMember, ...] = ()  # sorted by member_id


@dataclass(frozen=True, slots=True, kw_only=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int
    metadata: str = ""


Offsets = tuple[CommittedOffset, ...]  # sorted by (topic, partition), one entry per partition


def apply_commit(offsets: Offsets, commit: Iterable[CommittedOffset]) -> Offsets:
    table = {(o.topic, o.partition): o for o in offsets}
    for o in commit:
        table[(o.topic, o.partition)] = o
    return tuple(table[k] for k in sorted(table))


# ================================================================================= loaded group


GroupState = Literal["Empty", "Stable"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedGroup:
    """A coordinator's in-memory group: the record plus each member's session deadline."""

    state: GroupState
    record: GroupRecord
    deadlines: tuple[tuple[str, float], ...] = ()  # member_id -> session deadline (ms)

    def member(self, member_id: str) -> PersistedMember | None:
        for m in self.record.members:
            if m.member_id == member_id:
                return m
        return None

    def by_instance(self, group_instance_id: str) -> PersistedMember | None:
        for m in self.record.members:
            if m.group_instance_id == group_instance_id:
                return m
        return None


def loaded_group(record: GroupRecord, at_ms: float) -> LoadedGroup:
    """A group as replayed from ``record`` (``ClassicGroup.fromRecord``): Stable with its members,
    or Empty without; every member's session timer starts at ``at_ms`` (``onLoaded``)."""
    state: GroupState = "Stable" if record.members else "Empty"
    deadlines = tuple(sorted((m.member_id, at_ms + m.session_timeout_ms) for m in record.members))
    return LoadedGroup(state=state, record=record, deadlines=deadlines)


class FailoverRules:
    """The rules as overridable methods, so tests can build deliberately broken variants."""

    def load(self, record: GroupRecord, at_ms: float) -> LoadedGroup:
        """What the new coordinator holds after replaying the partition."""
        return loaded_group(record, at_ms)

    def validate_member(
        self, group: LoadedGroup, member_id: str, group_instance_id: str | None
    ) -> str | None:
        """``ClassicGroup.validateMember``: a static member is checked by instance id first."""
        if group_instance_id is not None:
            owner = group.by_instance(group_instance_id)
            if owner is None:
                return UNKNOWN_MEMBER_ID_ERROR
            if owner.member_id != member_id:
                return FENCED_INSTANCE_ID
            return None
        if group.member(member_id) is None:
            return UNKNOWN_MEMBER_ID_ERROR
        return None

    def heartbeat(self, group: LoadedGroup, command: Heartbeat) -> str:
        if group.state == "Empty":
            return UNKNOWN_MEMBER_ID_ERROR
        error = self.validate_member(group, command.member_id, command.group_instance_id)
        if error is not None:
            return error
        if command.generation_id != group.record.generation_id:
            return ILLEGAL_GENERATION
        return NONE

    def commit_error(self, group: LoadedGroup, command: OffsetCommit) -> str:
        """``ClassicGroup.validateOffsetCommit`` for a Stable or Empty group."""
        simple = (
            command.generation_id < 0
            and command.member_id == UNKNOWN_MEMBER_ID
            and command.group_instance_id is None
        )
        if simple:
            return NONE if group.state == "Empty" else UNKNOWN_MEMBER_ID_ERROR
        if group.state == "Empty":
            return UNKNOWN_MEMBER_ID_ERROR if command.generation_id >= 0 else NONE
        error = self.validate_member(group, command.member_id, command.group_instance_id)
        if error is not None:
            return error
        if command.generation_id != group.record.generation_id:
            return ILLEGAL_GENERATION
        return NONE

    def describe(self, group: LoadedGroup) -> DescribeGroupsResponse:
        r = group.record
        if group.state == "Empty":
            return DescribeGroupsResponse(
                error=NONE, group_state="Empty", protocol_type=r.protocol_type
            )
        return DescribeGroupsResponse(
            error=NONE,
            group_state="Stable",
            protocol_type=r.protocol_type,
            protocol_data=r.protocol_name or "",
            members=tuple(
                DescribedMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    assignment=m.assignment,
                )
                for m in sorted(r.members, key=lambda m: m.member_id)
            ),
        )


# ============================================================================ the checker's model

Phase = Literal["serving", "failing_over", "loaded"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FailoverState:
    """One possible world.

    ``group`` is the in-memory group of whoever currently serves it (None while nobody has loaded
    it). ``persisted`` is the latest group record; ``offsets`` the durable commits and
    ``pending`` the acknowledged-but-undelivered commits (request id, offsets) that a fault may
    or may not have made durable. ``zombie`` is the old coordinator's in-memory group while it is
    paused (``zombie_awake`` once it resumed). ``beyond`` names an event this model does not
    cover; such a state has no successor.
    """

    phase: Phase
    coordinator: int
    nodes: frozenset[int]
    stopped: frozenset[int] = frozenset()
    group: LoadedGroup | None
    persisted: GroupRecord
    offsets: Offsets = ()
    pending: tuple[tuple[int, Offsets], ...] = ()
    zombie: LoadedGroup | None = None
    zombie_awake: bool = False
    outbox: tuple[tuple[int, Response, float], ...] = ()
    beyond: str | None = None

    def visible_offsets(self) -> Offsets:
        out = self.offsets
        for _, commit in self.pending:
            out = apply_commit(out, commit)
        return out


_SUPPORTED = (Heartbeat, OffsetCommit, OffsetFetch, DescribeGroups, FindCoordinator)

# (successor state, response or None when the request is lost, commit to remember or None)
_Answer = tuple[FailoverState, Response | None, Offsets | None]


class FailoverModel:
    """The checker's :class:`~kgc.model.checker.Model` for a Stable group across coordinator
    failovers. ``group`` is the Stable group as the coordinator holds it when the run starts (its
    record is what the log holds), ``offsets`` what is committed, ``coordinator`` the node leading
    its ``__consumer_offsets`` partition, ``nodes`` every broker."""

    def __init__(
        self,
        *,
        record: GroupRecord,
        coordinator: int,
        nodes: Iterable[int],
        offsets: Offsets = (),
        started_at_ms: float = 0.0,
        rules: FailoverRules | None = None,
    ) -> None:
        self.rules = rules or FailoverRules()
        self._initial = FailoverState(
            phase="serving",
            coordinator=coordinator,
            nodes=frozenset(nodes),
            group=loaded_group(record, started_at_ms),
            persisted=record,
            offsets=offsets,
        )

    # ------------------------------------------------------------------ Model protocol
    def initial(self) -> FailoverState:
        return self._initial

    def advance(
        self, state: FailoverState, *, must_until: float, may_until: float
    ) -> Iterable[FailoverState]:
        if state.beyond is not None:
            return [state]
        options = [state]
        if state.phase == "failing_over":
            # the new leader may finish loading at any moment
            options.append(
                replace(state, phase="loaded", group=self.rules.load(state.persisted, may_until))
            )
        out = []
        for s in options:
            g = s.group
            if g is not None and s.phase != "failing_over":
                due = [d for _, d in g.deadlines]
                if any(d <= must_until for d in due):
                    out.append(replace(s, beyond="a member's session expired"))
                    continue
                if any(d <= may_until for d in due):
                    out.append(replace(s, beyond="a member's session may have expired"))
            out.append(s)
        return out

    def invoke(
        self, state: FailoverState, *, request_id: int, command: Request, at_ms: float
    ) -> Iterable[FailoverState]:
        if state.beyond is not None or not isinstance(command, _SUPPORTED):
            return []  # outside this model: the checker reports the step
        out: list[FailoverState] = []
        for new_state, response, commit in self._answers(state, command, at_ms):
            if response is None:
                out.append(new_state)  # the request is lost (dead or stalled node)
                continue
            if commit is not None:
                new_state = replace(new_state, pending=new_state.pending + ((request_id, commit),))
            out.append(
                replace(new_state, outbox=new_state.outbox + ((request_id, response, at_ms),))
            )
        return out

    def outbox(self, state: FailoverState) -> Mapping[int, tuple[Response, float]]:
        return {rid: (r, at) for rid, r, at in state.outbox}

    def deliver(self, state: FailoverState, request_id: int) -> FailoverState:
        outbox = tuple(e for e in state.outbox if e[0] != request_id)
        # an acknowledged commit that reached its client was durable, and so was every commit
        # appended before it
        index = next((i for i, (rid, _) in enumerate(state.pending) if rid == request_id), None)
        if index is None:
            return replace(state, outbox=outbox)
        offsets = state.offsets
        for _, commit in state.pending[: index + 1]:
            offsets = apply_commit(offsets, commit)
        return replace(state, outbox=outbox, offsets=offsets, pending=state.pending[index + 1 :])

    def fault(
        self, state: FailoverState, *, action: str, node: int, at_ms: float
    ) -> Iterable[FailoverState]:
        if state.beyond is not None:
            return [state]
        if action in ("kill", "pause"):
            stopped = state.stopped | {node}
            if node != state.coordinator or state.phase == "failing_over":
                return [replace(state, stopped=stopped)]
            return list(self._coordinator_lost(replace(state, stopped=stopped), action))
        if action in ("resume", "restart"):
            s = replace(state, stopped=state.stopped - {node})
            if action == "resume" and node == state.coordinator and s.zombie is not None:
                s = replace(s, zombie_awake=True)
            if action == "restart" and node == state.coordinator:
                s = replace(s, zombie=None, zombie_awake=False)
            return [s]
        return [state]

    # ------------------------------------------------------------------ internals
    def _coordinator_lost(self, state: FailoverState, action: str) -> Iterator[FailoverState]:
        """Every world after the coordinator stops: which undelivered commits were durable (a
        prefix, in append order), and which undelivered responses still reach their clients."""
        zombie = state.group if action == "pause" else None
        commits = state.pending
        for k in range(len(commits) + 1):
            durable = commits[:k]
            offsets = state.offsets
            for _, commit in durable:
                offsets = apply_commit(offsets, commit)
            lost_ids = {rid for rid, _ in commits[k:]}
            keepable = [e for e in state.outbox if e[0] not in lost_ids]
            for keep in product((True, False), repeat=len(keepable)):
                outbox = tuple(e for e, kept in zip(keepable, keep, strict=True) if kept)
                yield replace(
                    state,
                    phase="failing_over",
                    group=None,
                    offsets=offsets,
                    pending=(),
                    outbox=outbox,
                    zombie=zombie,
                    zombie_awake=False,
                )

    def _answers(self, state: FailoverState, command: Request, at_ms: float) -> Iterator[_Answer]:
        faulted = state.phase != "serving" or bool(state.stopped)
        if isinstance(command, FindCoordinator):
            yield from self._find_coordinator(state, faulted)
            return
        if faulted:
            yield state, None, None
            yield state, _routing_error(command, NOT_COORDINATOR), None
            yield state, _routing_error(command, COORDINATOR_LOAD_IN_PROGRESS), None
            if (
                state.zombie is not None
                and state.zombie_awake
                and not isinstance(command, OffsetCommit)
            ):
                zombie_state = replace(state, group=state.zombie)
                for _, response, _ in self._serve(zombie_state, command, at_ms):
                    yield state, response, None
        if state.group is not None and state.phase != "failing_over":
            yield from self._serve(state, command, at_ms)

    def _find_coordinator(self, state: FailoverState, faulted: bool) -> Iterator[_Answer]:
        if not faulted:
            yield state, FindCoordinatorResponse(error=NONE, node_id=state.coordinator), None
            return
        yield state, None, None
        yield state, FindCoordinatorResponse(error=COORDINATOR_NOT_AVAILABLE), None
        for node in sorted(state.nodes):
            yield state, FindCoordinatorResponse(error=NONE, node_id=node), None

    def _serve(self, state: FailoverState, command: Request, at_ms: float) -> Iterator[_Answer]:
        """The loaded group's answer; an accepted commit comes back as the third element."""
        group = state.group
        assert group is not None
        rules = self.rules
        if isinstance(command, Heartbeat):
            error = rules.heartbeat(group, command)
            if error == NONE:
                m = group.member(command.member_id)
                assert m is not None
                deadlines = tuple(
                    sorted(
                        (mid, at_ms + m.session_timeout_ms if mid == m.member_id else d)
                        for mid, d in group.deadlines
                    )
                )
                state = replace(state, group=replace(group, deadlines=deadlines))
            yield state, HeartbeatResponse(error=error), None
        elif isinstance(command, OffsetCommit):
            error = rules.commit_error(group, command)
            parts = sorted((o.topic, o.partition) for o in command.offsets)
            response = OffsetCommitResponse(
                partitions=tuple(
                    PartitionError(topic=t, partition=p, error=error) for t, p in parts
                )
            )
            if error == NONE:
                commit = tuple(
                    CommittedOffset(
                        topic=o.topic, partition=o.partition, offset=o.offset, metadata=o.metadata
                    )
                    for o in command.offsets
                )
                yield state, response, commit
            else:
                yield state, response, None
        elif isinstance(command, OffsetFetch):
            table = {(o.topic, o.partition): o for o in state.visible_offsets()}
            fetched = []
            for tp in sorted(command.partitions, key=lambda t: (t.topic, t.partition)):
                o = table.get((tp.topic, tp.partition))
                fetched.append(
                    FetchedOffset(
                        topic=tp.topic,
                        partition=tp.partition,
                        offset=o.offset if o else -1,
                        metadata=o.metadata if o else "",
                    )
                )
            yield state, OffsetFetchResponse(error=NONE, partitions=tuple(fetched)), None
        elif isinstance(command, DescribeGroups):
            yield state, rules.describe(group), None


def _routing_error(command: Request, error: str) -> Response:
    if isinstance(command, Heartbeat):
        return HeartbeatResponse(error=error)
    if isinstance(command, OffsetCommit):
        parts = sorted((o.topic, o.partition) for o in command.offsets)
        return OffsetCommitResponse(
            partitions=tuple(PartitionError(topic=t, partition=p, error=error) for t, p in parts)
        )
    if isinstance(command, OffsetFetch):
        return OffsetFetchResponse(error=error)
    return DescribeGroupsResponse(error=error)
