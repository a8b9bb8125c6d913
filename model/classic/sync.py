"""SyncGroup: who gets an assignment, when, and the errors by state, in precedence order.

Rules (4.x ``KafkaApis.handleSyncGroupRequest`` then ``GroupMetadataManager.classicGroupSync`` /
``classicGroupSyncToClassicGroup`` / ``validateSyncGroup``; 3.9 ``KafkaApis`` then
``GroupCoordinator.handleSyncGroup`` / ``validateSyncGroup`` / ``doSyncGroup``):

1. v5+ must name both ``protocol_type`` and ``protocol_name``, else ``INCONSISTENT_GROUP_PROTOCOL``
   (``SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent``), before anything else.
2. No such group, or an Empty group: ``UNKNOWN_MEMBER_ID``.
3. Member validation: ``FENCED_INSTANCE_ID`` (instance id mapped to another member id),
   ``UNKNOWN_MEMBER_ID`` (instance id or member id unknown — a KIP-394 pending member is not a
   member yet); then ``ILLEGAL_GENERATION`` if the generation differs; then
   ``INCONSISTENT_GROUP_PROTOCOL`` if a given protocol type/name differs from the group's (3.9 also
   when the group has no protocol selected yet; 4.x ignores a missing group protocol).
4. PreparingRebalance: ``REBALANCE_IN_PROGRESS``.
5. CompletingRebalance: the request is parked (replacing a parked one, never answered) and the
   member no longer owes a SyncGroup. If it is the leader's, its assignments are stored and every
   parked SyncGroup is answered (rule 4 of ``rebalance.py``); the group becomes Stable. Followers
   wait for the leader.
6. Stable: answered at once with the member's assignment; the member no longer owes a SyncGroup.
   3.9 also restarts the member's session timer here; 4.x does not.
7. Parked SyncGroups are answered ``REBALANCE_IN_PROGRESS`` if a rebalance starts first, or
   ``FENCED_INSTANCE_ID`` if a static member's id is replaced.
8. A ``NONE`` answer v5+ names the group's protocol type and name (KIP-559,
   ``rebalance.sync_answer_protocol``); an error answer names neither (null), as does any answer
   below v5, which has no such fields.
"""

from __future__ import annotations

from kgc.model.classic.join import validate_member
from kgc.model.classic.rebalance import (
    reschedule_heartbeat,
    set_and_propagate_assignment,
    sync_answer_protocol,
)
from kgc.model.classic.state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    evolve_member,
)
from kgc.model.classic.txn import Txn
from kgc.model.commands import SyncGroup, SyncGroupResponse
from kgc.model.errors import (
    GROUP_ID_NOT_FOUND,
    ILLEGAL_GENERATION,
    INCONSISTENT_GROUP_PROTOCOL,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
)


def _inconsistent(tx: Txn, requested: str | None, current: str | None) -> bool:
    if requested is None:
        return False
    if current is None:
        return tx.profile.sync_protocol_check_without_group_protocol
    return requested != current


def remove_pending_sync_member(tx: Txn, member_id: str) -> None:
    """The member sent its SyncGroup; once nobody owes one the sync deadline is cancelled."""
    tx.pending_sync.discard(member_id)
    if not tx.pending_sync:
        tx.sync_timer = None


def handle_sync_group(tx: Txn, request_id: int, cmd: SyncGroup) -> None:
    v = cmd.version
    instance = cmd.group_instance_id if v >= 3 else None
    ptype = cmd.protocol_type if v >= 5 else None
    pname = cmd.protocol_name if v >= 5 else None
    if not tx.exists and tx.profile.unknown_group_not_found:
        tx.respond(request_id, SyncGroupResponse(error=GROUP_ID_NOT_FOUND))
        return
    if v >= 5 and (ptype is None or pname is None) and tx.profile.sync_requires_protocol:
        tx.respond(request_id, SyncGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL))
        return
    if not tx.exists or tx.state == EMPTY:
        tx.respond(request_id, SyncGroupResponse(error=UNKNOWN_MEMBER_ID))
        return
    mid = cmd.member_id
    error = validate_member(tx, mid, instance)
    if error is None and cmd.generation_id != tx.generation_id:
        error = ILLEGAL_GENERATION
    if error is None and (
        _inconsistent(tx, ptype, tx.protocol_type) or _inconsistent(tx, pname, tx.protocol_name)
    ):
        error = INCONSISTENT_GROUP_PROTOCOL
    if error is not None:
        tx.respond(request_id, SyncGroupResponse(error=error))
        return
    if tx.state == PREPARING_REBALANCE:
        tx.respond(request_id, SyncGroupResponse(error=REBALANCE_IN_PROGRESS))
    elif tx.state == COMPLETING_REBALANCE:
        tx.members[mid] = evolve_member(
            tx.members[mid], awaiting_sync=request_id, awaiting_sync_version=v
        )
        remove_pending_sync_member(tx, mid)
        if tx.leader == (mid,):
            assignment: dict[str, str] = {}
            for a in cmd.assignments:  # a repeated member id: the last entry wins
                assignment[a.member_id] = a.assignment
            set_and_propagate_assignment(tx, assignment)
            tx.state = STABLE
    elif tx.state == STABLE:
        remove_pending_sync_member(tx, mid)
        ptype_answered, pname_answered = sync_answer_protocol(tx, v)
        tx.respond(
            request_id,
            SyncGroupResponse(
                error=NONE,
                protocol_type=ptype_answered,
                protocol_name=pname_answered,
                assignment=tx.members[mid].assignment,
            ),
        )
        if tx.profile.sync_in_stable_reschedules_heartbeat:
            reschedule_heartbeat(tx, mid)
