"""Rebalance: the join phase, generations, leader choice, protocol vote and assignment propagation.

Rules (4.x ``GroupMetadataManager.prepareRebalance`` / ``maybeCompleteJoinElseSchedule`` /
``tryCompleteInitialRebalanceElseSchedule`` / ``completeClassicGroupJoin`` / ``propagateAssignment``
and ``ClassicGroup.initNextGeneration`` / ``selectProtocol`` / ``maybeElectNewJoinedLeader`` /
``remove``; 3.9 ``GroupCoordinator.prepareRebalance`` / ``onCompleteJoin`` /
``propagateAssignment``, ``DelayedJoin`` / ``InitialDelayedJoin``, ``GroupMetadata``):

1. A rebalance starts (state PreparingRebalance) when a member joins, changes its metadata, the
   leader rejoins in Stable, or a member leaves or expires in Stable/CompletingRebalance. Starting
   from CompletingRebalance first answers every parked SyncGroup with ``REBALANCE_IN_PROGRESS`` and
   clears all assignments; any pending-sync deadline is cancelled.
2. From Empty (the *initial* rebalance) the join phase waits ``group.initial.rebalance.delay.ms``
   and completes only when that timer fires; if a new member joined meanwhile (and time remains
   within the group's rebalance timeout) it waits again: ``delay = min(configured, remaining)``,
   ``remaining = max(remaining - previous delay, 0)`` — Kafka's exact arithmetic. Otherwise the
   phase completes as soon as every member has rejoined and no KIP-394 pending member is left, or
   when the group's rebalance timeout (the largest member rebalance timeout, taken when the phase
   starts) passes.
3. Completing the phase removes every *dynamic* member that has not rejoined (static members stay),
   keeps the leader if it rejoined or else picks any rejoined member (Kafka: ``HashMap`` order over
   random ids — the model allows each), bumps ``generation_id`` and selects the protocol: among the
   protocols every member supports, each member votes for the first in its own preference order,
   most votes wins (ties: any of them). With no member left the group becomes Empty (generation
   still bumped, no protocol); if members remain but none rejoined the phase is re-armed for another
   rebalance timeout. Otherwise every parked JoinGroup is answered (the leader's answer lists all
   members with their metadata for the chosen protocol), each member's session timer restarts, all
   members become *pending sync* and a sync deadline of one rebalance timeout starts.
4. When the leader's SyncGroup arrives in CompletingRebalance its assignments are stored (members it
   left out get an empty assignment), every parked SyncGroup is answered with its own member's
   assignment, those members' session timers restart, and the group becomes Stable.
5. Removing the leader makes any remaining member the leader (``HashMap`` order again); the model
   keeps all of them as candidates until the join phase completes (see ``state.py``).
"""

from __future__ import annotations

from kgc.model.classic.delete import CONSUMER_PROTOCOL_TYPE, subscribed_topics
from kgc.model.classic.state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    JoinTimer,
    SyncTimer,
    evolve_member,
)
from kgc.model.classic.subscription import CAUGHT, ESCAPES, read_subscription
from kgc.model.classic.txn import Txn
from kgc.model.commands import JoinedMember, JoinGroupResponse, SyncGroupResponse
from kgc.model.errors import NONE, REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID
from kgc.model.history import Invoke
from kgc.model.known_bugs import (
    JOIN_ANSWERED_TWICE,
    JOIN_STALLED_BY_SUBSCRIPTION,
    BugWorld,
    after_event,
    at_bug,
)

# --------------------------------------------------------------------------- membership basics


def reschedule_heartbeat(tx: Txn, member_id: str, timeout_ms: int | None = None) -> None:
    """Replace the member's delayed heartbeat by one due ``timeout_ms`` (default: its session
    timeout) from now (4.x ``rescheduleClassicGroupMemberHeartbeat``, 3.9
    ``completeAndScheduleNextExpiration``)."""
    m = tx.members[member_id]
    t = m.session_timeout_ms if timeout_ms is None else timeout_ms
    tx.members[member_id] = evolve_member(m, heartbeat_deadline_ms=tx.now_ms + t)


def remove_member(tx: Txn, member_id: str) -> None:
    """``ClassicGroup.remove`` / ``GroupMetadata.remove``: drop the member (its timer goes with
    it), its pending-join and pending-sync marks; a removed leader is replaced by any remaining
    member."""
    gone = tx.members.pop(member_id, None)
    if member_id in tx.leader:
        # ``Profile.join_leader_elected_once`` off: the removed leader stays named, none chosen
        # until the join phase completes (``()``: the named one is no member)
        tx.leader = tuple(sorted(tx.members)) if tx.profile.join_leader_elected_once else ()
    tx.pending_members.pop(member_id, None)
    tx.pending_sync.discard(member_id)
    if gone is not None and gone.group_instance_id is not None:
        # 2.3 - 2.7 pair every removal with ``removeStaticMember(member.groupInstanceId)``: if a
        # refused join had unmapped this member and a newer one took its instance id, that one's
        # mapping goes too (only 2.3 - 2.7 can have two members with one instance id)
        for other in tx.members.values():
            if other.group_instance_id == gone.group_instance_id and other.in_static_members:
                tx.members[other.member_id] = evolve_member(other, in_static_members=False)
                break


def has_all_members_joined(tx: Txn) -> bool:
    if tx.pending_members and tx.profile.join_waits_for_pending_members:
        return False
    return all(m.awaiting_join is not None for m in tx.members.values())


def complete_join_future(tx: Txn, member_id: str, response: JoinGroupResponse) -> bool:
    """Answer the member's parked JoinGroup, if any."""
    m = tx.members.get(member_id)
    if m is None or m.awaiting_join is None:
        return False
    tx.respond(m.awaiting_join, response)
    if response.member_id:
        tx.revealed(response.member_id)
    else:
        tx.release_unrevealed(member_id)
    tx.members[member_id] = evolve_member(m, awaiting_join=None)
    return True


def complete_sync_future(tx: Txn, member_id: str, response: SyncGroupResponse) -> bool:
    m = tx.members.get(member_id)
    if m is None or m.awaiting_sync is None:
        return False
    tx.respond(m.awaiting_sync, response)
    tx.members[member_id] = evolve_member(m, awaiting_sync=None)
    return True


def answered_protocol_type(tx: Txn, version: int) -> str | None:
    """The group's protocol type as a successful JoinGroup v7+ or SyncGroup v5+ answer names it
    (KIP-559; 4.x ``GroupMetadataManager``: ``setProtocolType(group.protocolType().orElse(null))``,
    3.9 ``JoinGroupResult``/``SyncGroupResult`` with ``group.protocolType``); ``None`` where the
    version has no such field. Error answers name none (Kafka's null)."""
    return tx.protocol_type if version >= 7 else None


def sync_answer_protocol(tx: Txn, version: int) -> tuple[str | None, str | None]:
    """``(protocol_type, protocol_name)`` of a SyncGroup ``NONE`` answer at ``version``: the
    group's from v5 (``SyncGroupResponse.json``; 4.x ``propagateAssignment`` and the Stable
    answer of ``classicGroupSyncToClassicGroup``, 3.9 ``propagateAssignment`` / ``doSyncGroup``),
    none below. An error answer carries neither (both lines: null)."""
    if version < 5:
        return None, None
    return tx.protocol_type, tx.protocol_name


def join_error(error: str, member_id: str = "") -> JoinGroupResponse:
    """An error answer to JoinGroup (generation -1, no protocol, no leader)."""
    return JoinGroupResponse(error=error, member_id=member_id)


def leader_member_list(tx: Txn, version: int) -> tuple[JoinedMember, ...] | None:
    """The members listed in the leader's JoinGroup answer at ``version`` (instance ids from v5,
    KIP-345), or None when the broker cannot write that answer: before 3.3 the response's
    ``GroupInstanceId`` is not ``ignorable`` (``JoinGroupResponse.json``), so listing a static
    member at v0-4 fails to serialise (``Profile.join_response_instance_ids_ignorable``). Asked
    directly (a rejoin answered with the current generation), the request gets UNSUPPORTED_VERSION;
    at the join phase's completion it is a known bug (``known_bugs.JOIN_ANSWERED_TWICE``)."""
    members = [tx.members[k] for k in sorted(tx.members)]
    if (
        version < 5
        and not tx.profile.join_response_instance_ids_ignorable
        and any(o.group_instance_id is not None for o in members)
    ):
        return None
    return tuple(
        JoinedMember(
            member_id=o.member_id,
            group_instance_id=o.group_instance_id if version >= 5 else None,
            metadata=o.metadata(tx.protocol_name),
        )
        for o in members
    )


# ------------------------------------------------------------------------------ the join phase


def can_rebalance(tx: Txn) -> bool:
    return tx.state in (STABLE, COMPLETING_REBALANCE, EMPTY)


def prepare_rebalance(tx: Txn) -> None:
    """Rule 1-2: move to PreparingRebalance and arm the join phase."""
    if tx.state == COMPLETING_REBALANCE:
        reset_and_propagate_error(tx, REBALANCE_IN_PROGRESS)
    remove_sync_expiration(tx)
    initial = tx.state == EMPTY
    if initial:
        delay = tx.config.group_initial_rebalance_delay_ms
        remaining = max(tx.rebalance_timeout_ms() - delay, 0)
        tx.join_timer = JoinTimer(
            deadline_ms=tx.now_ms + delay, initial=True, delay_ms=delay, remaining_ms=remaining
        )
    tx.state = PREPARING_REBALANCE
    if not initial:
        maybe_complete_join_else_schedule(tx)


def maybe_complete_join_else_schedule(tx: Txn) -> None:
    if has_all_members_joined(tx):
        complete_join(tx)
    else:
        tx.join_timer = JoinTimer(deadline_ms=tx.now_ms + tx.rebalance_timeout_ms(), initial=False)


def in_initial_rebalance(tx: Txn) -> bool:
    return tx.join_timer is not None and tx.join_timer.initial


def maybe_complete_join_phase(tx: Txn) -> None:
    """Complete the join phase if everyone has joined — never during the initial rebalance
    (4.x ``maybeCompleteJoinPhase``; 3.9 ``checkAndComplete`` on ``GroupJoinKey``, whose
    ``InitialDelayedJoin.tryComplete`` is always false)."""
    if tx.state != PREPARING_REBALANCE or in_initial_rebalance(tx):
        return
    if has_all_members_joined(tx):
        complete_join(tx)


def maybe_prepare_rebalance_or_complete_join(tx: Txn) -> None:
    if can_rebalance(tx):
        prepare_rebalance(tx)
    else:
        maybe_complete_join_phase(tx)


def fire_join_timer(tx: Txn) -> None:
    """The join phase's deadline passed (rule 2: extend the initial delay, or complete)."""
    timer = tx.join_timer
    assert timer is not None
    extend = timer.initial and tx.profile.initial_delay_extended  # Profile: one fixed delay
    if extend and tx.new_member_added and timer.remaining_ms != 0:
        tx.new_member_added = False
        delay = min(tx.config.group_initial_rebalance_delay_ms, timer.remaining_ms)
        remaining = max(timer.remaining_ms - timer.delay_ms, 0)
        tx.join_timer = JoinTimer(
            deadline_ms=tx.now_ms + delay, initial=True, delay_ms=delay, remaining_ms=remaining
        )
        return
    complete_join(tx)


def maybe_elect_new_joined_leader(tx: Txn) -> bool:
    """Keep the leader if it rejoined, else pick any rejoined member; False if nobody rejoined."""
    if not tx.leader:
        return False
    awaiting = [k for k in sorted(tx.members) if tx.members[k].awaiting_join is not None]
    options: set[str] = set()
    for candidate in tx.leader:
        if tx.members[candidate].awaiting_join is not None:
            options.add(candidate)
        else:
            options.update(awaiting)
    if not options:
        return False
    tx.leader = (tx.choose(sorted(options)),)
    return True


def select_protocol(tx: Txn) -> str:
    """Rule 3's vote (``ClassicGroup.selectProtocol`` / ``GroupMetadata.selectProtocol``)."""
    members = list(tx.members.values())
    support: dict[str, int] = {}
    for m in members:
        for p in m.protocols:
            support[p.name] = support.get(p.name, 0) + 1
    candidates = {name for name, n in support.items() if n == len(members)}
    votes: dict[str, int] = {}
    for m in members:
        vote = next((p.name for p in m.protocols if p.name in candidates), None)
        if vote is None:
            raise AssertionError("a member supports none of the group's common protocols")
        votes[vote] = votes.get(vote, 0) + 1
    top = max(votes.values())
    return tx.choose(sorted(name for name, n in votes.items() if n == top))


def complete_join(tx: Txn) -> None:
    """Rule 3 (``completeClassicGroupJoin`` / ``onCompleteJoin``)."""
    tx.join_timer = None
    for mid in sorted(tx.members):
        m = tx.members[mid]
        keep_static = tx.profile.join_completion_keeps_static_members
        if m.awaiting_join is None and (m.group_instance_id is None or not keep_static):
            remove_member(tx, mid)
    # ``Profile.join_leader_elected_once`` off: a named leader among the members stays; else
    # every member is answered as the leader, and the last one answered, any of them, is it
    every_member_leads = (
        not tx.profile.join_leader_elected_once
        and bool(tx.members)
        and not (len(tx.leader) == 1 and tx.leader[0] in tx.members)
    )
    if every_member_leads:
        tx.leader = (tx.choose(sorted(tx.members)),)
    elif not maybe_elect_new_joined_leader(tx) and tx.members:
        # Re-armed for another rebalance timeout (at least 1 ms: Kafka's timer tick; a 0 ms timer
        # re-armed at the same instant would never let time pass in the model).
        rearm = max(tx.rebalance_timeout_ms(), 1)
        tx.join_timer = JoinTimer(deadline_ms=tx.now_ms + rearm, initial=False)
        return
    # initNextGeneration
    tx.generation_id += 1
    if tx.members:
        tx.protocol_name = select_protocol(tx)
        tx.state = COMPLETING_REBALANCE
    else:
        tx.protocol_name = None
        tx.state = EMPTY
    if tx.members and subscription_escapes(tx):
        # ``computeSubscribedTopics`` throws past its ``SchemaException`` catch: the join phase's
        # completion ends there, no member is answered and no later join completes it
        # (``known_bugs.JOIN_STALLED_BY_SUBSCRIPTION``)
        enter_known_bug(tx, JOIN_STALLED_BY_SUBSCRIPTION.key, leader="")
        return
    tx.subscribed_topics = subscribed_topics(tx)
    tx.pending_sync.clear()
    if tx.state == EMPTY:
        return
    leader = tx.leader[0]
    chosen = tx.members.get(leader)  # a broken variant may name a leader that left
    listed_for_leader = leader_member_list(tx, chosen.awaiting_join_version) if chosen else ()
    if listed_for_leader is None:
        # 2.5 - 3.2: the leader's answer cannot be written, and what the broker does next is a
        # bug no rule describes (``known_bugs.JOIN_ANSWERED_TWICE``)
        enter_known_bug(tx, JOIN_ANSWERED_TWICE.key, leader=leader)
        return
    for mid in sorted(tx.members):
        version = tx.members[mid].awaiting_join_version
        listed: tuple[JoinedMember, ...] | None = ()
        if mid == leader:
            listed = listed_for_leader
        elif every_member_leads:
            listed = leader_member_list(tx, version)
        complete_join_future(
            tx,
            mid,
            JoinGroupResponse(
                error=NONE,
                generation_id=tx.generation_id,
                protocol_type=answered_protocol_type(tx, version),
                protocol_name=tx.protocol_name,
                leader=mid if every_member_leads else leader,
                member_id=mid,
                members=listed or (),
            ),
        )
        if tx.profile.new_member_keeps_no_timer_after_first_join and tx.members[mid].is_new:
            # 2.4: the session timer scheduled while the member is still new is satisfied at
            # once (``shouldKeepAlive``), so it is dropped and the member has no timer at all
            tx.members[mid] = evolve_member(tx.members[mid], heartbeat_deadline_ms=None)
        else:
            reschedule_heartbeat(tx, mid)
        tx.members[mid] = evolve_member(tx.members[mid], is_new=False)
        if tx.profile.sync_deadline:
            tx.pending_sync.add(mid)
    if tx.profile.sync_deadline:
        tx.sync_timer = SyncTimer(
            deadline_ms=tx.now_ms + tx.rebalance_timeout_ms(), generation_id=tx.generation_id
        )


# ------------------------------------------------------------------------ the sync phase


def remove_sync_expiration(tx: Txn) -> None:
    tx.pending_sync.clear()
    tx.sync_timer = None


def propagate_assignment(tx: Txn, error: str) -> None:
    """Answer every parked SyncGroup with ``error`` and its member's assignment; restart the
    session timer of each member answered."""
    for mid in sorted(tx.members):
        m = tx.members[mid]
        ptype, pname = (None, None)
        if error == NONE:
            ptype, pname = sync_answer_protocol(tx, m.awaiting_sync_version)
        answer = SyncGroupResponse(
            error=error, protocol_type=ptype, protocol_name=pname, assignment=m.assignment
        )
        if complete_sync_future(tx, mid, answer):
            reschedule_heartbeat(tx, mid)


def reset_and_propagate_error(tx: Txn, error: str) -> None:
    for mid, m in list(tx.members.items()):
        if m.assignment:
            tx.members[mid] = evolve_member(m, assignment="")
    propagate_assignment(tx, error)


def set_and_propagate_assignment(tx: Txn, assignment: dict[str, str]) -> None:
    for mid, m in list(tx.members.items()):
        a = assignment.get(mid, "")
        if m.assignment != a:
            tx.members[mid] = evolve_member(m, assignment=a)
    propagate_assignment(tx, NONE)


def fire_sync_timer(tx: Txn) -> None:
    """Members that never sent SyncGroup for this generation are removed and the group rebalances
    (4.x ``expirePendingSync``, 3.9 ``onExpirePendingSync``)."""
    timer = tx.sync_timer
    assert timer is not None
    tx.sync_timer = None
    if timer.generation_id != tx.generation_id:
        return
    if tx.state not in (COMPLETING_REBALANCE, STABLE) or not tx.pending_sync:
        return
    for mid in sorted(tx.pending_sync):
        remove_member(tx, mid)
    prepare_rebalance(tx)


# --------------------------------------------------------------------- removal by the coordinator


def remove_member_and_update(tx: Txn, member_id: str) -> None:
    """A member expired (4.x ``removeMemberAndUpdateClassicGroup``, 3.9
    ``removeMemberAndUpdateGroup``): its parked JoinGroup is answered ``UNKNOWN_MEMBER_ID``, then
    the group rebalances or, if it was already rebalancing, tries to complete the join phase."""
    complete_join_future(tx, member_id, join_error(UNKNOWN_MEMBER_ID))
    remove_member(tx, member_id)
    if tx.state in (STABLE, COMPLETING_REBALANCE):
        maybe_prepare_rebalance_or_complete_join(tx)
    elif tx.state == PREPARING_REBALANCE:
        _complete_join_after_expiry(tx)


def remove_pending_member_and_update(tx: Txn, member_id: str) -> None:
    tx.pending_members.pop(member_id, None)
    if tx.state == PREPARING_REBALANCE:
        _complete_join_after_expiry(tx)


def _complete_join_after_expiry(tx: Txn) -> None:
    if tx.profile.expiry_completes_initial_join:
        if has_all_members_joined(tx):
            complete_join(tx)
    else:
        maybe_complete_join_phase(tx)


def subscription_escapes(tx: Txn) -> bool:
    """Whether reading the members' subscriptions for the chosen protocol throws past
    ``computeSubscribedTopics``'s catch (``subscription.py``). When one member's would be caught
    and another's escape, which comes first is the order of Kafka's member ``HashMap``: both."""
    if tx.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    read = {
        read_subscription(
            m.metadata(tx.protocol_name),
            tx.profile.subscription_reader,
            wrapped=tx.profile.subscription_failures_wrapped,
        )
        for m in tx.members.values()
    }
    if ESCAPES not in read:
        return False
    return CAUGHT not in read or tx.choose((True, False))


def enter_known_bug(tx: Txn, key: str, *, leader: str) -> None:
    """This world met the known bug ``key`` (``known_bugs.py``) and predicts no more than what the
    bug cannot touch: the offsets committed (and a commit held back), the members."""
    committed = tx.offsets.values() if isinstance(tx.offsets, dict) else tx.offsets
    offsets = [(o.topic, o.partition, o.offset) for o in committed]
    world = at_bug(
        BugWorld(key=key, generation_id=tx.generation_id, leader=leader),
        offsets=offsets,
        members=len(tx.members),
        may_restart=tx.config.empty_group_may_vanish,
    )
    held = tx.deferred
    if held is not None:
        world = (
            after_event(
                world,
                Invoke(step=0, at_ms=0.0, request_id=held.request_id, command=held.command),
            )
            or world
        )
    tx.known_bug = world
