"""The working copy of one group state during one model step, and the choice oracle.

Role: the rule modules (``rebalance``, ``join``, ``sync``, ``heartbeat``, ``leave``, ``offsets``,
``describe``, ``list_groups``, ``delete``) are written imperatively, in the order of Kafka's own
code, against a mutable :class:`Txn`; :meth:`Txn.freeze` turns it back into a canonical frozen
:class:`~kgc.model.classic.state.GroupState`.

Nondeterminism is explicit: where Kafka may do one of several things (which member leads, which of
two equally voted protocols wins), the rule calls :meth:`Txn.choose` with every allowed option.
:func:`explore` re-runs the step once per combination of choices (depth-first over the choice
points), so every allowed successor is produced without the rules having to return lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from kgc.model.classic.state import (
    CommittedOffset,
    GroupState,
    JoinTimer,
    Member,
    Outgoing,
    PendingMember,
    PendingTxnOffset,
    Producer,
    SyncTimer,
)
from kgc.model.commands import (
    NO_GENERATION,
    JoinGroupResponse,
    PartitionError,
    Response,
    TopicPartitionOffset,
    member_name,
)
from kgc.model.errors import UNKNOWN_TOPIC_OR_PARTITION
from kgc.model.known_bugs import BugWorld
from kgc.model.profiles import GroupConfig, Profile
from kgc.model.timed import Deferred

T = TypeVar("T")


def as_answered(profile: Profile, response: Response) -> Response:
    """``response`` as the line writes it: a JoinGroup error carries the line's generation
    (``Profile.join_error_generation_id``)."""
    if (
        isinstance(response, JoinGroupResponse)
        and response.error != "NONE"
        and response.generation_id == NO_GENERATION
    ):
        return replace(response, generation_id=profile.join_error_generation_id)
    return response


class Txn:
    """Mutable copy of a :class:`GroupState` (members, pending members, offsets as dicts)."""

    __slots__ = (
        "config",
        "profile",
        "exists",
        "state",
        "generation_id",
        "protocol_type",
        "protocol_name",
        "leader",
        "members",
        "pending_members",
        "pending_sync",
        "join_timer",
        "sync_timer",
        "new_member_added",
        "offsets",
        "offsets_changed",
        "subscribed_topics",
        "issued_ids",
        "unrevealed",
        "outbox",
        "deferred",
        "now_ms",
        "unconfirmed",
        "cleaned_at_ms",
        "known_bug",
        "producers",
        "txn_offsets",
        "producer_ids_issued",
        "denied",
        "_script",
        "_taken",
        "_arities",
        "_origin",
    )

    def __init__(self, config: GroupConfig, s: GroupState, script: Sequence[int] = ()) -> None:
        self.config = config
        self.profile: Profile = config.profile
        self._origin = s
        self.exists = s.exists
        self.state = s.state
        self.generation_id = s.generation_id
        self.protocol_type = s.protocol_type
        self.protocol_name = s.protocol_name
        self.leader = s.leader
        self.members: dict[str, Member] = {m.member_id: m for m in s.members}
        self.pending_members: dict[str, float] = {
            p.member_id: p.deadline_ms for p in s.pending_members
        }
        self.pending_sync: set[str] = set(s.pending_sync)
        self.join_timer = s.join_timer
        self.sync_timer = s.sync_timer
        self.new_member_added = s.new_member_added
        self.offsets: tuple[CommittedOffset, ...] | dict[tuple[str, int], CommittedOffset] = (
            s.offsets
        )
        self.offsets_changed = False
        self.subscribed_topics = s.subscribed_topics
        self.issued_ids = s.issued_ids
        self.unrevealed = s.unrevealed
        self.outbox: list[Outgoing] = list(s.outbox)
        self.deferred: Deferred | None = s.deferred
        self.now_ms = s.now_ms
        self.unconfirmed = s.unconfirmed
        self.cleaned_at_ms = s.cleaned_at_ms  # ``GroupConfig.cleanup_interval_ms``
        self.known_bug: BugWorld | None = s.known_bug
        self.producers: dict[str, Producer] = {p.transactional_id: p for p in s.producers}
        self.txn_offsets: list[PendingTxnOffset] = list(s.txn_offsets)
        self.producer_ids_issued = s.producer_ids_issued
        self.denied = s.denied  # read only in a step: ``authorization.py``
        self._script = script
        self._taken: list[int] = []
        self._arities: list[int] = []

    # ------------------------------------------------------------------ nondeterminism
    def choose(self, options: Sequence[T]) -> T:
        """One of ``options`` (at least one); :func:`explore` visits every one."""
        if not options:
            raise ValueError("choose() needs at least one option")
        i = len(self._taken)
        pick = self._script[i] if i < len(self._script) else 0
        self._taken.append(pick)
        self._arities.append(len(options))
        return options[pick]

    # ------------------------------------------------------------------ small helpers
    def respond(self, request_id: int, response: Response) -> None:
        response = as_answered(self.profile, response)
        self.outbox.append(
            Outgoing(request_id=request_id, response=response, emitted_at_ms=self.now_ms)
        )

    def offsets_dict(self) -> dict[tuple[str, int], CommittedOffset]:
        if isinstance(self.offsets, tuple):
            self.offsets = {(o.topic, o.partition): o for o in self.offsets}
        return self.offsets

    def issue_member_id(self, client: str) -> str:
        """A new member id for ``client``: its next symbolic name ``client-n``."""
        counts = dict(self.issued_ids)
        n = counts.get(client, 0) + 1
        counts[client] = n
        self.issued_ids = tuple(sorted(counts.items()))
        mid = member_name(client, n)
        self.unrevealed = (*self.unrevealed, mid)
        return mid

    def revealed(self, member_id: str) -> None:
        """``member_id`` was shown to its owner in a JoinGroup answer: its name is final."""
        if member_id in self.unrevealed:
            self.unrevealed = tuple(x for x in self.unrevealed if x != member_id)

    def release_unrevealed(self, member_id: str) -> None:
        """An id that dies before its owner saw it is never named by the conformance layer: give
        its number back so the owner's next id gets it (the owner had one request in flight, so it
        is that client's latest id)."""
        if member_id not in self.unrevealed:
            return
        self.unrevealed = tuple(x for x in self.unrevealed if x != member_id)
        client, _, n = member_id.rpartition("-")
        counts = dict(self.issued_ids)
        if n.isdigit() and counts.get(client) == int(n):
            if int(n) == 1:
                del counts[client]
            else:
                counts[client] = int(n) - 1
            self.issued_ids = tuple(sorted(counts.items()))

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members' (0 with no members)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # ------------------------------------------------------------------ freeze
    def freeze(self) -> GroupState:
        if self.known_bug is not None:
            # a bug world predicts nothing: no members, timers or answers owed (``known_bugs.py``)
            return GroupState(
                exists=self.exists,
                issued_ids=self.issued_ids,
                unrevealed=self.unrevealed,
                now_ms=self.now_ms,
                known_bug=self.known_bug,
                denied=self.denied,
            )
        offsets = self.offsets
        if isinstance(offsets, dict):
            offsets = tuple(offsets[k] for k in sorted(offsets))
        origin = self._origin
        members = self.members
        if len(members) == len(origin.members) and all(
            m.member_id in members for m in origin.members
        ):
            # same ids: keep their (sorted) order; share the tuple if no member changed
            member_tuple = tuple(members[m.member_id] for m in origin.members)
            if all(a is b for a, b in zip(member_tuple, origin.members, strict=True)):
                member_tuple = origin.members
        else:
            member_tuple = tuple(members[k] for k in sorted(members))
        pend = self.pending_members
        if len(pend) == len(origin.pending_members) and all(
            pend.get(p.member_id) == p.deadline_ms for p in origin.pending_members
        ):
            pending = origin.pending_members
        else:
            pending = tuple(PendingMember(member_id=k, deadline_ms=pend[k]) for k in sorted(pend))
        pending_sync = (
            origin.pending_sync
            if len(self.pending_sync) == len(origin.pending_sync)
            and all(x in self.pending_sync for x in origin.pending_sync)
            else tuple(sorted(self.pending_sync))
        )
        outbox = self.outbox
        if len(outbox) > 1:
            outbox.sort(key=_request_id)
        return GroupState(
            exists=self.exists,
            state=self.state,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader=self.leader,
            members=member_tuple,
            pending_members=pending,
            pending_sync=pending_sync,
            join_timer=self.join_timer,
            sync_timer=self.sync_timer,
            new_member_added=self.new_member_added,
            offsets=offsets,
            subscribed_topics=self.subscribed_topics,
            issued_ids=self.issued_ids,
            unrevealed=self.unrevealed,
            outbox=tuple(outbox),
            deferred=self.deferred,
            now_ms=self.now_ms,
            unconfirmed=self.unconfirmed and self.exists,
            cleaned_at_ms=self.cleaned_at_ms,
            producers=tuple(self.producers[k] for k in sorted(self.producers)),
            txn_offsets=tuple(sorted(self.txn_offsets, key=_txn_offset_key)),
            producer_ids_issued=self.producer_ids_issued,
            denied=self.denied,
        )


def partition_exists(tx: Txn, topic: str, partition: int) -> bool:
    """Whether the cluster has ``topic``'s ``partition`` (every partition when the model was
    given no topics)."""
    topics = tx.config.topics
    if topics is None:
        return True
    return any(name == topic and 0 <= partition < count for name, count in topics)


def split_unknown_partitions(
    tx: Txn, offsets: Iterable[TopicPartitionOffset]
) -> tuple[list[TopicPartitionOffset], list[PartitionError]]:
    """The offsets of partitions that exist, and an UNKNOWN_TOPIC_OR_PARTITION answer for each of
    the others (a commit, plain or transactional, checks its partitions before its group)."""
    valid: list[TopicPartitionOffset] = []
    results: list[PartitionError] = []
    for o in offsets:
        if partition_exists(tx, o.topic, o.partition):
            valid.append(o)
        else:
            error = UNKNOWN_TOPIC_OR_PARTITION
            results.append(PartitionError(topic=o.topic, partition=o.partition, error=error))
    return valid, results


def _request_id(o: Outgoing) -> int:
    return o.request_id


def _txn_offset_key(o: PendingTxnOffset) -> tuple[int, str, int]:
    return (o.producer_id, o.topic, o.partition)


def explore(
    config: GroupConfig, state: GroupState, step: Callable[[Txn], None]
) -> list[GroupState]:
    """Every state ``step`` can lead to from ``state``, one per combination of its choices."""
    results: list[GroupState] = []
    scripts: list[list[int]] = [[]]
    while scripts:
        script = scripts.pop()
        tx = Txn(config, state, script)
        step(tx)
        results.append(tx.freeze())
        taken, arities = tx._taken, tx._arities
        for i in range(len(script), len(taken)):
            for alt in range(1, arities[i]):
                scripts.append([*taken[:i], alt])
    return results


__all__ = ["JoinTimer", "SyncTimer", "Txn", "explore"]
