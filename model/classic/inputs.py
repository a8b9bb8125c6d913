"""Input cells: what a request names, relative to the group it is sent to, in the classes that
change Kafka's answer.

A state cell (``engine/coverage.py``) says which group state a request met and which error it got;
it does not say what the request *said*. An input cell is (request type, version, field class):
the field class names what the request's fields are to the group when it is sent — a member id
the group knows, a stale generation, a ``group.instance.id`` another member holds — in the
classes Kafka's validation tells apart (each request's classes below, in the order Kafka checks,
with the method that checks). The group's state is the state cells' dimension and is not repeated
here; where the group itself decides (DescribeGroups of a missing group, a simple commit to a group
with members), the class says so.

Fields are read as the request's version carries them (``client_view.INSTANCE_ID_SINCE``,
``SYNC_PROTOCOL_SINCE``): a ``group.instance.id`` below its first version is not sent, so it
classes nothing. Which classes a version can carry at all, and which the suite's versions can
reach, is ``engine/coverage.py``'s (``input_universe``, ``input_excluded``).

Sources: Kafka 4.3.1 ``GroupMetadataManager`` (``GMM``), ``ClassicGroup`` (``CG``),
``OffsetMetadataManager`` (``OMM``); 3.9.2 ``GroupCoordinator.scala`` (``GC``).

* JoinGroup (``GMM.classicGroupJoinToClassicGroup`` / ``GC.handleJoinGroup``): an empty member id
  is a new member — dynamic (added at once below v4, asked for its id from v4:
  ``JoinGroupRequest.requiresKnownMemberId``), static with an instance id no member holds, or a
  static member restarting (``CG.replaceStaticMember``); a member id is an existing member, a
  pending one (KIP-394, ``CG.isPendingMember``), one fenced by its instance id
  (``CG.validateMember``), or unknown.
* SyncGroup, Heartbeat, OffsetCommit with a generation (``CG.validateMember`` then the generation:
  ``GMM.validateSyncGroup``, ``classicGroupHeartbeatToClassicGroup``, ``CG.validateOffsetCommit`` /
  ``GC.validateCurrentMember``): fenced instance, unknown member id, or a member at the current
  or at another generation. SyncGroup v5+ without a protocol is refused first
  (``KafkaApis.handleSyncGroupRequest``), one naming another protocol after the generation
  (``GMM.isProtocolInconsistent``). OffsetCommit with generation -1 and no member is a simple
  commit (``OMM.validateOffsetCommit``): accepted by a group without members, refused by one with
  members; with a generation to a missing group it is refused (ILLEGAL_GENERATION, v9+ on 4.x
  GROUP_ID_NOT_FOUND); a member's commit with metadata over ``offset.metadata.max.bytes`` fails
  per partition (``OMM.commitOffset``).
* LeaveGroup (``GMM.classicGroupLeaveToClassicGroup`` / ``GC.handleLeaveGroup``): by instance id
  alone (v3+), a fenced instance, a pending member, a member, or an unknown member id.
* OffsetFetch (``OMM.fetchOffsets`` / ``GroupMetadataManager.scala getOffsets``): something
  committed for a partition asked, or nothing.
* DescribeGroups (``GMM.describeGroups`` / ``GC.handleDescribeGroup``): a missing group (Dead, or
  v6 GROUP_ID_NOT_FOUND on 4.x), one without members, with members, with a static member (whose
  instance id v4+ show).
* JoinGroup, SyncGroup, Heartbeat, LeaveGroup: the empty group id, refused before any group is
  read (``empty_group.py``; after SyncGroup's missing protocol, ``KafkaApis``).
* FindCoordinator: the group's own key (v0-3 one key, v4+ a batch of one).
* ListGroups, DeleteGroups, OffsetDelete (opt-in): the filters sent (v4+ states, v5+ types); a
  missing group, one with members, one without members with or without offsets
  (``CG.validateDeleteGroup``, ``OMM.deleteOffsets``).
"""

from __future__ import annotations

from typing import Any, Final

from kgc.model.classic.state import GroupState
from kgc.model.client_view import (
    INSTANCE_ID_SINCE,
    LIST_STATES_SINCE,
    LIST_TYPES_SINCE,
    SYNC_PROTOCOL_SINCE,
)
from kgc.model.commands import NO_MEMBER_ID

NEW_MEMBER = "new member"
NEW_STATIC_MEMBER = "new static member"
STATIC_RESTART = "static member restarting"
PENDING_MEMBER = "pending member"
MEMBER = "member"
UNKNOWN_MEMBER = "unknown member id"
FENCED_INSTANCE = "fenced instance"
CURRENT = "member, current generation"
OTHER_GENERATION = "member, other generation"
NO_PROTOCOL = "no protocol named"
OTHER_PROTOCOL = "member, other protocol named"
SIMPLE_NO_MEMBERS = "simple commit, group without members"
SIMPLE_WITH_MEMBERS = "simple commit, group with members"
NO_GROUP = "no group"
OVERSIZED = "member, current generation, oversized metadata"
BY_INSTANCE = "by instance id"
COMMITTED = "offset committed"
NOTHING_COMMITTED = "nothing committed"
NO_MEMBERS = "group without members"
WITH_MEMBERS = "group with members"
WITH_STATIC = "group with a static member"
OWN_KEY = "the group's key"
NO_FILTER = "no filter"
STATES_FILTER = "states filter"
TYPES_FILTER = "types filter"
BOTH_FILTERS = "states and types filters"
NO_MEMBERS_OFFSETS = "group without members, with offsets"
NO_MEMBERS_NO_OFFSETS = "group without members, no offsets"
EMPTY_GROUP = "empty group id"

#: Each request type's field classes (module docstring), in the order Kafka checks them.
INPUT_CLASSES: Final[dict[str, tuple[str, ...]]] = {
    "JoinGroup": (
        EMPTY_GROUP,
        NEW_MEMBER,
        NEW_STATIC_MEMBER,
        STATIC_RESTART,
        FENCED_INSTANCE,
        PENDING_MEMBER,
        MEMBER,
        UNKNOWN_MEMBER,
    ),
    "SyncGroup": (
        NO_PROTOCOL,
        EMPTY_GROUP,
        FENCED_INSTANCE,
        UNKNOWN_MEMBER,
        OTHER_GENERATION,
        OTHER_PROTOCOL,
        CURRENT,
    ),
    "Heartbeat": (EMPTY_GROUP, FENCED_INSTANCE, UNKNOWN_MEMBER, OTHER_GENERATION, CURRENT),
    "LeaveGroup": (
        EMPTY_GROUP,
        BY_INSTANCE,
        FENCED_INSTANCE,
        PENDING_MEMBER,
        MEMBER,
        UNKNOWN_MEMBER,
    ),
    "OffsetCommit": (
        SIMPLE_NO_MEMBERS,
        SIMPLE_WITH_MEMBERS,
        NO_GROUP,
        FENCED_INSTANCE,
        UNKNOWN_MEMBER,
        OTHER_GENERATION,
        CURRENT,
        OVERSIZED,
    ),
    "OffsetFetch": (NOTHING_COMMITTED, COMMITTED),
    "DescribeGroups": (NO_GROUP, NO_MEMBERS, WITH_MEMBERS, WITH_STATIC),
    "FindCoordinator": (OWN_KEY,),
    "ListGroups": (NO_FILTER, STATES_FILTER, TYPES_FILTER, BOTH_FILTERS),
    "DeleteGroups": (NO_GROUP, WITH_MEMBERS, NO_MEMBERS_OFFSETS, NO_MEMBERS_NO_OFFSETS),
    "OffsetDelete": (NO_GROUP, WITH_MEMBERS, NO_MEMBERS),
}

#: The first version of a request that can carry a class at all: its field is not in older
#: versions (``*Request.json``: ``GroupInstanceId`` "5+"/"3+"/"7+", SyncGroup ``ProtocolType``
#: "5+", ListGroups ``StatesFilter`` "4+", ``TypesFilter`` "5+"; OffsetCommit
#: ``GenerationIdOrMemberEpoch`` and ``MemberId`` "1+").
CLASS_SINCE: Final[dict[tuple[str, str], int]] = {
    **{
        ("JoinGroup", c): INSTANCE_ID_SINCE["JoinGroup"]
        for c in (NEW_STATIC_MEMBER, STATIC_RESTART, FENCED_INSTANCE)
    },
    ("SyncGroup", FENCED_INSTANCE): INSTANCE_ID_SINCE["SyncGroup"],
    ("SyncGroup", NO_PROTOCOL): SYNC_PROTOCOL_SINCE,
    ("SyncGroup", OTHER_PROTOCOL): SYNC_PROTOCOL_SINCE,
    ("Heartbeat", FENCED_INSTANCE): INSTANCE_ID_SINCE["Heartbeat"],
    ("LeaveGroup", FENCED_INSTANCE): INSTANCE_ID_SINCE["LeaveGroup"],
    ("LeaveGroup", BY_INSTANCE): INSTANCE_ID_SINCE["LeaveGroup"],
    ("OffsetCommit", FENCED_INSTANCE): INSTANCE_ID_SINCE["OffsetCommit"],
    **{
        ("OffsetCommit", c): 1
        for c in (
            SIMPLE_WITH_MEMBERS,
            NO_GROUP,
            UNKNOWN_MEMBER,
            OTHER_GENERATION,
            CURRENT,
            OVERSIZED,
        )
    },
    ("ListGroups", STATES_FILTER): LIST_STATES_SINCE,
    ("ListGroups", TYPES_FILTER): LIST_TYPES_SINCE,
    ("ListGroups", BOTH_FILTERS): LIST_TYPES_SINCE,
}
#: Classes only a pending member (KIP-394) gives: a JoinGroup v4+ must have asked for its id.
NEEDS_PENDING: Final[frozenset[tuple[str, str]]] = frozenset(
    {("JoinGroup", PENDING_MEMBER), ("LeaveGroup", PENDING_MEMBER)}
)
#: Classes only a static member (KIP-345) gives: a JoinGroup v5+ must have added it.
NEEDS_STATIC: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        ("JoinGroup", STATIC_RESTART),
        ("SyncGroup", FENCED_INSTANCE),
        ("Heartbeat", FENCED_INSTANCE),
        ("LeaveGroup", FENCED_INSTANCE),
        ("LeaveGroup", BY_INSTANCE),
        ("OffsetCommit", FENCED_INSTANCE),
        ("DescribeGroups", WITH_STATIC),
        ("JoinGroup", FENCED_INSTANCE),
    }
)


def _instance(api: str, version: int, instance: str | None) -> str | None:
    """The instance id as request ``api`` at ``version`` carries it."""
    since = INSTANCE_ID_SINCE.get(api)
    return instance if since is not None and version >= since else None


def _static_holder(state: GroupState, instance: str) -> str | None:
    """The member id ``instance`` maps to (``CG.staticMemberId``), or None."""
    for m in state.members:
        if m.group_instance_id == instance and m.in_static_members:
            return m.member_id
    return None


def _relation(state: GroupState, member_id: str, instance: str | None) -> str:
    """``CG.validateMember``'s order: the instance first (``FENCED_INSTANCE_ID``), then the id."""
    if instance is not None:
        holder = _static_holder(state, instance)
        if holder is None:
            return UNKNOWN_MEMBER
        if holder != member_id:
            return FENCED_INSTANCE
    if not state.exists or all(m.member_id != member_id for m in state.members):
        return UNKNOWN_MEMBER
    return MEMBER


def _with_generation(
    state: GroupState, member_id: str, generation: int, instance: str | None
) -> str:
    relation = _relation(state, member_id, instance)
    if relation != MEMBER:
        return relation
    return CURRENT if generation == state.generation_id else OTHER_GENERATION


def _join(state: GroupState, cmd: Any) -> str:
    instance = _instance("JoinGroup", cmd.version, cmd.group_instance_id)
    if cmd.member_id == NO_MEMBER_ID:
        if instance is None:
            return NEW_MEMBER
        return NEW_STATIC_MEMBER if _static_holder(state, instance) is None else STATIC_RESTART
    if instance is not None:
        holder = _static_holder(state, instance)
        if holder is not None and holder != cmd.member_id:
            return FENCED_INSTANCE
    if any(p.member_id == cmd.member_id for p in state.pending_members):
        return PENDING_MEMBER
    if state.exists and any(m.member_id == cmd.member_id for m in state.members):
        return MEMBER
    return UNKNOWN_MEMBER


def _sync_unnamed(cmd: Any) -> bool:
    """A SyncGroup v5+ without its protocol type or name (refused before the group id)."""
    named = cmd.type == "SyncGroup" and cmd.version >= SYNC_PROTOCOL_SINCE
    return named and (cmd.protocol_type is None or cmd.protocol_name is None)


def _sync(state: GroupState, cmd: Any) -> str:
    named = cmd.version >= SYNC_PROTOCOL_SINCE
    if _sync_unnamed(cmd):
        return NO_PROTOCOL
    instance = _instance("SyncGroup", cmd.version, cmd.group_instance_id)
    cls = _with_generation(state, cmd.member_id, cmd.generation_id, instance)
    ours = (state.protocol_type, state.protocol_name)
    if (
        cls == CURRENT
        and named
        and ours[1] is not None
        and (cmd.protocol_type, cmd.protocol_name) != ours
    ):
        return OTHER_PROTOCOL
    return cls


def _commit(state: GroupState, cmd: Any, metadata_limit: int) -> str:
    v = cmd.version
    generation = cmd.generation_id if v >= 1 else -1
    member_id = cmd.member_id if v >= 1 else NO_MEMBER_ID
    instance = _instance("OffsetCommit", v, cmd.group_instance_id)
    if generation < 0 and member_id == NO_MEMBER_ID and instance is None:
        return SIMPLE_WITH_MEMBERS if state.exists and state.members else SIMPLE_NO_MEMBERS
    if not state.exists:
        return NO_GROUP
    cls = _with_generation(state, member_id, generation, instance)
    if cls == CURRENT and any(len(o.metadata) > metadata_limit for o in cmd.offsets):
        return OVERSIZED
    return cls


def _leave(state: GroupState, cmd: Any) -> str:
    first = cmd.members[0] if cmd.members else None
    member_id = first.member_id if first is not None else NO_MEMBER_ID
    instance = _instance("LeaveGroup", cmd.version, first.group_instance_id if first else None)
    if member_id == NO_MEMBER_ID and instance is not None:
        return BY_INSTANCE
    if instance is not None:
        holder = _static_holder(state, instance)
        if holder is not None and holder != member_id:
            return FENCED_INSTANCE
    if any(p.member_id == member_id for p in state.pending_members):
        return PENDING_MEMBER
    if state.exists and any(m.member_id == member_id for m in state.members):
        return MEMBER
    return UNKNOWN_MEMBER


def _fetch(state: GroupState, cmd: Any) -> str:
    asked = {(p.topic, p.partition) for p in cmd.partitions}
    have = {(o.topic, o.partition) for o in state.offsets} if state.exists else set()
    hit = have & asked if asked else have
    return COMMITTED if hit else NOTHING_COMMITTED


def _describe(state: GroupState) -> str:
    if not state.exists:
        return NO_GROUP
    if not state.members:
        return NO_MEMBERS
    if any(m.group_instance_id is not None for m in state.members):
        return WITH_STATIC
    return WITH_MEMBERS


def _list(cmd: Any) -> str:
    states = bool(cmd.states_filter) and cmd.version >= LIST_STATES_SINCE
    types = bool(cmd.types_filter) and cmd.version >= LIST_TYPES_SINCE
    return {
        (False, False): NO_FILTER,
        (True, False): STATES_FILTER,
        (False, True): TYPES_FILTER,
        (True, True): BOTH_FILTERS,
    }[(states, types)]


def _delete(state: GroupState, *, offsets_matter: bool) -> str:
    if not state.exists:
        return NO_GROUP
    if state.members:
        return WITH_MEMBERS
    if not offsets_matter:
        return NO_MEMBERS
    return NO_MEMBERS_OFFSETS if state.offsets else NO_MEMBERS_NO_OFFSETS


def input_class(state: GroupState, command: Any, *, metadata_limit: int) -> str | None:
    """The field class of ``command`` sent to the group in ``state`` (module docstring); None
    for a request type with no classes here. ``metadata_limit`` is the broker's
    ``offset.metadata.max.bytes``."""
    kind = command.type
    if getattr(command, "empty_group_id", False) and not _sync_unnamed(command):
        return EMPTY_GROUP
    if kind == "JoinGroup":
        return _join(state, command)
    if kind == "SyncGroup":
        return _sync(state, command)
    if kind == "Heartbeat":
        instance = _instance("Heartbeat", command.version, command.group_instance_id)
        return _with_generation(state, command.member_id, command.generation_id, instance)
    if kind == "OffsetCommit":
        return _commit(state, command, metadata_limit)
    if kind == "LeaveGroup":
        return _leave(state, command)
    if kind == "OffsetFetch":
        return _fetch(state, command)
    if kind == "DescribeGroups":
        return _describe(state)
    if kind == "FindCoordinator":
        return OWN_KEY
    if kind == "ListGroups":
        return _list(command)
    if kind == "DeleteGroups":
        return _delete(state, offsets_matter=True)
    if kind == "OffsetDelete":
        return _delete(state, offsets_matter=False)
    return None
