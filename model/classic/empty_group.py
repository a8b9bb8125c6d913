"""A group request that names the empty group id (``""``) instead of the run's own.

Kafka keeps the empty id for the old offset APIs only: OffsetCommit, OffsetFetch, DescribeGroups
and DeleteGroups treat ``""`` as a group like any other ("for backwards compatibility"); every
request that takes part in group membership refuses it before it looks at any group. The model
holds one group, the run's own; only the requests that refuse ``""`` are sent with it (the suite
touches no group without its prefix).

Rules:

1. JoinGroup, SyncGroup, Heartbeat and LeaveGroup naming ``""`` are answered ``INVALID_GROUP_ID``,
   and nothing else happens: no group is created or looked at, no heartbeat is rescheduled, no
   join phase moves. The JoinGroup answer names the request's member id (generation -1, no
   protocol, no leader, no members), as every JoinGroup error before the group is read does; a
   LeaveGroup answer carries the error at the top, with no member results.
   Sources: 4.3.1 ``GroupCoordinatorService.joinGroup`` / ``syncGroup`` / ``heartbeat`` /
   ``leaveGroup`` (``isGroupIdNotEmpty``, checked right after ``isActive`` and before the
   request is routed to a coordinator shard: before the session timeout, before
   ``NOT_COORDINATOR``); 2.4.1 - 3.9.2 ``GroupCoordinator.validateGroupStatus`` →
   ``isValidGroupId`` (checked first of all, then ``isActive``, loading, ownership).
2. A SyncGroup v5+ without its protocol type or name is refused before that:
   ``INCONSISTENT_GROUP_PROTOCOL`` (``KafkaApis.handleSyncGroupRequest`` checks it before it calls
   the coordinator; ``sync.py`` rule 1).
3. Before 2.4 (``Profile.empty_group_id_checked_by_join_only``) only JoinGroup checks the id
   (1.0.2 and 1.1.1 ``GroupCoordinator.handleJoinGroup`` calls ``validGroupId``;
   ``handleSyncGroup``, ``handleHeartbeat`` and ``handleLeaveGroup`` do not): the other three look
   the group ``""`` up, and one that does not exist answers as a missing group does
   (``UNKNOWN_MEMBER_ID``; ``GROUP_ID_NOT_FOUND`` with ``Profile.unknown_group_not_found``, as
   kfake, which checks the id only in JoinGroup too). The search does not send those three to
   such a line (they would read a group without the suite's prefix: ``properties/machine.py``,
   the ``empty-group-*`` misuses, ``GroupMachine._empty_group_command``); the switch is shown on
   the 1.1.1 and 2.4.1 brokers by ``tests/lines/test_release_line_switches.py``, where no group
   ``""`` exists.
"""

from __future__ import annotations

from kgc.model.classic.rebalance import join_error
from kgc.model.classic.txn import Txn, as_answered
from kgc.model.commands import (
    HeartbeatResponse,
    JoinGroup,
    LeaveGroup,
    LeaveGroupResponse,
    MemberResult,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.errors import (
    GROUP_ID_NOT_FOUND,
    INCONSISTENT_GROUP_PROTOCOL,
    INVALID_GROUP_ID,
    NONE,
    UNKNOWN_MEMBER_ID,
)
from kgc.model.profiles import Profile


def names_empty_group(command: Request) -> bool:
    """Whether ``command`` is sent with the group id ``""``."""
    return bool(getattr(command, "empty_group_id", False))


def empty_group_answer_for(profile: Profile, command: Request) -> Response:
    """The answer of a line with ``profile`` to ``command`` sent with the group id ``""``
    (rules 1-3), as that line writes it."""
    if (
        isinstance(command, SyncGroup)
        and command.version >= 5
        and (command.protocol_type is None or command.protocol_name is None)
        and profile.sync_requires_protocol
    ):
        return SyncGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL)  # rule 2
    if isinstance(command, JoinGroup):
        named = command.member_id if profile.join_error_names_member else ""
        return as_answered(profile, join_error(INVALID_GROUP_ID, named))
    if not profile.empty_group_id_checked_by_join_only:
        error = INVALID_GROUP_ID
    elif profile.unknown_group_not_found:  # rule 3, an implementation's way with a missing group
        error = GROUP_ID_NOT_FOUND
    else:  # rule 3
        error = UNKNOWN_MEMBER_ID
        if isinstance(command, LeaveGroup) and command.version >= 3:  # as ``leave.py`` answers
            return LeaveGroupResponse(
                error=NONE,
                members=tuple(
                    MemberResult(
                        member_id=x.member_id, group_instance_id=x.group_instance_id, error=error
                    )
                    for x in command.members
                ),
            )
    if isinstance(command, SyncGroup):
        return SyncGroupResponse(error=error)
    if isinstance(command, LeaveGroup):
        return LeaveGroupResponse(error=error)
    if command.type == "Heartbeat":
        return HeartbeatResponse(error=error)
    raise ValueError(f"{command.type} is not sent with the empty group id")


def handle_empty_group(tx: Txn, request_id: int, command: Request) -> None:
    tx.respond(request_id, empty_group_answer_for(tx.profile, command))
