"""Heartbeat and liveness: the one delayed heartbeat per member, and what its expiry does.

Rules (4.x ``GroupMetadataManager.classicGroupHeartbeatToClassicGroup`` /
``validateClassicGroupHeartbeat`` / ``rescheduleClassicGroupMemberHeartbeat`` /
``expireClassicGroupMemberHeartbeat`` and ``ClassicGroupMember.hasSatisfiedHeartbeat``;
3.9 ``GroupCoordinator.handleHeartbeat`` / ``validateHeartbeat`` /
``completeAndScheduleNextExpiration`` / ``onExpireHeartbeat``, ``DelayedHeartbeat`` and
``MemberMetadata.hasSatisfiedHeartbeat``):

1. Heartbeat errors in order: ``UNKNOWN_MEMBER_ID`` (no group), ``FENCED_INSTANCE_ID`` /
   ``UNKNOWN_MEMBER_ID`` (member validation, as for SyncGroup), ``ILLEGAL_GENERATION``; then by
   state: PreparingRebalance ``REBALANCE_IN_PROGRESS``, CompletingRebalance and Stable ``NONE``,
   Empty ``UNKNOWN_MEMBER_ID``. A valid heartbeat in PreparingRebalance, CompletingRebalance or
   Stable restarts the member's session timer (also when it answers ``REBALANCE_IN_PROGRESS``).
2. Each member has exactly one delayed heartbeat; restarting it replaces it. It is restarted by a
   Heartbeat, by an OffsetCommit in Stable/PreparingRebalance (``offsets.py``), by the completion of
   the join phase (all members), by the answer to a parked SyncGroup, by a SyncGroup in Stable (3.9
   only), and when a static member's id is replaced. A new member's first timer is the new-member
   join timeout (5 minutes) instead of its session timeout.
3. When the timer fires, the member survives iff it is *satisfied*: not new, and a JoinGroup or
   SyncGroup of it is parked (the coordinator mutes the connection, so a waiting member cannot
   heartbeat). A satisfied expiry is ignored and leaves the member without a timer until the next
   restart (which always comes when its parked request is answered). Otherwise the member is
   removed (its parked JoinGroup answered ``UNKNOWN_MEMBER_ID`` with member id ``""``) and the group
   rebalances — or, if already rebalancing, the join phase completes when everyone left has joined
   (4.x even during the initial rebalance delay; 3.9 not then).
4. A KIP-394 pending member that does not rejoin within its session timeout is dropped, which may
   likewise complete the join phase.
"""

from __future__ import annotations

from kgc.model.classic.join import validate_member
from kgc.model.classic.rebalance import (
    remove_member_and_update,
    remove_pending_member_and_update,
    reschedule_heartbeat,
)
from kgc.model.classic.state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, evolve_member
from kgc.model.classic.txn import Txn
from kgc.model.commands import Heartbeat, HeartbeatResponse
from kgc.model.errors import (
    GROUP_ID_NOT_FOUND,
    ILLEGAL_GENERATION,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
)


def handle_heartbeat(tx: Txn, request_id: int, cmd: Heartbeat) -> None:
    instance = cmd.group_instance_id if cmd.version >= 3 else None
    if not tx.exists:
        unknown = GROUP_ID_NOT_FOUND if tx.profile.unknown_group_not_found else UNKNOWN_MEMBER_ID
        tx.respond(request_id, HeartbeatResponse(error=unknown))
        return
    error = validate_member(tx, cmd.member_id, instance)
    skip_generation = (
        tx.state == COMPLETING_REBALANCE and tx.profile.heartbeat_awaiting_sync_skips_generation
    )
    if error is None and cmd.generation_id != tx.generation_id and not skip_generation:
        error = ILLEGAL_GENERATION
    if error is not None:
        tx.respond(request_id, HeartbeatResponse(error=error))
        return
    if tx.state == PREPARING_REBALANCE:
        reschedule_heartbeat(tx, cmd.member_id)
        tx.respond(request_id, HeartbeatResponse(error=REBALANCE_IN_PROGRESS))
    elif tx.state == COMPLETING_REBALANCE and tx.profile.heartbeat_awaiting_sync_is_rebalancing:
        # before 2.6: answered without touching the member's timer
        tx.respond(request_id, HeartbeatResponse(error=REBALANCE_IN_PROGRESS))
    elif tx.state in (COMPLETING_REBALANCE, STABLE):
        reschedule_heartbeat(tx, cmd.member_id)
        tx.respond(request_id, HeartbeatResponse(error=NONE))
    else:  # Empty: unreachable (no members), kept for parity with the source
        tx.respond(request_id, HeartbeatResponse(error=UNKNOWN_MEMBER_ID))


def is_satisfied(tx: Txn, member_id: str) -> bool:
    """A member waiting in a JoinGroup or a SyncGroup is alive (``hasSatisfiedHeartbeat``); an
    implementation without ``Profile.parked_request_keeps_member_alive`` expires it all the same."""
    m = tx.members[member_id]
    if m.is_new or not tx.profile.parked_request_keeps_member_alive:
        return False
    return m.awaiting_join is not None or m.awaiting_sync is not None


def fire_member_heartbeat(tx: Txn, member_id: str) -> None:
    """Rule 3."""
    if is_satisfied(tx, member_id):
        tx.members[member_id] = evolve_member(tx.members[member_id], heartbeat_deadline_ms=None)
        return
    if not tx.profile.parked_request_keeps_member_alive:
        # its parked JoinGroup or SyncGroup goes with it, never answered
        m = tx.members[member_id]
        tx.members[member_id] = evolve_member(m, awaiting_join=None, awaiting_sync=None)
    remove_member_and_update(tx, member_id)


def fire_pending_member(tx: Txn, member_id: str) -> None:
    """Rule 4."""
    remove_pending_member_and_update(tx, member_id)
