"""The classic group model: one group's coordinator as a pure, nondeterministic state machine.

Role: the checker's ``Model`` (``checker.py``) over
:class:`~kgc.model.classic.state.GroupState`, dispatching each request to the module that states
its rules (``join``, ``sync``, ``heartbeat``, ``leave``, ``offsets``, ``describe``,
``list_groups``, ``delete``; ``rebalance`` holds the join phase shared by all of them) and firing
the coordinator's timers.

Time. Requests are processed at their send time (never earlier than anything already processed).
Timers fire in deadline order, each at ``max(deadline, time of the last thing processed)``:

* every timer due at or before ``must_until`` fires;
* of those due in ``(must_until, may_until]`` any *prefix* in deadline order may have fired:
  ``advance`` returns the state after firing none, the first, the first two, … of them. Branching
  only on prefixes (not on every subset) keeps the state set linear in the number of timers inside
  the window; it assumes the broker's timer thread also fires them in deadline order.
* timers with equal deadlines fire in a fixed order: a deferred request, the join phase, member
  heartbeats (by member id), pending members, the sync deadline.

Concurrency. With ``GroupConfig.reorder_window_ms > 0`` a request may be held back (state
``deferred``) and processed after the next request sent within that window, or when the window
passes — the broker may process requests of different clients sent close together in either
order. Two requests of one client are never swapped (one connection's requests are handled in
order). Without a window, requests are processed in send order.

Nondeterministic choices inside a step (leader, tied protocol vote, FindCoordinator node without a
leader map) are enumerated by :func:`kgc.model.classic.txn.explore`.

Input outside the model: a request version the profile's broker does not accept raises
``ValueError`` naming the accepted range (the broker would reject the request before any group
logic; generators must not produce it). Faults: this model is one coordinator's in-memory group and
knows no cluster, so ``fault`` returns the state unchanged, which is right only on a cluster where
the faulted node does not coordinate the group. A fault on the coordinator (routing errors, a new
coordinator, reloading the persisted record) is modelled by
:class:`kgc.model.classic.cluster_group.ClusterGroupModel`, which wraps this one; the fault-mixed
suite (``kgc.conformance.drivers.fault_suite``) and its traces use that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from kgc.model.classic.authorization import acl_change, authorized
from kgc.model.classic.delete import handle_delete_groups, handle_offset_delete
from kgc.model.classic.describe import (
    handle_describe_groups,
    handle_find_coordinator,
    shows_writes_committed,
)
from kgc.model.classic.empty_group import handle_empty_group, names_empty_group
from kgc.model.classic.heartbeat import fire_member_heartbeat, fire_pending_member, handle_heartbeat
from kgc.model.classic.inputs import input_class
from kgc.model.classic.join import handle_join_group
from kgc.model.classic.leave import handle_leave_group
from kgc.model.classic.list_groups import handle_list_groups
from kgc.model.classic.offsets import handle_offset_commit, handle_offset_fetch
from kgc.model.classic.rebalance import fire_join_timer, fire_sync_timer
from kgc.model.classic.state import EMPTY, GroupState, with_outbox
from kgc.model.classic.sync import handle_sync_group
from kgc.model.classic.transactions import (
    handle_add_offsets_to_txn,
    handle_end_txn,
    handle_init_producer_id,
    handle_txn_offset_commit,
    settle_markers,
)
from kgc.model.classic.txn import Txn, explore
from kgc.model.commands import (
    AddOffsetsToTxn,
    DeleteGroups,
    DescribeGroups,
    EndTxn,
    FindCoordinator,
    Heartbeat,
    InitProducerId,
    JoinGroup,
    LeaveGroup,
    ListGroups,
    NotModelled,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    Request,
    Response,
    SyncGroup,
    TxnOffsetCommit,
)
from kgc.model.known_bugs import BugWorld
from kgc.model.profiles import GroupConfig
from kgc.model.timed import TIE_MS, TimedModel

Handler = Callable[[Txn, int, Any], None]

HANDLERS: dict[str, Handler] = {
    JoinGroup.type: handle_join_group,
    SyncGroup.type: handle_sync_group,
    Heartbeat.type: handle_heartbeat,
    LeaveGroup.type: handle_leave_group,
    OffsetCommit.type: handle_offset_commit,
    OffsetFetch.type: handle_offset_fetch,
    DescribeGroups.type: handle_describe_groups,
    FindCoordinator.type: handle_find_coordinator,
    ListGroups.type: handle_list_groups,
    DeleteGroups.type: handle_delete_groups,
    OffsetDelete.type: handle_offset_delete,
    InitProducerId.type: handle_init_producer_id,
    AddOffsetsToTxn.type: handle_add_offsets_to_txn,
    TxnOffsetCommit.type: handle_txn_offset_commit,
    EndTxn.type: handle_end_txn,
}

# timer kinds, in the order they fire when deadlines are equal: a heartbeat set in the same event
# as the join or sync timer was scheduled before it (``Profile.one_coordinator_timer``)
DEFERRED, HEARTBEAT, JOIN, PENDING, SYNC = 0, 1, 2, 3, 4
TIMER_NAMES = {
    DEFERRED: "deferred request",
    JOIN: "join phase",
    HEARTBEAT: "heartbeat",
    PENDING: "pending member",
    SYNC: "sync deadline",
}

Timer = tuple[float, int, str]


def _group_timers(state: GroupState) -> list[Timer]:
    """Every timer of the coordinator's for the group (everything but a deferred request)."""
    out: list[Timer] = [
        (m.heartbeat_deadline_ms, HEARTBEAT, m.member_id)
        for m in state.members
        if m.heartbeat_deadline_ms is not None
    ]
    out.extend((p.deadline_ms, PENDING, p.member_id) for p in state.pending_members)
    if state.join_timer is not None:
        out.append((state.join_timer.deadline_ms, JOIN, ""))
    if state.sync_timer is not None:
        out.append((state.sync_timer.deadline_ms, SYNC, ""))
    return out


def _coordinator_timer(state: GroupState) -> Timer | None:
    """The earliest of the coordinator's own timers."""
    return min(_group_timers(state), default=None)


def _deletable(s: GroupState) -> bool:
    """Empty with nothing the cleanup keeps it for (``GroupConfig.empty_group_may_vanish``)."""
    return (
        s.exists
        and s.state == EMPTY
        and not s.members
        and not s.pending_members
        and not s.offsets
        and not s.txn_offsets  # kept while a transaction holds offsets (``transactions.py`` T10)
        and s.join_timer is None
    )


def deleted_group(s: GroupState) -> GroupState:
    """The group after the cleanup: gone; what is in flight to clients and the member ids the
    model has named (``issued_ids``, ``unrevealed``) stay."""
    return GroupState(
        issued_ids=s.issued_ids,
        unrevealed=s.unrevealed,
        outbox=s.outbox,
        deferred=s.deferred,
        now_ms=s.now_ms,
        producers=s.producers,  # the transaction coordinator's, not the group's
        producer_ids_issued=s.producer_ids_issued,
        denied=s.denied,  # the authorizer's, not the group's
    )


class ClassicGroupModel(TimedModel[GroupState]):
    """The reference model of one classic consumer group."""

    def __init__(self, config: GroupConfig | None = None) -> None:
        self.config = config or GroupConfig()

    def __repr__(self) -> str:
        return f"ClassicGroupModel({self.config.profile.name})"

    # ------------------------------------------------------------------ Model
    def initial(self) -> GroupState:
        return GroupState()

    def group_state(self, state: GroupState) -> str:
        return state.state

    def input_class(self, state: GroupState, command: Request) -> str | None:
        """``classic/inputs.py``, with the broker's ``offset.metadata.max.bytes``."""
        return input_class(state, command, metadata_limit=self.config.offset_metadata_max_bytes)

    def known_bug(self, state: GroupState) -> BugWorld | None:
        return state.known_bug

    def with_known_bug(self, state: GroupState, world: BugWorld) -> GroupState:
        return replace(state, known_bug=world)

    def outbox(self, state: GroupState) -> Mapping[int, tuple[Response, float]]:
        return {o.request_id: (o.response, o.emitted_at_ms) for o in state.outbox}

    def deliver(self, state: GroupState, request_id: int) -> GroupState:
        delivered = with_outbox(state, tuple(o for o in state.outbox if o.request_id != request_id))
        if state.unconfirmed and any(
            o.request_id == request_id and shows_writes_committed(o.response) for o in state.outbox
        ):
            return replace(delivered, unconfirmed=False)
        return delivered

    def fault(
        self, state: GroupState, *, action: str, node: int, at_ms: float
    ) -> Iterable[GroupState]:
        """An ACL action (``authorization.AclChange``) changes what the run's principal is
        denied, for every request from then on; any other action leaves the state unchanged: see
        the module docstring (``ClusterGroupModel`` models coordinator faults)."""
        change = acl_change(action)
        if change is None:
            return [state]
        return [replace(state, denied=change.applied(state.denied))]

    def vanished(self, state: GroupState, until_ms: float) -> GroupState | None:
        if not (self.config.empty_group_may_vanish and _deletable(state)):
            return None
        last = state.cleaned_at_ms
        if last is not None and until_ms < last + self.config.cleanup_interval_ms:
            return None  # the cleanup ran at ``last`` or later: not again within an interval
        return replace(deleted_group(state), cleaned_at_ms=state.now_ms)

    # ------------------------------------------------------------------ steps
    def apply(
        self, state: GroupState, request_id: int, command: Request, at_ms: float
    ) -> list[GroupState]:
        """Process one request at ``at_ms`` (no reordering): every allowed successor."""
        if state.known_bug is not None:
            return [state]  # a world of a known Kafka bug predicts nothing (``known_bugs.py``)
        handler = HANDLERS.get(command.type)
        if handler is None:
            raise NotModelled(f"{command.type} is not a request the group model handles")
        r = self.config.profile.api_range(command.type)
        if not r.min_version <= command.version <= r.max_version:
            raise NotModelled(
                f"{command.type} v{command.version} is not accepted by {self.config.profile.name} "
                f"(v{r.min_version}-{r.max_version}); generate versions in that range"
            )

        def step(tx: Txn) -> None:
            if at_ms > tx.now_ms:
                tx.now_ms = at_ms
            if tx.producers:
                settle_markers(tx)  # ``transactions.py`` T9
            if state.denied or self.config.foreign_group_refused:
                authorized(  # ``authorization.py``: what the authorizer refuses first
                    tx,
                    request_id,
                    command,
                    state.denied,
                    dispatch,
                    foreign_group_refused=self.config.foreign_group_refused,
                )
            else:
                dispatch(tx, request_id, command)

        def dispatch(tx: Txn, request_id: int, command: Any) -> None:
            if names_empty_group(command):
                handle_empty_group(tx, request_id, command)  # ``empty_group.py``
                return
            handler(tx, request_id, command)

        return explore(self.config, state, step)

    def next_timer(self, state: GroupState) -> Timer | None:
        """The timer that fires next: (deadline, kind, key)."""
        cached = state._next_timer
        if cached == ():
            best = _coordinator_timer(state)
            object.__setattr__(state, "_next_timer", best)  # a cache, not state
        else:
            best = cached  # type: ignore[assignment]
        if state.deferred is not None:
            d: Timer = (state.deferred.at_ms + self.config.reorder_window_ms, DEFERRED, "")
            if best is None or d < best:
                return d
        return best

    def tied(self, state: GroupState, timer: Timer) -> list[Timer]:
        """Timers that may fire before ``timer``, the next one by (deadline, kind, key): with
        ``Profile.timers_unordered_within_ms`` (kfake), any timer of the group due within that
        window; else 3.9 only (``one_coordinator_timer`` false): a heartbeat or pending-member
        timer and a join or sync timer due within ``TIE_MS`` of each other run on two timer
        threads, either first.

        Left out on purpose: heartbeats of several members due at the same instant were set in one
        event, in ``group.allMembers()`` order (a ``HashMap``), so Kafka may expire them in any
        order; the model expires them in member-id order. Allowing every order makes a member
        whose parked join is wrongly expired (``pending-join-not-alive``) indistinguishable from
        Kafka whenever another member's heartbeat is due at the same instant, and no history seen
        so far needed another order."""
        deadline, kind, _ = timer
        window = self.config.profile.timers_unordered_within_ms
        if window and kind != DEFERRED:
            # every timer runs on its own (``Profile.timers_unordered_within_ms``: kfake's Go
            # timers): any other timer of the group due within the window may run first
            return [
                t
                for t in _group_timers(state)
                if t != timer and deadline <= t[0] < deadline + window
            ]
        if kind == HEARTBEAT and not self.config.profile.parked_request_keeps_member_alive:
            # an implementation that runs every session timer on its own (Go timers: kfake)
            # expires two members due together in either order
            return [
                (m.heartbeat_deadline_ms, HEARTBEAT, m.member_id)
                for m in state.members
                if m.heartbeat_deadline_ms is not None
                and m.member_id != timer[2]
                and deadline <= m.heartbeat_deadline_ms < deadline + TIE_MS
            ]
        if kind == DEFERRED or self.config.profile.one_coordinator_timer:
            return []
        if kind in (JOIN, SYNC):
            other = [
                (m.heartbeat_deadline_ms, HEARTBEAT, m.member_id)
                for m in state.members
                if m.heartbeat_deadline_ms is not None
            ] + [(p.deadline_ms, PENDING, p.member_id) for p in state.pending_members]
        else:
            other = [
                t
                for t in (
                    (state.join_timer.deadline_ms, JOIN, "") if state.join_timer else None,
                    (state.sync_timer.deadline_ms, SYNC, "") if state.sync_timer else None,
                )
                if t is not None
            ]
        return [t for t in other if deadline <= t[0] < deadline + TIE_MS]

    def fire(self, state: GroupState, timer: Timer) -> list[GroupState]:
        deadline, kind, key = timer
        if kind == DEFERRED:
            d = state.deferred
            assert d is not None
            return self.apply(replace(state, deferred=None), d.request_id, d.command, d.at_ms)

        def step(tx: Txn) -> None:
            if deadline > tx.now_ms:
                tx.now_ms = deadline
            if kind == JOIN:
                fire_join_timer(tx)
            elif kind == HEARTBEAT:
                fire_member_heartbeat(tx, key)
            elif kind == PENDING:
                fire_pending_member(tx, key)
            else:
                fire_sync_timer(tx)

        return explore(self.config, state, step)

    def timers(self, state: GroupState) -> list[tuple[float, str, str]]:
        """All pending timers, for reports and tests: (deadline, kind name, key), sorted."""
        out: list[tuple[float, str, str]] = []
        s = state
        if s.deferred is not None:
            out.append(
                (s.deferred.at_ms + self.config.reorder_window_ms, TIMER_NAMES[DEFERRED], "")
            )
        if s.join_timer is not None:
            out.append((s.join_timer.deadline_ms, TIMER_NAMES[JOIN], ""))
        out.extend(
            (m.heartbeat_deadline_ms, TIMER_NAMES[HEARTBEAT], m.member_id)
            for m in s.members
            if m.heartbeat_deadline_ms is not None
        )
        out.extend((p.deadline_ms, TIMER_NAMES[PENDING], p.member_id) for p in s.pending_members)
        if s.sync_timer is not None:
            out.append((s.sync_timer.deadline_ms, TIMER_NAMES[SYNC], ""))
        return sorted(out)
