"""Authorization: what the broker refuses a principal before its request reaches the group.

Scope. The run's principal may do everything to its own group, topic and transactional ids (a
prefixed ALLOW ALL, as the secured brokers kgc starts grant ``kgc-user``:
``conformance/brokers/secure.py``), and holds no cluster permission. An operator then denies it one
operation on the run's group or topic at a time, and allows it again: a literal DENY binding, which
wins over every ALLOW (``StandardAuthorizerData.findResult``), and denies exactly its operation:
"a DENY ACL for READ on a resource does not DENY describe for that resource". The model holds the
denied (resource, operation) pairs (``GroupState.denied``); they change only by an ACL action
(``AclChange``, recorded as a ``Fault`` event whose action is ``acl-deny:group:READ`` and the like,
performed between requests: :meth:`ClassicGroupModel.fault`). A super user is never refused, so the
search draws these actions only when the run's principal is not one.

Rules, from ``KafkaApis`` (4.3.1; 3.9.2 checks the same permissions in the same order), each
checked when the request arrives, before the coordinator sees it. A refused request changes
nothing: no group is created or read, no session is refreshed, no join phase moves.

A1. JoinGroup, SyncGroup, Heartbeat and LeaveGroup need READ on the group, else
    ``GROUP_AUTHORIZATION_FAILED`` through the request's ``getErrorResponse``: a JoinGroup answer
    with generation -1, no member id, leader, protocol or members; a LeaveGroup answer with the
    error at the top and no member results. A SyncGroup v5+ without its protocol type or name is
    refused ``INCONSISTENT_GROUP_PROTOCOL`` before that (``handleSyncGroupRequest``).
A2. OffsetCommit needs READ on the group (``GROUP_AUTHORIZATION_FAILED`` for every partition),
    then READ on each topic: a denied topic's partitions are ``TOPIC_AUTHORIZATION_FAILED``, before
    any topic is looked up, and only the others reach the coordinator; when none is left the
    coordinator is not called at all (the group is not read, no session is refreshed).
A3. OffsetFetch needs DESCRIBE on the group: ``GROUP_AUTHORIZATION_FAILED`` as the group's error
    (``OffsetFetchResponse.groupError``: at the top from v2, on each asked partition with offset
    -1 below). Then DESCRIBE on each topic: asked partitions of a denied topic are answered
    ``TOPIC_AUTHORIZATION_FAILED`` with offset -1, unless the coordinator answers a group error,
    which wins; a fetch of every partition (no topics named) leaves the denied topics out.
A4. DescribeGroups needs DESCRIBE on the group: ``GROUP_AUTHORIZATION_FAILED``, no state, protocol
    or members (``DescribeGroupsResponse.groupError``). FindCoordinator of the group needs
    DESCRIBE on it: ``GROUP_AUTHORIZATION_FAILED`` and no node (``getCoordinator``).
A5. ListGroups: with no DESCRIBE on the cluster, only the groups the principal may DESCRIBE are
    listed: the run's group is left out while DESCRIBE on it is denied.
A6. DeleteGroups needs DELETE on the group: ``GROUP_AUTHORIZATION_FAILED`` for it.
A7. OffsetDelete needs DELETE on the group (``GROUP_AUTHORIZATION_FAILED`` at the top), then READ
    on each topic: a denied topic's partitions are ``TOPIC_AUTHORIZATION_FAILED`` and the
    coordinator is asked about the others only (with none left it still checks the group); a
    group error it answers replaces everything (``OffsetDeleteResponse.Builder.merge``).
A8. TxnOffsetCommit needs WRITE on the transactional id (not drawn: the prefix allows it), then
    READ on the group (``GROUP_AUTHORIZATION_FAILED`` for every partition), then READ on each
    topic, as A2. AddOffsetsToTxn needs READ on the group after that:
    ``GROUP_AUTHORIZATION_FAILED``. InitProducerId and EndTxn name no group.

A request naming both a denied topic and another topic is outside the model (``NotModelled``): the
search names the run's topic alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kgc.model.classic.empty_group import empty_group_answer_for, names_empty_group
from kgc.model.classic.rebalance import join_error
from kgc.model.classic.txn import Txn
from kgc.model.commands import (
    AddOffsetsToTxn,
    AddOffsetsToTxnResponse,
    DeleteGroups,
    DeleteGroupsResponse,
    DescribeGroups,
    DescribeGroupsResponse,
    FetchedOffset,
    FindCoordinator,
    FindCoordinatorResponse,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    LeaveGroup,
    LeaveGroupResponse,
    ListGroups,
    NotModelled,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetDelete,
    OffsetDeleteResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
    TxnOffsetCommit,
    TxnOffsetCommitResponse,
)
from kgc.model.errors import (
    GROUP_AUTHORIZATION_FAILED,
    INCONSISTENT_GROUP_PROTOCOL,
    NONE,
    TOPIC_AUTHORIZATION_FAILED,
)

GROUP, TOPIC = "group", "topic"
READ, DESCRIBE, DELETE = "READ", "DESCRIBE", "DELETE"
# what the search denies: every permission a group request of the run checks on its group and
# its topic (the transactional id's WRITE is left to the prefix)
DENIABLE: tuple[tuple[str, str], ...] = (
    (GROUP, READ),
    (GROUP, DESCRIBE),
    (GROUP, DELETE),
    (TOPIC, READ),
    (TOPIC, DESCRIBE),
)
ACTION_PREFIX = "acl-"

Denied = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class AclChange:
    """Deny (or allow again) the run's principal ``operation`` on the run's ``resource``."""

    deny: bool
    resource: str
    operation: str

    @property
    def action(self) -> str:
        """The ``Fault`` event's action: ``acl-deny:group:READ``, ``acl-allow:topic:DESCRIBE``."""
        return f"{ACTION_PREFIX}{'deny' if self.deny else 'allow'}:{self.resource}:{self.operation}"

    def applied(self, denied: Denied) -> Denied:
        pair = (self.resource, self.operation)
        kept = {p for p in denied if p != pair}
        if self.deny:
            kept.add(pair)
        return tuple(sorted(kept))


def acl_change(action: str) -> AclChange | None:
    """The :class:`AclChange` an event's action names, or None for any other action (a nemesis
    fault); a malformed ``acl-`` action raises ``ValueError``."""
    if not action.startswith(ACTION_PREFIX):
        return None
    verb, _, rest = action[len(ACTION_PREFIX) :].partition(":")
    resource, _, operation = rest.partition(":")
    if verb not in ("deny", "allow") or (resource, operation) not in DENIABLE:
        raise ValueError(
            f"unknown ACL action {action!r}: acl-deny|acl-allow:<resource>:<operation>, one of "
            + ", ".join(f"{r}:{o}" for r, o in DENIABLE)
        )
    return AclChange(deny=verb == "deny", resource=resource, operation=operation)


def _topic_denied(tx: Txn, denied: Denied, operation: str, topic: str) -> bool:
    """Whether ``operation`` on ``topic`` is denied: the run's topics (``GroupConfig.topics``;
    every topic when the model was given none) carry the denial, others keep the prefix's ALLOW."""
    if (TOPIC, operation) not in denied:
        return False
    topics = tx.config.topics
    return topics is None or any(name == topic for name, _ in topics)


def _split(
    tx: Txn, denied: Denied, operation: str, items: tuple[Any, ...], what: str
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``items`` (with a ``topic``) as (allowed, denied); a mix of a denied topic and another
    topic is outside the model."""
    refused = tuple(i for i in items if _topic_denied(tx, denied, operation, i.topic))
    allowed = tuple(i for i in items if i not in refused)
    if refused and allowed:
        raise NotModelled(f"{what} naming a topic the principal may not use beside another topic")
    return allowed, refused


def _failed(items: tuple[Any, ...], error: str) -> tuple[PartitionError, ...]:
    return tuple(
        sorted(
            (PartitionError(topic=i.topic, partition=i.partition, error=error) for i in items),
            key=lambda p: (p.topic, p.partition),
        )
    )


def _fetch_error(tp: Any, error: str, version: int) -> FetchedOffset:
    """A partition ``KafkaApis`` answers itself: offset -1, the epoch field's default -1 (v5+)."""
    return FetchedOffset(
        topic=tp.topic,
        partition=tp.partition,
        offset=-1,
        leader_epoch=-1 if version >= 5 else None,
        error=error,
    )


def _before_authorization(tx: Txn, command: Request) -> Response | None:
    """What ``KafkaApis`` answers before it checks any permission: a SyncGroup v5+ without its
    protocol type or name (A1; ``empty_group`` rule 2 states the answer)."""
    if isinstance(command, SyncGroup):
        answer = empty_group_answer_for(tx.profile, command)
        if answer == SyncGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL):
            return answer
    return None


_GROUP_PERMISSION: dict[str, str] = {
    JoinGroup.type: READ,
    SyncGroup.type: READ,
    Heartbeat.type: READ,
    LeaveGroup.type: READ,
    OffsetCommit.type: READ,
    OffsetFetch.type: DESCRIBE,
    DescribeGroups.type: DESCRIBE,
    FindCoordinator.type: DESCRIBE,
    DeleteGroups.type: DELETE,
    OffsetDelete.type: DELETE,
    TxnOffsetCommit.type: READ,
    AddOffsetsToTxn.type: READ,
}


def _refused_by_group(command: Request) -> Response:
    """The ``GROUP_AUTHORIZATION_FAILED`` answer of each request type (A1-A8)."""
    error = GROUP_AUTHORIZATION_FAILED
    c = command
    if isinstance(c, JoinGroup):
        return join_error(error, "")
    if isinstance(c, SyncGroup):
        return SyncGroupResponse(error=error)
    if isinstance(c, Heartbeat):
        return HeartbeatResponse(error=error)
    if isinstance(c, LeaveGroup):
        return LeaveGroupResponse(error=error)
    if isinstance(c, OffsetCommit):
        return OffsetCommitResponse(partitions=_failed(c.offsets, error))
    if isinstance(c, TxnOffsetCommit):
        return TxnOffsetCommitResponse(partitions=_failed(c.offsets, error))
    if isinstance(c, OffsetFetch):
        if c.version >= 2:
            return OffsetFetchResponse(error=error)
        fetched = tuple(_fetch_error(tp, error, c.version) for tp in c.partitions)
        return OffsetFetchResponse(
            error=NONE, partitions=tuple(sorted(fetched, key=lambda f: (f.topic, f.partition)))
        )
    if isinstance(c, DescribeGroups):
        return DescribeGroupsResponse(error=error)
    if isinstance(c, FindCoordinator):
        return FindCoordinatorResponse(error=error)
    if isinstance(c, DeleteGroups):
        return DeleteGroupsResponse(error=error)
    if isinstance(c, OffsetDelete):
        return OffsetDeleteResponse(error=error)
    if isinstance(c, AddOffsetsToTxn):
        return AddOffsetsToTxnResponse(error=error)
    raise TypeError(f"no refusal form for {c.type}")  # pragma: no cover - _GROUP_PERMISSION


Handler = Callable[[Txn, int, Any], None]


def authorized(
    tx: Txn,
    request_id: int,
    command: Request,
    denied: Denied,
    handler: Handler,
    *,
    foreign_group_refused: bool = False,
) -> None:
    """Run ``command`` through A1-A8 and, for what they let through, ``handler`` (the group's).
    ``foreign_group_refused``: the principal holds no permission on a group outside the run's
    prefix, so a request naming the empty group id is refused before Kafka checks the id (A0)."""
    early = _before_authorization(tx, command)
    if early is not None:
        tx.respond(request_id, early)
        return
    needed = _GROUP_PERMISSION.get(command.type)
    if needed is not None and (
        (GROUP, needed) in denied or (foreign_group_refused and names_empty_group(command))
    ):
        tx.respond(request_id, _refused_by_group(command))
        return
    c = command
    if isinstance(c, OffsetCommit | TxnOffsetCommit):  # A2, A8
        _, refused = _split(tx, denied, READ, c.offsets, c.type)
        if refused:  # every partition: the coordinator is not called
            failed = _failed(refused, TOPIC_AUTHORIZATION_FAILED)
            if isinstance(c, OffsetCommit):
                tx.respond(request_id, OffsetCommitResponse(partitions=failed))
            else:
                tx.respond(request_id, TxnOffsetCommitResponse(partitions=failed))
            return
    if isinstance(c, OffsetDelete):  # A7: the coordinator sees the allowed partitions only
        allowed, refused = _split(tx, denied, READ, c.partitions, c.type)
        handler(tx, request_id, replace(c, partitions=allowed))
        if refused:
            _amend(tx, request_id, lambda r: _delete_with_refused(r, refused))
        return
    if isinstance(c, OffsetFetch) and c.partitions:  # A3, named partitions
        _, refused_tps = _split(tx, denied, DESCRIBE, c.partitions, c.type)
        if refused_tps:
            handler(tx, request_id, c)  # a read: what it would answer for them is replaced
            _amend(tx, request_id, lambda r: _fetch_with_refused(r, refused_tps, c.version))
            return
    handler(tx, request_id, c)
    if isinstance(c, OffsetFetch) and not c.partitions and (TOPIC, DESCRIBE) in denied:
        _amend(tx, request_id, lambda r: _fetch_without_denied(tx, denied, r))  # A3, every one
    elif isinstance(c, ListGroups) and (GROUP, DESCRIBE) in denied:  # A5
        _amend(tx, request_id, lambda r: replace(r, groups=()))


def _amend(tx: Txn, request_id: int, change: Callable[[Any], Response]) -> None:
    """Replace the answer the handler just gave ``request_id`` (answered at once: every request
    A2-A7 amend is answered in the step it arrives)."""
    for i in range(len(tx.outbox) - 1, -1, -1):
        out = tx.outbox[i]
        if out.request_id == request_id:
            tx.outbox[i] = replace(out, response=change(out.response))
            return
    raise AssertionError(f"request {request_id} was not answered in its step")


def _fetch_with_refused(
    response: OffsetFetchResponse, refused: tuple[Any, ...], version: int
) -> OffsetFetchResponse:
    if response.error != NONE:
        return response  # the coordinator's group error wins
    keep = {(tp.topic, tp.partition) for tp in refused}
    parts = [p for p in response.partitions if (p.topic, p.partition) not in keep]
    parts += [_fetch_error(tp, TOPIC_AUTHORIZATION_FAILED, version) for tp in refused]
    return replace(response, partitions=tuple(sorted(parts, key=lambda f: (f.topic, f.partition))))


def _fetch_without_denied(
    tx: Txn, denied: Denied, response: OffsetFetchResponse
) -> OffsetFetchResponse:
    kept = tuple(p for p in response.partitions if not _topic_denied(tx, denied, DESCRIBE, p.topic))
    return replace(response, partitions=kept)


def _delete_with_refused(
    response: OffsetDeleteResponse, refused: tuple[Any, ...]
) -> OffsetDeleteResponse:
    if response.error != NONE:
        return response  # a group-level error replaces everything
    parts = list(response.partitions) + list(_failed(refused, TOPIC_AUTHORIZATION_FAILED))
    return replace(response, partitions=tuple(sorted(parts, key=lambda p: (p.topic, p.partition))))
