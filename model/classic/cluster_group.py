"""One classic group on a multi-node cluster under faults: the classic group model behind a
coordinator that may die, stall, move and reload.

Role: the checker's ``Model`` for the fault-mixed differential suite
(``kgc.conformance.drivers.fault_suite``). It wraps
:class:`~kgc.model.classic.group.ClassicGroupModel` (the in-memory group of whichever node
coordinates it) with what a coordinator failover does to that group, for every classic request and
state:

1. **Routing.** Each client has one connection, to the node its last ``FindCoordinator`` answer
   named (at first the group's coordinator). A group request reaches that node only; the node
   answers from the group if it coordinates it (loaded), ``NOT_COORDINATOR`` if it does not
   (4.x ``CoordinatorRuntime`` "not the leader" / 3.9 ``GroupCoordinator.validateGroupStatus``), and
   while it loads the partition the per-API loading errors of ``coordinator.errors_while_moving``
   (``COORDINATOR_LOAD_IN_PROGRESS``; Heartbeat ``NONE``; 3.9 SyncGroup
   ``REBALANCE_IN_PROGRESS``; any of them may also be ``NOT_COORDINATOR`` /
   ``COORDINATOR_NOT_AVAILABLE`` during the move). A request to a stopped node is never answered
   while it is stopped.
2. **Coordinator loss.** Killing or pausing the coordinator moves the group's
   ``__consumer_offsets`` partition to another in-sync replica. Which one is not knowable: every
   running node is a candidate (one successor state each), and the answers prune the wrong ones.
   The in-memory group is gone: pending joins and syncs, the members added since the last record,
   rebalance progress and timers are lost. Responses already emitted may or may not still reach
   their clients (a subset survives); requests parked on a killed node are never answered.
3. **What survives** is what was written (``GroupMetadataManager`` 4.x
   ``classicGroupSyncToClassicGroup`` / ``completeClassicGroupJoin`` on an empty group /
   static-member replacement in Stable / the empty record a JoinGroup that creates the group
   writes, ``Profile.new_group_writes_empty_record``; 3.9
   ``GroupCoordinator.doSyncGroup`` / ``onCompleteJoin`` ``storeGroup``): the group record at the
   leader's SyncGroup (Stable with the generation's members and assignments), an Empty record when
   a generation completes with no members, and every acknowledged offset commit. A write whose
   response had not reached its client when the coordinator died may or may not have been
   durable (both worlds are kept).
4. **Loading** (4.x ``GroupMetadataManager.replay`` + ``onLoaded``; 3.9
   ``GroupMetadataManager.loadGroupsAndOffsets`` + ``GroupCoordinator.onGroupLoaded``): a group
   record with members comes back ``Stable`` at its generation, leader, protocol and assignments,
   each member supporting only the selected protocol (the record stores only that subscription);
   one without members comes back ``Empty``; offsets alone make an Empty group. Every loaded
   member's session timer starts when loading ends, which the client cannot see: the model keeps
   one world per ``LOAD_GRID_MS`` step since the fault, so one world loaded at most a step before
   the real moment (its timers then fire within the checker's late tolerance). Loading ends by
   the moment the fault's runner saw the group served (the ``Fault`` event's ``served_by`` /
   ``served_at_ms``, :meth:`ClusterGroupModel.served`): the suite sends nothing before that, so
   from the next request on no world is still loading, and every world's coordinator is the
   node that served it. A history without that record (an older trace) keeps the unbounded
   bracket.
5. **A resumed old coordinator** that has not yet learned it lost the partition may answer
   Heartbeat, OffsetFetch and DescribeGroups from its in-memory group (a *zombie*); anything
   else it answers ``NOT_COORDINATOR``, and once it has answered ``NOT_COORDINATOR`` it has
   unloaded the group. A restarted node has no memory.
6. A fault on a node that does not coordinate the group changes nothing for the group (the
   conformance layer waits until such a node has left the partition's ISR) but rule 7's.
7. **Write timeouts** (4.x ``CoordinatorRuntime.CoordinatorWriteEvent``: a write operation whose
   answer waits for the commit of the records before it gets an ``OperationTimeout`` of
   ``offsets.commit.timeout.ms``, ``GroupConfig.offsets_commit_timeout_ms``; its
   ``TimeoutException`` is ``REQUEST_TIMED_OUT``, which
   ``CoordinatorOperationExceptionHelper.handleOperationException`` answers
   ``COORDINATOR_NOT_AVAILABLE``). While a node is stopped a commit may not come in time: a
   paused follower still in the ISR, or a new leader whose high watermark waits for a follower
   (seen on 4.3.1: a Heartbeat to the new coordinator unanswered for 6 s after a failover). So
   a Heartbeat or OffsetCommit answer that waits for the commit
   (``describe.shows_writes_committed``) and is sent while a node is stopped may instead be
   ``COORDINATOR_NOT_AVAILABLE``, emitted ``offsets_commit_timeout_ms`` after the request; the
   engine's hang timeout grows by as much (``hold_ms``). The timeout fails only the answer:
   what the operation did in memory stays, and its records stay appended, so a timed-out
   commit is not acknowledged (rule 3 keeps both worlds). Scope: JoinGroup, SyncGroup and
   LeaveGroup answers are not given this timeout (a failed append of a SyncGroup, or of a join
   a leave completes, changes the group: ``appendFuture``), nor is 3.9's coordinator, whose
   heartbeats write nothing.

Nondeterminism is returned, never guessed: the new coordinator, when loading ends, which emitted
responses survive, whether an unacknowledged write was durable, zombie or ``NOT_COORDINATOR``.

Scope, stated: requests the conformance layer does not send are not modelled — a request to a
stopped node (the suite holds it back), a pause while a request is in flight to that node (the
suite does not pause then), members' sessions expiring while the coordinator is down is modelled
only through rule 4's bracket.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import product
from typing import Literal

from kgc.model.checker import Model
from kgc.model.classic.describe import shows_writes_committed
from kgc.model.classic.empty_group import empty_group_answer_for, names_empty_group
from kgc.model.classic.group import ClassicGroupModel
from kgc.model.classic.state import EMPTY, STABLE, CommittedOffset, GroupState, Member, with_outbox
from kgc.model.commands import (
    DescribeGroups,
    DescribeGroupsResponse,
    FindCoordinator,
    FindCoordinatorResponse,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    NotModelled,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
    Protocol,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.coordinator import coordinator_for, errors_while_moving
from kgc.model.errors import (
    COORDINATOR_NOT_AVAILABLE,
    INVALID_SESSION_TIMEOUT,
    NONE,
    NOT_COORDINATOR,
)
from kgc.model.known_bugs import BugWorld
from kgc.model.profiles import GroupConfig

Phase = Literal["serving", "loading"]

# Worlds differ in when loading ended by this much at most (below CheckerConfig.late_ms, so the
# world loaded just before the real moment fires the loaded members' timers within tolerance).
LOAD_GRID_MS = 50.0

# (request id, client, response, emitted at ms): answers that do not come from the group itself
Routed = tuple[int, str, Response, float]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterGroupState:
    """One possible world: the group as its coordinator holds it, and the cluster around it.

    ``group`` is the coordinator's in-memory group while ``phase == "serving"`` (while
    ``"loading"`` it is the last one, kept only for member naming). ``persisted`` is the group as
    its latest record stores it (None: no record yet) and ``durable_offsets`` the committed
    offsets in the log; ``unacked`` holds, per write whose response has not reached its client,
    what was durable before it. ``routes`` maps each client to the node its connection goes to.
    ``early`` lists loaded members whose session may expire before ``group`` says:
    (member id, earliest deadline, deadline in ``group``)."""

    phase: Phase
    coordinator: int
    home: int  # the coordinator when the run started: where every connection first goes
    nodes: frozenset[int]
    stopped: frozenset[int] = frozenset()
    group: GroupState
    persisted: GroupState | None = None
    durable_offsets: tuple[CommittedOffset, ...] = ()
    unacked: tuple[tuple[int, GroupState | None, tuple[CommittedOffset, ...]], ...] = ()
    routes: tuple[tuple[str, int], ...] = ()
    routed: tuple[Routed, ...] = ()
    clients: tuple[tuple[int, str], ...] = ()  # request id -> client, for the group's answers
    lost_at_ms: float = 0.0
    early: tuple[tuple[str, float, float], ...] = ()
    zombie: GroupState | None = None
    zombie_node: int | None = None
    zombie_awake: bool = False
    # rule 7: (request id, sent at ms, the timeout's answer) of answers that may still time
    # out, and the ids of answers that did (the timeout's answer in the group's outbox)
    held: tuple[tuple[int, float, Response], ...] = ()
    timed_out: tuple[int, ...] = ()

    @property
    def state(self) -> str:
        """The group state name the engine records (``Loading`` while no node serves it)."""
        return self.group.state if self.phase == "serving" else "Loading"

    def route(self, client: str) -> int:
        for c, node in self.routes:
            if c == client:
                return node
        return self.home


def _seen_ids(naming: GroupState, persisted: GroupState | None) -> tuple[tuple[str, int], ...]:
    """``naming.issued_ids`` without the ids that die with the old coordinator's memory unseen:
    an id in a JoinGroup answer that never reached its client (a connection to a dead node) was
    never named by the conformance layer, so that client's next id takes its number back (as
    ``Txn.release_unrevealed`` does for an id that dies on a live coordinator). An id the group
    record keeps stays issued."""
    counts = dict(naming.issued_ids)
    kept = {m.member_id for m in persisted.members} if persisted is not None else set()
    lost: list[tuple[str, int]] = []
    for mid in naming.unrevealed:
        client, _, digits = mid.rpartition("-")
        if mid not in kept and digits.isdigit():
            lost.append((client, int(digits)))
    for client, number in sorted(lost, key=lambda x: -x[1]):  # a client's newest id first
        if counts.get(client) == number:
            if number == 1:
                del counts[client]
            else:
                counts[client] = number - 1
    return tuple(sorted(counts.items()))


def load_group(
    persisted: GroupState | None,
    offsets: tuple[CommittedOffset, ...],
    naming: GroupState,
    at_ms: float,
) -> GroupState:
    """The group a new coordinator holds after replaying the partition at ``at_ms`` (rules 3-4).
    ``naming`` carries the client-side member naming (issued ids), which is not broker state."""
    base = GroupState(
        issued_ids=_seen_ids(naming, persisted),
        unrevealed=(),
        now_ms=max(at_ms, naming.now_ms),
        offsets=offsets,
        exists=bool(offsets),
    )
    if persisted is None:
        return base
    members = tuple(
        Member(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            session_timeout_ms=m.session_timeout_ms,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            protocol_type=m.protocol_type,
            protocols=(
                Protocol(
                    name=persisted.protocol_name or "",
                    metadata=m.metadata(persisted.protocol_name),
                ),
            ),
            assignment=m.assignment,
            heartbeat_deadline_ms=base.now_ms + m.session_timeout_ms,
            # the group record keeps each member's client id and host (``GroupMetadataValue``
            # ``ClientId``/``ClientHost``, read back by ``ClassicGroup.fromRecord``)
            client_id=m.client_id,
        )
        for m in persisted.members
    )
    return replace(
        base,
        exists=True,
        state=STABLE if members else EMPTY,
        generation_id=persisted.generation_id,
        protocol_type=persisted.protocol_type,
        protocol_name=persisted.protocol_name if members else None,
        leader=persisted.leader if members else (),
        members=members,
    )


def record_of(group: GroupState) -> GroupState:
    """The group as a group metadata record stores it: generation, protocol, leader, members
    with their subscriptions and assignments; nothing in flight, no timers."""
    return GroupState(
        exists=True,
        state=group.state,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=group.leader,
        members=tuple(
            replace(
                m,
                is_new=False,
                awaiting_join=None,
                awaiting_join_version=0,
                awaiting_sync=None,
                heartbeat_deadline_ms=None,
            )
            for m in group.members
        ),
    )


def _identities(group: GroupState) -> tuple[tuple[str, str | None], ...]:
    return tuple((m.member_id, m.group_instance_id) for m in group.members)


def _written(before: GroupState, after: GroupState) -> bool:
    """Whether the step from ``before`` to ``after`` appended a group metadata record (rule 3)."""
    if after.state == STABLE:
        if before.state != STABLE or before.generation_id != after.generation_id:
            return True
        return _identities(before) != _identities(after)
    return after.state == EMPTY and after.generation_id != before.generation_id


def _error_response(command: Request, error: str, *, echo_member_id: bool = False) -> Response:
    """The answer to ``command`` that carries only ``error`` (what a node that does not serve
    the group, or is loading it, returns). A JoinGroup error carries no member id on 4.x
    (observed on 4.3.1: ``member_id=''`` for a request that named one); the 3.9 Scala coordinator
    answers ``JoinGroupResult(memberId, error)``, echoing it (``echo_member_id``)."""
    if isinstance(command, JoinGroup):
        return JoinGroupResponse(error=error, member_id=command.member_id if echo_member_id else "")
    if isinstance(command, SyncGroup):
        return SyncGroupResponse(error=error)
    if isinstance(command, Heartbeat):
        return HeartbeatResponse(error=error)
    if isinstance(command, LeaveGroup):
        return LeaveGroupResponse(error=error)
    if isinstance(command, OffsetCommit):
        parts = sorted((o.topic, o.partition) for o in command.offsets)
        return OffsetCommitResponse(
            partitions=tuple(PartitionError(topic=t, partition=p, error=error) for t, p in parts)
        )
    if isinstance(command, OffsetFetch):
        return OffsetFetchResponse(error=error)
    if isinstance(command, DescribeGroups):
        return DescribeGroupsResponse(error=error)
    raise TypeError(f"no error form for {command.type}")


_ZOMBIE_ANSWERS = (Heartbeat, OffsetFetch, DescribeGroups)
# rule 7: the write operations whose answers may time out
_TIMED_WRITES = (Heartbeat, OffsetCommit)


class ClusterGroupModel(Model[ClusterGroupState]):
    """:class:`ClassicGroupModel` under coordinator failover.

    ``coordinator`` is the node leading the group's ``__consumer_offsets`` partition when the run
    starts (default: from ``config.offsets_partition_leaders``), ``nodes`` every broker
    (default ``config.node_ids``)."""

    def __init__(
        self,
        config: GroupConfig | None = None,
        *,
        coordinator: int | None = None,
        nodes: Iterable[int] | None = None,
    ) -> None:
        self.classic = ClassicGroupModel(config)
        self.config = self.classic.config
        self._echo = self.config.profile.coordinator.startswith("core")  # 3.9's Scala one
        cfg = self.config
        if coordinator is None and cfg.offsets_partition_leaders is not None:
            coordinator = coordinator_for(
                cfg.group_id, cfg.offsets_topic_num_partitions, cfg.offsets_partition_leaders
            )
        if coordinator is None:
            raise ValueError(
                "ClusterGroupModel needs the group's coordinator: pass coordinator= or a config "
                "with offsets_partition_leaders"
            )
        node_set = frozenset(nodes if nodes is not None else cfg.node_ids) | {coordinator}
        self._initial = ClusterGroupState(
            phase="serving",
            coordinator=coordinator,
            home=coordinator,
            nodes=node_set,
            group=GroupState(),
        )

    def __repr__(self) -> str:
        return f"ClusterGroupModel({self.config.profile.name}, nodes={sorted(self._initial.nodes)})"

    # ------------------------------------------------------------------ Model
    def initial(self) -> ClusterGroupState:
        return self._initial

    def hold_ms(self) -> float:
        """A write's answer may be held until its timeout (rule 7; 4.x only)."""
        return 0.0 if self._echo else float(self.config.offsets_commit_timeout_ms)

    def group_state(self, state: ClusterGroupState) -> str:
        return state.state

    def input_class(self, state: ClusterGroupState, command: Request) -> str | None:
        """The served group's (``classic/inputs.py``); None while no coordinator serves it."""
        if state.phase != "serving":
            return None
        return self.classic.input_class(state.group, command)

    def timers(self, state: ClusterGroupState) -> list[tuple[float, str, str]]:
        return self.classic.timers(state.group) if state.phase == "serving" else []

    def known_bug(self, state: ClusterGroupState) -> BugWorld | None:
        """The served group's, or the zombie coordinator's (either answers clients)."""
        if state.group.known_bug is not None:
            return state.group.known_bug
        return state.zombie.known_bug if state.zombie is not None else None

    def with_known_bug(self, state: ClusterGroupState, world: BugWorld) -> ClusterGroupState:
        if state.group.known_bug is not None:
            return replace(state, group=replace(state.group, known_bug=world))
        assert state.zombie is not None  # ``known_bug`` found the world in one or the other
        return replace(state, zombie=replace(state.zombie, known_bug=world))

    def provisional(self, state: ClusterGroupState) -> bool:
        """A request is held back in the served group or the zombie's (``ClassicGroupModel``)."""
        return (state.phase == "serving" and state.group.deferred is not None) or (
            state.zombie is not None and state.zombie.deferred is not None
        )

    def advance(
        self, state: ClusterGroupState, *, must_until: float, may_until: float
    ) -> list[ClusterGroupState]:
        options = [state]
        if state.phase == "loading" and state.coordinator not in state.stopped:
            # loading may have ended at any moment since the last event (rule 4); members'
            # session timers start then. One world per LOAD_GRID_MS step, so the real load time
            # is at most one step after a world's (within the checker's late tolerance).
            options += self._loaded_worlds(state, may_until)
            # still loading: the worlds that loaded before now were produced just above
            options[0] = replace(
                state, lost_at_ms=max(may_until, state.lost_at_ms, state.group.now_ms)
            )
        out: dict[ClusterGroupState, None] = {}
        for s in options:
            for s2 in self._advance_serving(s, must_until, may_until):
                for s3 in self._time_out_writes(s2, may_until):
                    out[s3] = None
        if not any(s.zombie is not None and s.zombie_awake for s in out):
            return list(out)
        # an awake zombie's own timers run too (it answers from that memory)
        woke: dict[ClusterGroupState, None] = {}
        for s in out:
            if s.zombie is None or not s.zombie_awake:
                woke[s] = None
                continue
            for z in self.classic.advance(s.zombie, must_until=must_until, may_until=may_until):
                woke[replace(s, zombie=z)] = None
        return list(woke)

    def _advance_serving(
        self, state: ClusterGroupState, must_until: float, may_until: float
    ) -> Iterator[ClusterGroupState]:
        if state.phase != "serving":
            yield state
            return
        starts = [state]
        live_early = tuple(
            e
            for e in state.early
            if (m := state.group.member(e[0])) and m.heartbeat_deadline_ms == e[2]
        )
        if live_early != state.early:
            starts = [replace(state, early=live_early)]
        for member_id, earliest, _ in live_early:
            if earliest <= may_until:
                # the broker loaded earlier than this world assumes: the session may end now
                for s in list(starts):
                    g = s.group
                    now = max(earliest, g.now_ms)
                    members = tuple(
                        replace(m, heartbeat_deadline_ms=now) if m.member_id == member_id else m
                        for m in g.members
                    )
                    starts.append(
                        replace(
                            s,
                            group=replace(g, members=members),
                            early=tuple(e for e in s.early if e[0] != member_id),
                        )
                    )
        for s in starts:
            for g in self.classic.advance(s.group, must_until=must_until, may_until=may_until):
                yield self._after_step(s, g, request_id=None)

    def invoke(
        self, state: ClusterGroupState, *, request_id: int, command: Request, at_ms: float
    ) -> list[ClusterGroupState]:
        client = command.client
        if isinstance(command, FindCoordinator):
            return [
                self._emit(
                    state, request_id, client, FindCoordinatorResponse(error=e, node_id=n), at_ms
                )
                for e, n in self._find_coordinator_answers(state)
            ]
        node = state.route(client)
        if node in state.stopped or node not in state.nodes:
            return [state]  # never answered while the node is stopped
        if names_empty_group(command):
            # refused on any live node, before the group is routed (``empty_group.py`` rule 1);
            # a line that looks the group "" up (rule 3) is not sent one (the prefix rule)
            if self.config.profile.empty_group_id_checked_by_join_only and not isinstance(
                command, JoinGroup
            ):
                raise NotModelled(f"{command.type} to the group '' of a line that looks it up")
            refused = empty_group_answer_for(self.config.profile, command)
            return [self._emit(state, request_id, client, refused, at_ms)]
        cfg = self.config
        if (
            isinstance(command, JoinGroup)
            and not self._echo
            and not (
                cfg.group_min_session_timeout_ms
                <= command.session_timeout_ms
                <= cfg.group_max_session_timeout_ms
            )
        ):
            # 4.x GroupCoordinatorService.joinGroup checks the session timeout before it routes
            # the request to a coordinator shard (observed on 4.3.1 from a non-coordinator); 3.9
            # checks the coordinator first (GroupCoordinator.handleJoinGroup)
            invalid = JoinGroupResponse(error=INVALID_SESSION_TIMEOUT, member_id=command.member_id)
            return [self._emit(state, request_id, client, invalid, at_ms)]
        if state.phase == "serving" and node == state.coordinator:
            out = []
            may_time_out = (
                not self._echo and bool(state.stopped) and isinstance(command, _TIMED_WRITES)
            )
            for g in self.classic.invoke(
                state.group, request_id=request_id, command=command, at_ms=at_ms
            ):
                s = replace(state, clients=(*state.clients, (request_id, client)))
                if may_time_out and any(
                    o.request_id == request_id and shows_writes_committed(o.response)
                    for o in g.outbox
                ):
                    failed = _error_response(command, COORDINATOR_NOT_AVAILABLE)
                    s = replace(s, held=(*s.held, (request_id, at_ms, failed)))
                out.append(self._after_step(s, g, request_id=request_id))
            return out
        if state.zombie is not None and node == state.zombie_node:
            out = [
                self._emit(
                    replace(state, zombie=None, zombie_node=None, zombie_awake=False),
                    request_id,
                    client,
                    _error_response(command, NOT_COORDINATOR, echo_member_id=self._echo),
                    at_ms,
                )
            ]
            if isinstance(command, _ZOMBIE_ANSWERS):
                for z in self.classic.invoke(
                    state.zombie, request_id=request_id, command=command, at_ms=at_ms
                ):
                    answer = next((o for o in z.outbox if o.request_id == request_id), None)
                    if answer is None:
                        continue
                    z = replace(z, outbox=tuple(o for o in z.outbox if o.request_id != request_id))
                    out.append(
                        self._emit(
                            replace(state, zombie=z), request_id, client, answer.response, at_ms
                        )
                    )
            return out
        if state.phase == "loading" and node == state.coordinator:
            moving = errors_while_moving(command.type, self.config.profile)
            return [
                self._emit(
                    state,
                    request_id,
                    client,
                    _error_response(command, e, echo_member_id=self._echo),
                    at_ms,
                )
                for e in sorted(moving)
            ]
        errors = {NOT_COORDINATOR}
        if state.phase == "loading":
            errors.add(COORDINATOR_NOT_AVAILABLE)
        return [
            self._emit(
                state,
                request_id,
                client,
                _error_response(command, e, echo_member_id=self._echo),
                at_ms,
            )
            for e in sorted(errors)
        ]

    def outbox(self, state: ClusterGroupState) -> Mapping[int, tuple[Response, float]]:
        out = {rid: (r, at) for rid, _, r, at in state.routed}
        if state.phase == "serving":
            for o in state.group.outbox:
                out[o.request_id] = (o.response, o.emitted_at_ms)
        return out

    def deliver(self, state: ClusterGroupState, request_id: int) -> ClusterGroupState:
        routed = tuple(e for e in state.routed if e[0] != request_id)
        s = state
        if len(routed) != len(state.routed):
            (_, client, response, _) = next(e for e in state.routed if e[0] == request_id)
            s = replace(state, routed=routed)
            if isinstance(response, FindCoordinatorResponse) and response.error == NONE:
                routes = dict(s.routes)
                routes[client] = response.node_id
                s = replace(s, routes=tuple(sorted(routes.items())))
        elif state.phase == "serving":
            s = replace(state, group=self.classic.deliver(state.group, request_id))
        if s.held or s.timed_out:
            s = replace(
                s,
                held=tuple(h for h in s.held if h[0] != request_id),
                timed_out=tuple(r for r in s.timed_out if r != request_id),
            )
            if request_id in state.timed_out:
                return s  # a timed-out write was not acknowledged (rule 7)
        unacked = tuple(u for u in s.unacked if u[0] != request_id)
        if len(unacked) != len(s.unacked):
            # the write reached its client: it, and every write before it, is durable
            index = next(i for i, u in enumerate(s.unacked) if u[0] == request_id)
            s = replace(s, unacked=s.unacked[index + 1 :])
        return s

    def fault(
        self, state: ClusterGroupState, *, action: str, node: int, at_ms: float
    ) -> list[ClusterGroupState]:
        if action in ("kill", "pause"):
            s = replace(state, stopped=state.stopped | {node})
            if state.zombie_node == node and action == "kill":
                s = replace(s, zombie=None, zombie_node=None, zombie_awake=False)
            if node == state.coordinator:
                return list(self._coordinator_lost(s, action, node, at_ms))
            return list(self._maybe_lose_answers(s, node))
        if action in ("resume", "restart"):
            s = replace(state, stopped=state.stopped - {node})
            if node == s.zombie_node:
                if action == "resume":
                    s = replace(s, zombie_awake=True)
                else:
                    s = replace(s, zombie=None, zombie_node=None, zombie_awake=False)
            return [s]
        raise ValueError(f"unknown nemesis action {action!r}")

    def served(
        self, state: ClusterGroupState, *, node: int, at_ms: float
    ) -> list[ClusterGroupState]:
        """Rule 4's bound: the fault's runner saw ``node`` serve the group at ``at_ms``
        (``fault_suite.settle``: the partition's one leader answered a DescribeGroups with no
        loading or routing error), and sent nothing before. Only worlds with that coordinator
        remain, and one still loading ended its load by ``at_ms``: every moment of the grid up
        to it, no world still loading."""
        if state.coordinator != node or state.coordinator in state.stopped:
            return []
        if state.phase == "loading":
            return self._loaded_worlds(state, at_ms)
        return [state]

    def _loaded_worlds(self, state: ClusterGroupState, until: float) -> list[ClusterGroupState]:
        """Rule 4: the worlds whose load ended since the last event and by ``until``, one per
        ``LOAD_GRID_MS`` step (members' session timers start then)."""
        start = max(state.lost_at_ms, state.group.now_ms)
        times = []
        t = start + LOAD_GRID_MS
        # a group loaded without members starts no timer: when its load ended shows in nothing
        # but the clock, so the latest moment stands for all (a fault window of 30 s on a loaded
        # machine made 600 worlds of each otherwise equal one: 3212 at once)
        timed = state.persisted is not None and bool(state.persisted.members)
        while timed and t < until:
            times.append(t)
            t += LOAD_GRID_MS
        times.append(max(until, start))
        return [
            replace(
                state,
                phase="serving",
                group=load_group(state.persisted, state.durable_offsets, state.group, at),
                early=(),
            )
            for at in times
        ]

    # ------------------------------------------------------------------ internals
    def _time_out_writes(
        self, state: ClusterGroupState, may_until: float
    ) -> Iterator[ClusterGroupState]:
        """Rule 7: each held answer whose timeout may have fired by ``may_until`` either came
        (``state``, no longer held) or is ``COORDINATOR_NOT_AVAILABLE`` from its timeout on."""
        timeout = self.config.offsets_commit_timeout_ms
        due = [h for h in state.held if h[1] + timeout <= may_until]
        if not due:  # (a lost coordinator takes its held answers along: ``_coordinator_lost``)
            yield state
            return
        worlds = [replace(state, held=tuple(h for h in state.held if h not in due))]
        for request_id, sent_at, failed in due:
            if not any(o.request_id == request_id for o in state.group.outbox):
                continue
            worlds += [
                replace(
                    w,
                    group=with_outbox(
                        w.group,
                        tuple(
                            replace(o, response=failed, emitted_at_ms=sent_at + timeout)
                            if o.request_id == request_id
                            else o
                            for o in w.group.outbox
                        ),
                    ),
                    timed_out=(*w.timed_out, request_id),
                )
                for w in list(worlds)
            ]
        yield from worlds

    def _emit(
        self, state: ClusterGroupState, request_id: int, client: str, response: Response, at: float
    ) -> ClusterGroupState:
        return replace(state, routed=(*state.routed, (request_id, client, response, at)))

    def _find_coordinator_answers(self, state: ClusterGroupState) -> list[tuple[str, int]]:
        if state.phase == "serving" and not state.zombie_awake:
            return [(NONE, state.coordinator)]
        answers = {(NONE, state.coordinator)}
        if state.phase == "loading":
            answers.add((COORDINATOR_NOT_AVAILABLE, -1))
        if state.zombie_node is not None:
            answers.add((NONE, state.zombie_node))  # stale metadata on the resumed node
        return sorted(answers)

    def _after_step(
        self, state: ClusterGroupState, group: GroupState, *, request_id: int | None
    ) -> ClusterGroupState:
        """Track what the step wrote (rule 3)."""
        before = state.group
        persisted = state.persisted
        offsets = state.durable_offsets
        wrote = False
        if _written(before, group):
            persisted = record_of(group)
            wrote = True
        elif (
            not before.exists and group.exists and self.config.profile.new_group_writes_empty_record
        ):
            # the join that created the group wrote it Empty (``Profile``'s switch)
            persisted = GroupState(exists=True, state=EMPTY)
            wrote = True
        if group.offsets != before.offsets:
            offsets = tuple(group.offsets)
            wrote = True
        unacked = state.unacked
        if wrote and request_id is not None:
            unacked = (*unacked, (request_id, state.persisted, state.durable_offsets))
        clients = state.clients
        if len(clients) > 8:  # keep only request ids that may still be answered
            open_ids = (
                {o.request_id for o in group.outbox}
                | {m.awaiting_join for m in group.members}
                | {m.awaiting_sync for m in group.members}
            )
            clients = tuple(c for c in clients if c[0] in open_ids)
        return replace(
            state,
            group=group,
            persisted=persisted,
            durable_offsets=offsets,
            unacked=unacked,
            clients=clients,
        )

    def _surviving(self, entries: tuple[Routed, ...]) -> Iterator[tuple[Routed, ...]]:
        for keep in product((True, False), repeat=len(entries)):
            yield tuple(e for e, k in zip(entries, keep, strict=True) if k)

    def _maybe_lose_answers(
        self, state: ClusterGroupState, node: int
    ) -> Iterator[ClusterGroupState]:
        """Answers a stopped node sent but the client has not read may never arrive."""
        mine = tuple(e for e in state.routed if state.route(e[1]) == node)
        if not mine:
            yield state
            return
        others = tuple(e for e in state.routed if e not in mine)
        for kept in self._surviving(mine):
            yield replace(state, routed=tuple(sorted(others + kept)))

    def _coordinator_lost(
        self, state: ClusterGroupState, action: str, node: int, at_ms: float
    ) -> Iterator[ClusterGroupState]:
        client_of = dict(state.clients)
        if state.phase == "serving":
            pending: tuple[Routed, ...] = tuple(
                (o.request_id, client_of.get(o.request_id, ""), o.response, o.emitted_at_ms)
                for o in state.group.outbox
            )
        else:
            pending = ()
        mine = tuple(e for e in state.routed if state.route(e[1]) == node) + pending
        others = tuple(e for e in state.routed if state.route(e[1]) != node)
        # which unacknowledged writes were durable: a prefix, in append order
        durable_choices = [(state.persisted, state.durable_offsets)]
        for _, persisted, offsets in reversed(state.unacked):
            durable_choices.append((persisted, offsets))
        candidates = sorted(state.nodes - state.stopped)
        zombie, zombie_node = state.zombie, state.zombie_node
        if action == "pause" and state.phase == "serving":
            zombie, zombie_node = state.group, node
        for persisted, offsets in durable_choices:
            for kept in self._surviving(mine):
                for new in candidates:
                    yield replace(
                        state,
                        phase="loading",
                        coordinator=new,
                        persisted=persisted,
                        durable_offsets=offsets,
                        unacked=(),
                        held=(),
                        routed=tuple(sorted(others + kept)),
                        clients=(),
                        lost_at_ms=at_ms,
                        early=(),
                        group=replace(state.group, outbox=(), deferred=None),
                        zombie=zombie,
                        zombie_node=zombie_node,
                        zombie_awake=state.zombie_awake and zombie is state.zombie,
                    )
