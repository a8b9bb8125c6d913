"""JoinGroup: validation order, member ids, the KIP-394 handshake and static membership (KIP-345).

Rules, in the order the coordinator applies them (4.x ``GroupCoordinatorService.joinGroup`` then
``GroupMetadataManager.classicGroupJoinToClassicGroup`` / ``classicGroupJoinNewMember`` /
``classicGroupJoinExistingMember`` / ``updateStaticMemberThenRebalanceOrCompleteJoin``; 3.9
``GroupCoordinator.handleJoinGroup`` / ``doNewMemberJoinGroup`` / ``doCurrentMemberJoinGroup`` /
``updateStaticMemberAndRebalance``):

1. ``INVALID_SESSION_TIMEOUT`` unless ``group.min.session.timeout.ms <= session_timeout_ms <=
   group.max.session.timeout.ms`` (checked before anything else; the group is not created).
   JoinGroup v0 has no rebalance timeout: the session timeout is used (``JoinGroupRequest``).
2. A JoinGroup with a member id to a group that does not exist: ``UNKNOWN_MEMBER_ID``. With the
   empty member id the group is created (Empty, generation 0) — and stays even if the join fails.
3. ``GROUP_MAX_SIZE_REACHED`` (member id ``""``) unless the group accepts the member: Empty always;
   PreparingRebalance if the member is already waiting in the join phase or fewer than
   ``group.max.size`` members are waiting; CompletingRebalance/Stable if it is a member or the group
   is smaller than the limit. A rejected id is removed from the group. Before 2.6
   (``Profile.max_size_limits_unknown_members_only``, KAFKA-9885) the state does not matter: a new
   member (empty id) is refused when the group has ``group.max.size`` members, a member not
   awaiting join when the group is over the limit, a pending member never. In 2.3 - 2.7
   (``Profile.max_size_refusal_forgets_instance``) a refused JoinGroup also drops its instance
   id's mapping (``group.removeStaticMember(groupInstanceId)``): a static member restarting into a
   full group stays a member, but its instance id no longer names it (``static_member_id``).
4. ``INCONSISTENT_GROUP_PROTOCOL`` unless the protocols can be supported: an Empty group needs a
   non-empty protocol type and at least one protocol; otherwise the type must equal the group's and
   one of the protocols must be supported by *every current* member (the joining member's own
   current protocols included).
5. New member (empty member id): a member id is generated (``cK-n`` for client ``cK``). Static
   (``group_instance_id``, v5+): if the instance is known, the old member is *replaced* by the new
   id — its parked JoinGroup/SyncGroup, if any, is answered ``FENCED_INSTANCE_ID``; in Stable, when
   the protocol selected for the next generation would not change, no rebalance happens and the
   joiner gets the current generation at once (v9+: the leader learns it leads and gets the member
   list with ``skip_assignment``; before v9 the answer names the *previous* leader id); otherwise
   the group rebalances. Dynamic with v4+ (KIP-394): the id becomes a *pending member* expiring
   after the session timeout, answered ``MEMBER_ID_REQUIRED`` with the id. Otherwise the member is
   added (``is_new``: its JoinGroup may stay parked at most ``new_member_join_timeout_ms``) and
   the group rebalances or the join phase may complete.
6. Existing member id: a pending member rejoining is added as in 5. Otherwise
   ``FENCED_INSTANCE_ID`` if the instance id maps to another member id, ``UNKNOWN_MEMBER_ID`` if it
   maps to none or the member id is unknown. PreparingRebalance: the member's JoinGroup is parked
   (its metadata updated). CompletingRebalance: same metadata -> the current generation's answer at
   once (members listed if it is the leader); changed metadata -> rebalance. Stable: the leader's
   JoinGroup, or a changed metadata, rebalances; a follower with unchanged metadata gets the current
   generation at once. Empty: ``UNKNOWN_MEMBER_ID``.
7. A second JoinGroup for a member already parked replaces the parked request, which is never
   answered (both versions overwrite the callback/future).
"""

from __future__ import annotations

from dataclasses import replace

from kgc.model.classic.rebalance import (
    answered_protocol_type,
    complete_join_future,
    complete_sync_future,
    join_error,
    leader_member_list,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    prepare_rebalance,
    remove_member,
    reschedule_heartbeat,
    select_protocol,
)
from kgc.model.classic.state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    Member,
    evolve_member,
)
from kgc.model.classic.txn import Txn
from kgc.model.commands import (
    NO_MEMBER_ID,
    JoinedMember,
    JoinGroup,
    JoinGroupResponse,
    SyncGroupResponse,
    client_id_of,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    GROUP_MAX_SIZE_REACHED,
    INCONSISTENT_GROUP_PROTOCOL,
    INVALID_SESSION_TIMEOUT,
    MEMBER_ID_REQUIRED,
    NONE,
    UNKNOWN_MEMBER_ID,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_VERSION,
)


def supports_protocols(tx: Txn, protocol_type: str, names: set[str]) -> bool:
    if tx.state == EMPTY:
        return protocol_type != "" and bool(names)
    if tx.protocol_type != protocol_type:
        return False
    n = len(tx.members)
    support: dict[str, int] = {}
    for m in tx.members.values():
        for p in m.protocols:
            support[p.name] = support.get(p.name, 0) + 1
    return any(support.get(name, 0) == n for name in names)


def accept_joining_member(tx: Txn, member_id: str) -> bool:
    """Rule 3: does ``group.max.size`` let this JoinGroup in? 2.6+ ``acceptJoiningMember`` (4.x
    ``GroupMetadataManager.acceptJoiningMember``); before 2.6 the size-only rule below."""
    max_size = tx.config.group_max_size
    if tx.profile.max_size_limits_unknown_members_only:
        return _accepted_before_kafka_9885(tx, member_id, max_size)
    if tx.state == EMPTY:
        return True
    if tx.state == PREPARING_REBALANCE:
        m = tx.members.get(member_id)
        if m is not None and m.awaiting_join is not None:
            return True
        waiting = sum(1 for x in tx.members.values() if x.awaiting_join is not None)
        return waiting < max_size
    return member_id in tx.members or len(tx.members) < max_size


def _accepted_before_kafka_9885(tx: Txn, member_id: str, max_size: int) -> bool:
    """2.2 - 2.5 ``GroupCoordinator.handleJoinGroup`` (2.5.1 l.161-163), in every state: refused
    only if the member id is empty and the group has ``group.max.size`` members or more (KIP-394
    pending members are not counted), or if the group is over the limit and the joiner is a member
    not awaiting join (``groupIsOverCapacity``, shedding the members that did not rejoin). A
    pending member's rejoin is never refused, so the group can grow past the limit. KAFKA-9885
    (2.6.0) replaced it with ``acceptJoiningMember``."""
    size = len(tx.members)
    if member_id == NO_MEMBER_ID:
        return size < max_size
    m = tx.members.get(member_id)
    return not (size > max_size and m is not None and m.awaiting_join is None)


def static_member_id(tx: Txn, group_instance_id: str) -> str | None:
    """``GroupMetadata.getStaticMemberId`` / ``ClassicGroup.staticMemberId``: the member the
    instance id maps to (not one whose mapping a refused join dropped, rule 3)."""
    for m in tx.members.values():
        if m.group_instance_id == group_instance_id and m.in_static_members:
            return m.member_id
    return None


def forget_static_member(tx: Txn, group_instance_id: str) -> None:
    """``GroupMetadata.removeStaticMember``: drop the instance id's mapping, whichever member
    holds it; the member itself stays unless it is removed too."""
    holder = static_member_id(tx, group_instance_id)
    if holder is not None:
        tx.members[holder] = evolve_member(tx.members[holder], in_static_members=False)


def validate_member(
    tx: Txn, member_id: str, group_instance_id: str | None, *, joining: bool = False
) -> str | None:
    """``ClassicGroup.validateMember`` / ``validateCurrentMember``: the error, or None. Before
    3.0 (``Profile.unknown_instance_id_rejected``) only a JoinGroup refuses an instance id that is
    not registered; the other requests ignore it. ``Profile.instance_id_fenced`` off: only a
    JoinGroup looks at the instance id."""
    if group_instance_id is not None and (joining or tx.profile.instance_id_fenced):
        current = static_member_id(tx, group_instance_id)
        if current is None and (joining or tx.profile.unknown_instance_id_rejected):
            return UNKNOWN_MEMBER_ID
        if current is None:
            current = member_id
        if current != member_id:
            return FENCED_INSTANCE_ID
    if member_id not in tx.members:
        return UNKNOWN_MEMBER_ID
    return None


def _named(tx: Txn, member_id: str) -> str:
    """The member id an error answer names: the request's (Kafka), or none where an
    implementation's profile says so (``Profile.join_error_names_member``)."""
    return member_id if tx.profile.join_error_names_member else ""


def handle_join_group(tx: Txn, request_id: int, cmd: JoinGroup) -> None:
    v = cmd.version
    instance = cmd.group_instance_id if v >= 5 else None
    rebalance_timeout = cmd.rebalance_timeout_ms
    if v == 0:  # v0 has none: the session timeout (``Profile`` field of that name)
        session = tx.profile.v0_join_rebalance_timeout_is_session
        rebalance_timeout = cmd.session_timeout_ms if session else 0
    cfg = tx.config
    if (
        not cfg.group_min_session_timeout_ms
        <= cmd.session_timeout_ms
        <= cfg.group_max_session_timeout_ms
    ):
        tx.respond(request_id, join_error(INVALID_SESSION_TIMEOUT, _named(tx, cmd.member_id)))
        return
    is_unknown = cmd.member_id == NO_MEMBER_ID
    created = not tx.exists
    if not tx.exists:
        if not is_unknown:
            tx.respond(request_id, join_error(UNKNOWN_MEMBER_ID, _named(tx, cmd.member_id)))
            return
        tx.exists = True  # created Empty at generation 0
        if not tx.profile.new_group_at_generation_0:
            tx.generation_id = 1  # ``Profile.new_group_at_generation_0``
        # 4.x writes it Empty and answers before that record is committed (``describe.py`` 3)
        tx.unconfirmed = tx.profile.new_group_writes_empty_record
    names = {p.name for p in cmd.protocols}
    if (
        tx.profile.any_join_sets_protocol_type
        and tx.protocol_type is None
        and supports_protocols(tx, cmd.protocol_type, names)
    ):
        tx.protocol_type = cmd.protocol_type  # ``Profile.any_join_sets_protocol_type``
    if not accept_joining_member(tx, cmd.member_id):
        remove_member(tx, cmd.member_id)
        if instance is not None and tx.profile.max_size_refusal_forgets_instance:
            forget_static_member(tx, instance)
        tx.respond(request_id, join_error(GROUP_MAX_SIZE_REACHED))
        if tx.profile.max_size_rejection_checks_join:
            maybe_complete_join_phase(tx)
        return
    if not supports_protocols(tx, cmd.protocol_type, names):
        tx.respond(request_id, join_error(INCONSISTENT_GROUP_PROTOCOL, _named(tx, cmd.member_id)))
        if created and not tx.profile.failed_join_keeps_new_group:
            tx.exists = False  # ``Profile.failed_join_keeps_new_group``
            tx.unconfirmed = False
        return
    if is_unknown:
        _join_new_member(tx, request_id, cmd, instance, rebalance_timeout)
    else:
        _join_existing_member(tx, request_id, cmd, instance, rebalance_timeout)


def _join_new_member(
    tx: Txn, request_id: int, cmd: JoinGroup, instance: str | None, rebalance_timeout: int
) -> None:
    new_id = tx.issue_member_id(cmd.client)
    if instance is not None:
        existing = static_member_id(tx, instance)
        if existing is not None:
            _replace_static_member(tx, request_id, cmd, existing, new_id, rebalance_timeout)
        else:
            _add_member(tx, request_id, cmd, new_id, instance, rebalance_timeout)
        return
    # KIP-394: JoinGroupRequest.requiresKnownMemberId (``Profile.member_id_required_from_v4``)
    handshake = cmd.version >= 4 or not tx.profile.member_id_required_from_v4
    if handshake and tx.profile.member_id_required_handshake:
        tx.pending_members[new_id] = tx.now_ms + cmd.session_timeout_ms
        tx.revealed(new_id)
        tx.respond(request_id, _member_id_required(tx, cmd, new_id))
        return
    _add_member(tx, request_id, cmd, new_id, None, rebalance_timeout)


def _member_id_required(tx: Txn, cmd: JoinGroup, new_id: str) -> JoinGroupResponse:
    """The KIP-394 answer: the new id alone (Kafka), or at v7+ with the request's protocol type
    and an empty protocol name where an implementation's profile says so
    (``Profile.member_id_required_names_protocol``)."""
    if tx.profile.member_id_required_names_protocol and cmd.version >= 7:
        return JoinGroupResponse(
            error=MEMBER_ID_REQUIRED,
            member_id=new_id,
            protocol_type=cmd.protocol_type,
            protocol_name="",
        )
    return JoinGroupResponse(error=MEMBER_ID_REQUIRED, member_id=new_id)


def _add_member(
    tx: Txn,
    request_id: int,
    cmd: JoinGroup,
    member_id: str,
    instance: str | None,
    rebalance_timeout: int,
) -> None:
    """``addMemberThenRebalanceOrCompleteJoin`` / ``addMemberAndRebalance``."""
    initial = (
        tx.state == PREPARING_REBALANCE and tx.join_timer is not None and tx.join_timer.initial
    )
    # 3.9's ``generationId == 0``: no join phase completed yet (a group made at generation 1
    # under ``Profile.new_group_at_generation_0`` off has completed none at 1)
    first = tx.generation_id == (0 if tx.profile.new_group_at_generation_0 else 1)
    if initial and (not tx.profile.new_member_added_only_in_generation_0 or first):
        tx.new_member_added = True
    if not tx.members:
        tx.protocol_type = cmd.protocol_type
    if not tx.leader and tx.profile.join_leader_elected_once:
        tx.leader = (member_id,)
    tx.pending_members.pop(member_id, None)
    tx.members[member_id] = Member(
        member_id=member_id,
        group_instance_id=instance,
        session_timeout_ms=cmd.session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout,
        protocol_type=cmd.protocol_type,
        protocols=cmd.protocols,
        is_new=True,
        awaiting_join=request_id,
        awaiting_join_version=cmd.version,
        client_id=client_id_of(cmd.client),
    )
    reschedule_heartbeat(tx, member_id, tx.config.new_member_join_timeout_ms)
    maybe_prepare_rebalance_or_complete_join(tx)


def _update_member(
    tx: Txn, request_id: int, cmd: JoinGroup, member_id: str, rebalance_timeout: int
) -> None:
    """``ClassicGroup.updateMember`` with a parked request (a previous parked one is dropped)."""
    m = tx.members[member_id]
    keep = not tx.profile.rejoin_updates_timeouts  # before 3.3: the first join's timeouts stay
    tx.members[member_id] = evolve_member(
        m,
        protocols=cmd.protocols,
        rebalance_timeout_ms=m.rebalance_timeout_ms if keep else rebalance_timeout,
        session_timeout_ms=m.session_timeout_ms if keep else cmd.session_timeout_ms,
        awaiting_join=request_id,
        awaiting_join_version=cmd.version,
    )


def _current_generation_answer(
    tx: Txn, member_id: str, version: int, as_leader_list: bool
) -> JoinGroupResponse:
    leader = tx.leader[0] if len(tx.leader) == 1 else ""
    listed: tuple[JoinedMember, ...] = ()
    if as_leader_list:
        written = leader_member_list(tx, version)
        if written is None:
            return JoinGroupResponse(error=UNSUPPORTED_VERSION)
        listed = written
    return JoinGroupResponse(
        error=NONE,
        generation_id=tx.generation_id,
        protocol_type=answered_protocol_type(tx, version),
        protocol_name=tx.protocol_name,
        leader=leader,
        member_id=member_id,
        members=listed,
    )


def _join_existing_member(
    tx: Txn, request_id: int, cmd: JoinGroup, instance: str | None, rebalance_timeout: int
) -> None:
    mid = cmd.member_id
    if mid in tx.pending_members:
        # A pending member cannot be static: Kafka throws IllegalStateException -> server error.
        if instance is not None:
            tx.respond(request_id, join_error(UNKNOWN_SERVER_ERROR))
            return
        _add_member(tx, request_id, cmd, mid, None, rebalance_timeout)
        return
    error = validate_member(tx, mid, instance, joining=True)
    if error is not None:
        tx.respond(request_id, join_error(error, _named(tx, mid)))
        return
    m = tx.members[mid]
    if tx.state == PREPARING_REBALANCE:
        _update_member(tx, request_id, cmd, mid, rebalance_timeout)
        maybe_prepare_rebalance_or_complete_join(tx)
    elif tx.state == COMPLETING_REBALANCE:
        if m.protocols == cmd.protocols:
            is_leader = tx.leader == (mid,)
            tx.revealed(mid)
            tx.respond(request_id, _current_generation_answer(tx, mid, cmd.version, is_leader))
        else:
            _update_member(tx, request_id, cmd, mid, rebalance_timeout)
            maybe_prepare_rebalance_or_complete_join(tx)
    elif tx.state == STABLE:
        if tx.leader == (mid,) or m.protocols != cmd.protocols:
            _update_member(tx, request_id, cmd, mid, rebalance_timeout)
            maybe_prepare_rebalance_or_complete_join(tx)
        else:
            tx.revealed(mid)
            tx.respond(request_id, _current_generation_answer(tx, mid, cmd.version, False))
    else:  # Empty (Dead is not modelled)
        tx.respond(request_id, join_error(UNKNOWN_MEMBER_ID, _named(tx, mid)))


def _replace_static_member(
    tx: Txn, request_id: int, cmd: JoinGroup, old_id: str, new_id: str, rebalance_timeout: int
) -> None:
    """``updateStaticMemberThenRebalanceOrCompleteJoin`` / ``updateStaticMemberAndRebalance``."""
    current_leader = tx.leader[0] if len(tx.leader) == 1 else ""
    # replaceStaticMember: fence whoever waits with the old id, move the member to the new id.
    complete_join_future(tx, old_id, JoinGroupResponse(error=FENCED_INSTANCE_ID, member_id=old_id))
    complete_sync_future(tx, old_id, SyncGroupResponse(error=FENCED_INSTANCE_ID))
    old = tx.members.pop(old_id)
    tx.members[new_id] = evolve_member(old, member_id=new_id)
    renamed = tuple(sorted(new_id if c == old_id else c for c in tx.leader))
    if old_id in tx.leader and tx.profile.join_leader_elected_once:
        tx.leader = renamed
    # The pending-sync set keeps the *old* id (neither version renames it): if the member had not
    # synced yet, the sync deadline later finds it "missing" and the group rebalances.
    # New heartbeat for the new id, with the member's previous session timeout.
    reschedule_heartbeat(tx, new_id)
    _update_member(tx, request_id, cmd, new_id, rebalance_timeout)
    profile = tx.profile
    at_once = (
        tx.state == STABLE
        and (not profile.static_rejoin_checks_protocol or tx.protocol_name == select_protocol(tx))
    ) or (tx.state == COMPLETING_REBALANCE and profile.static_rejoin_answered_in_completing)
    if not profile.join_leader_elected_once and tx.state == STABLE and at_once:
        # kfake's ``replaceStaticMember`` moves the lead to the new id on this path only: one that
        # rebalances leaves the old id named, gone at the completion (``complete_join``)
        tx.leader = renamed
    if tx.state in (STABLE, COMPLETING_REBALANCE):
        if at_once:
            # No rebalance: persist, then answer with the current generation.
            version = cmd.version
            m = tx.members[new_id]
            is_leader = tx.leader == (new_id,)
            # KIP-814 (v9+): the leader is told to skip the assignment; an implementation may
            # answer so at every version (``Profile.static_rejoin_old_leader_below_v9``)
            if version >= 9 or not profile.static_rejoin_old_leader_below_v9:
                answer = replace(
                    _current_generation_answer(tx, new_id, version, is_leader),
                    skip_assignment=is_leader and version >= 9,
                )
            else:
                answer = replace(
                    _current_generation_answer(tx, new_id, version, False), leader=current_leader
                )
            tx.members[new_id] = evolve_member(m, awaiting_join=None)
            tx.revealed(new_id)
            tx.respond(request_id, answer)
        elif tx.state == STABLE:
            maybe_prepare_rebalance_or_complete_join(tx)
        else:
            prepare_rebalance(tx)
    else:  # PreparingRebalance
        maybe_complete_join_phase(tx)
