"""LeaveGroup: per-member results, strangers, static members removed by instance id.

Rules (4.x ``GroupCoordinatorService.leaveGroup`` / ``GroupMetadataManager.classicGroupLeave`` /
``classicGroupLeaveToClassicGroup`` / ``removeCurrentMemberFromClassicGroup``; 3.9
``GroupCoordinator.handleLeaveGroup``; response shape ``LeaveGroupResponse``):

1. Before v3 the request names one member (``member_id``, no instance id) and the response has only
   a top-level error: the member's own result. From v3 every member gets a result, in request order.
2. No such group: top level ``NONE``, every member ``UNKNOWN_MEMBER_ID`` (v0-2: top level
   ``UNKNOWN_MEMBER_ID``).
3. Per member: member id ``""`` with an instance id that is a current static member -> that member
   is removed (``NONE``); ``""`` otherwise -> ``UNKNOWN_MEMBER_ID``. A KIP-394 pending member id ->
   dropped (``NONE``). Else member validation: ``FENCED_INSTANCE_ID`` / ``UNKNOWN_MEMBER_ID`` — a
   stranger's id is ``UNKNOWN_MEMBER_ID`` — or the member is removed (``NONE``), its parked
   JoinGroup answered ``UNKNOWN_MEMBER_ID`` (a parked SyncGroup is never answered).
4. After removals (a pending member's too; ``Profile.pending_leave_rebalances``):
   Stable/CompletingRebalance rebalance (or complete at once if nobody is left);
   PreparingRebalance completes the join phase if everyone left has joined — never during the
   initial rebalance delay. 3.9 does this after each removal, 4.x once after all of them.
"""

from __future__ import annotations

from kgc.model.classic.join import static_member_id, validate_member
from kgc.model.classic.rebalance import (
    complete_join_future,
    join_error,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    remove_member,
)
from kgc.model.classic.state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE
from kgc.model.classic.txn import Txn
from kgc.model.commands import (
    NO_MEMBER_ID,
    LeaveGroup,
    LeaveGroupResponse,
    MemberIdentity,
    MemberResult,
)
from kgc.model.errors import GROUP_ID_NOT_FOUND, NONE, UNKNOWN_MEMBER_ID


def _after_removal(tx: Txn) -> None:
    if tx.state in (STABLE, COMPLETING_REBALANCE):
        maybe_prepare_rebalance_or_complete_join(tx)
    elif tx.state == PREPARING_REBALANCE:
        maybe_complete_join_phase(tx)


def _leave_by_instance(tx: Txn, instance: str, named: str) -> MemberResult:
    """``Profile.leave_by_instance_only``: the member the instance maps to leaves, whatever member
    id the request names, and the answer names that member."""
    current = static_member_id(tx, instance)
    if current is None:
        return MemberResult(member_id=named, group_instance_id=instance, error=UNKNOWN_MEMBER_ID)
    if current in tx.members:
        _remove_current_member(tx, current)
    elif current in tx.pending_members:
        tx.pending_members.pop(current)
    else:
        return MemberResult(member_id=current, group_instance_id=instance, error=UNKNOWN_MEMBER_ID)
    return MemberResult(member_id=current, group_instance_id=instance, error=NONE)


def _remove_current_member(tx: Txn, member_id: str) -> None:
    complete_join_future(tx, member_id, join_error(UNKNOWN_MEMBER_ID))
    remove_member(tx, member_id)
    if tx.profile.leave_rebalances_per_member:
        _after_removal(tx)


def handle_leave_group(tx: Txn, request_id: int, cmd: LeaveGroup) -> None:
    v = cmd.version
    if not tx.exists and tx.profile.unknown_group_not_found:
        tx.respond(request_id, LeaveGroupResponse(error=GROUP_ID_NOT_FOUND))
        return
    if v < 3:
        first = cmd.members[0].member_id if cmd.members else NO_MEMBER_ID
        identities: tuple[MemberIdentity, ...] = (MemberIdentity(member_id=first),)
    else:
        identities = cmd.members
    results: list[MemberResult] = []
    if not tx.exists:
        results = [
            MemberResult(
                member_id=x.member_id,
                group_instance_id=x.group_instance_id,
                error=UNKNOWN_MEMBER_ID,
            )
            for x in identities
        ]
    else:
        any_removed = False
        for x in identities:
            error: str | None
            counts = True  # a removal that starts a rebalance (rule 4)
            if x.group_instance_id is not None and tx.profile.leave_by_instance_only:
                results.append(_leave_by_instance(tx, x.group_instance_id, x.member_id))
                any_removed = any_removed or results[-1].error == NONE
                continue
            if x.member_id == NO_MEMBER_ID:
                current = (
                    None
                    if x.group_instance_id is None
                    else static_member_id(tx, x.group_instance_id)
                )
                if current is None:
                    error = UNKNOWN_MEMBER_ID
                else:
                    _remove_current_member(tx, current)
                    error = None
            elif x.member_id in tx.pending_members:
                tx.pending_members.pop(x.member_id)
                if tx.profile.leave_rebalances_per_member and tx.state == PREPARING_REBALANCE:
                    maybe_complete_join_phase(tx)
                error = None
                # ``Profile.pending_leave_rebalances``: off, a pending member's leave only drops it
                counts = tx.profile.pending_leave_rebalances
            else:
                error = validate_member(tx, x.member_id, x.group_instance_id)
                if error is None:
                    _remove_current_member(tx, x.member_id)
            if error is None and counts:
                any_removed = True
            results.append(
                MemberResult(
                    member_id=x.member_id,
                    group_instance_id=x.group_instance_id,
                    error=error or NONE,
                )
            )
        if any_removed and not tx.profile.leave_rebalances_per_member:
            _after_removal(tx)
    if v < 3:
        tx.respond(request_id, LeaveGroupResponse(error=results[0].error))
    else:
        tx.respond(request_id, LeaveGroupResponse(error=NONE, members=tuple(results)))
