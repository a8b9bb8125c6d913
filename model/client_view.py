"""What one client knows, and the requests it builds from it.

Rule: a classic-protocol client fills every group request from its own settings and from what its
own answers told it (Kafka's ``AbstractCoordinator`` / ``ConsumerCoordinator``):

* its settings, known from the start: session and rebalance timeouts, its protocols and the
  subscription each carries, its ``group.instance.id`` if it is static (KIP-345);
* its member id, from its JoinGroup answer — also the ``MEMBER_ID_REQUIRED`` one (KIP-394);
* from a successful join: the generation, the selected protocol, whether the answer named it leader
  and, if so, the members and subscriptions it assigns;
* it forgets its member id and generation when the coordinator answers ``UNKNOWN_MEMBER_ID`` (to a
  JoinGroup, SyncGroup or Heartbeat) or ``FENCED_INSTANCE_ID`` (to a JoinGroup).

A field is sent only from the first request version that carries it
(``clients/src/main/resources/common/message/*Request.json``, the same in kafka-python's bundled
copies): ``group_instance_id`` from JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3 (per
member) and OffsetCommit v7 (:data:`INSTANCE_ID_SINCE`); SyncGroup's ``protocol_type`` and
``protocol_name`` from v5 (KIP-559, :data:`SYNC_PROTOCOL_SINCE`). The request handlers of the model
read these fields under the same versions.

Every driver builds its commands here — the state machine, the synthetic corpora, the fault
scenarios, the timing bench — so what a client sends for what it knows is written once. What is a
driver's to choose (which request, which version, a stale generation, a stranger's member id) is an
argument; what follows from the view and those choices is decided here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kgc.model.commands import (
    NO_GENERATION,
    NO_MEMBER_ID,
    Assignment,
    DescribeGroups,
    FindCoordinator,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.errors import FENCED_INSTANCE_ID, MEMBER_ID_REQUIRED, NONE, UNKNOWN_MEMBER_ID

#: The first version of each request that carries ``group_instance_id`` (KIP-345).
INSTANCE_ID_SINCE: dict[str, int] = {
    "JoinGroup": 5,
    "SyncGroup": 3,
    "Heartbeat": 3,
    "LeaveGroup": 3,
    "OffsetCommit": 7,
}
#: The first SyncGroup version that carries ``protocol_type`` and ``protocol_name`` (KIP-559).
SYNC_PROTOCOL_SINCE = 5
PROTOCOL_TYPE = "consumer"
#: A member id the group never handed out (``kgc.conformance.wire.encoding`` sends a stable
#: fake id).
STRANGER = "stranger"
#: Which generation a member-checked request names: the client's own, the one before it, or none.
GENERATIONS = ("current", "stale", "none")
#: Whom a LeaveGroup names: the client itself, a stranger's member id, or — a static client only —
#: its ``group.instance.id`` with an empty member id (KIP-345's removal of an instance).
LEAVERS = ("self", "stranger", "instance")
#: The requests a fenced zombie (:meth:`ClientView.zombie`) may send.
ZOMBIE_APIS = ("Heartbeat", "SyncGroup", "OffsetCommit", "JoinGroup", "LeaveGroup")


def subscription(topics: Iterable[str]) -> str:
    """A consumer's protocol metadata for ``topics``, in the model's canonical JSON form (sent as a
    ``ConsumerProtocolSubscription`` by ``kgc.conformance.wire.encoding``)."""
    return json.dumps({"topics": list(topics)})


def instance_id(api: str, version: int, group_instance_id: str | None) -> str | None:
    """``group_instance_id`` as request ``api`` at ``version`` carries it: ``None`` before
    :data:`INSTANCE_ID_SINCE`."""
    return group_instance_id if version >= INSTANCE_ID_SINCE[api] else None


def simple_commit(
    client: str, *, offsets: tuple[TopicPartitionOffset, ...], version: int
) -> OffsetCommit:
    """An OffsetCommit from outside the group's membership (a consumer with manual assignment, an
    admin tool): no member id, generation -1, no instance id. Kafka stores it only while the group
    has no members (``OffsetMetadataManager.validateOffsetCommit``)."""
    return OffsetCommit(
        client=client,
        member_id=NO_MEMBER_ID,
        generation_id=NO_GENERATION,
        offsets=offsets,
        version=version,
    )


@dataclass(slots=True, kw_only=True)
class ClientView:
    """What one client knows, learned only from its own responses.

    Mutable on purpose: it is one driver's running knowledge of one client, updated by
    :meth:`learn` after every answer; the commands built from it are frozen records."""

    client: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None
    protocols: tuple[str, ...]
    metadata: str = ""  # each protocol's metadata: the subscription (:func:`subscription`)
    member_id: str = NO_MEMBER_ID
    generation_id: int = NO_GENERATION
    protocol_name: str | None = None
    leader: bool = False
    members: tuple[str, ...] = ()
    subscriptions: tuple[tuple[str, str], ...] = ()  # (member id, metadata) from the leader's join
    previous_member_id: str | None = None  # the id it had before it restarted (a "zombie" id)

    # ---------------------------------------------------------------- what it learns
    def learn(self, response: Response) -> None:
        """Update from the answer to one of this client's own requests (module docstring)."""
        if isinstance(response, JoinGroupResponse):
            if response.error == NONE:
                self.member_id = response.member_id
                self.generation_id = response.generation_id
                self.protocol_name = response.protocol_name
                self.leader = response.leader == response.member_id
                self.members = tuple(m.member_id for m in response.members)
                self.subscriptions = tuple((m.member_id, m.metadata) for m in response.members)
            elif response.error == MEMBER_ID_REQUIRED:
                self.member_id = response.member_id
            elif response.error in (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID):
                self.member_id = NO_MEMBER_ID
                self.generation_id = NO_GENERATION
        elif response.error == UNKNOWN_MEMBER_ID and isinstance(
            response, SyncGroupResponse | HeartbeatResponse
        ):
            self.member_id = NO_MEMBER_ID
            self.generation_id = NO_GENERATION

    def restart(self) -> None:
        """The client process restarts: it forgets its membership, and remembers the member id it
        had as :attr:`previous_member_id` (what a zombie of it sends)."""
        if self.member_id:
            self.previous_member_id = self.member_id
        self.member_id, self.generation_id, self.leader = NO_MEMBER_ID, NO_GENERATION, False
        self.protocol_name, self.members, self.subscriptions = None, (), ()

    def generation(self, which: str) -> int:
        """The generation id a request names for ``which`` (one of :data:`GENERATIONS`)."""
        if which == "current":
            return self.generation_id
        if which == "stale":
            return self.generation_id - 1
        if which == "none":
            return NO_GENERATION
        raise ValueError(f"generation {which!r}: use one of {GENERATIONS}")

    def assignments(
        self, assign: Callable[[tuple[str, ...]], tuple[Assignment, ...]]
    ) -> tuple[Assignment, ...]:
        """What this client's SyncGroup assigns: ``assign(members)`` over the members its join
        answer listed if that answer made it leader; nothing for a follower."""
        return assign(self.members) if (self.leader and self.members) else ()

    # ---------------------------------------------------------------- what it sends
    def join_group(
        self,
        *,
        version: int,
        member_id: str | None = None,
        session_timeout_ms: int | None = None,
    ) -> JoinGroup:
        """JoinGroup with its own member id (or ``member_id``: ``""`` to join as new), its
        settings (or another ``session_timeout_ms``) and its protocols."""
        return JoinGroup(
            client=self.client,
            member_id=self.member_id if member_id is None else member_id,
            group_instance_id=instance_id("JoinGroup", version, self.group_instance_id),
            session_timeout_ms=session_timeout_ms or self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            protocol_type=PROTOCOL_TYPE,
            protocols=tuple(Protocol(name=p, metadata=self.metadata) for p in self.protocols),
            version=version,
        )

    def sync_group(
        self,
        *,
        version: int,
        generation: str = "current",
        assignments: tuple[Assignment, ...] = (),
    ) -> SyncGroup:
        """SyncGroup for its generation (``generation``: :data:`GENERATIONS`) with
        ``assignments`` (:meth:`assignments`: a leader's, none from a follower)."""
        return self._sync_group(self.member_id, self.generation(generation), version, assignments)

    def heartbeat(self, *, version: int, generation: str = "current") -> Heartbeat:
        """Heartbeat with its member id and ``generation`` (:data:`GENERATIONS`)."""
        return self._heartbeat(self.member_id, self.generation(generation), version)

    def offset_commit(
        self,
        *,
        version: int,
        offsets: tuple[TopicPartitionOffset, ...],
        generation: str = "current",
    ) -> OffsetCommit:
        """OffsetCommit of ``offsets`` as a member (``generation``: :data:`GENERATIONS`), or with
        ``generation="simple"`` from outside the membership (:func:`simple_commit`)."""
        if generation == "simple":
            return simple_commit(self.client, offsets=offsets, version=version)
        return self._offset_commit(self.member_id, self.generation(generation), version, offsets)

    def can_leave(self, who: str) -> bool:
        """Whether :meth:`leave_group` has someone to name for ``who`` (:data:`LEAVERS`): a
        static client for ``instance``; for ``self``, a client with a member id or an instance
        id."""
        if who == "instance":
            return self.group_instance_id is not None
        if who == "self":
            return bool(self.member_id) or self.group_instance_id is not None
        if who == "stranger":
            return True
        raise ValueError(f"leave {who!r}: use one of {LEAVERS}")

    def leave_group(self, *, version: int, who: str = "self") -> LeaveGroup | None:
        """LeaveGroup naming ``who`` (:data:`LEAVERS`); ``None`` when :meth:`can_leave` says
        there is no one to name. Leaving by instance needs v3+: an older ``version`` is raised to
        v3."""
        if not self.can_leave(who):
            return None
        if who == "instance":
            identity = MemberIdentity(
                member_id=NO_MEMBER_ID, group_instance_id=self.group_instance_id
            )
            version = max(version, INSTANCE_ID_SINCE["LeaveGroup"])
        elif who == "stranger":
            identity = MemberIdentity(member_id=STRANGER)
        else:
            identity = MemberIdentity(
                member_id=self.member_id,
                group_instance_id=instance_id("LeaveGroup", version, self.group_instance_id),
            )
        return LeaveGroup(client=self.client, members=(identity,), version=version)

    def offset_fetch(self, *, version: int, partitions: tuple[TopicPartition, ...]) -> OffsetFetch:
        return OffsetFetch(client=self.client, partitions=partitions, version=version)

    def describe_groups(self, *, version: int) -> DescribeGroups:
        return DescribeGroups(client=self.client, version=version)

    def find_coordinator(self, *, version: int) -> FindCoordinator:
        return FindCoordinator(client=self.client, version=version)

    def zombie(
        self, api: str, *, version: int, offsets: tuple[TopicPartitionOffset, ...] = ()
    ) -> Request | None:
        """Request ``api`` (:data:`ZOMBIE_APIS`) carrying this client's ``group.instance.id`` with
        a member id that is not the instance's current one — the id it had before it restarted,
        else a stranger's — and its generation (0 if it has none): a fenced zombie (KIP-345).
        ``version`` is raised to the first that carries the instance id; an OffsetCommit commits
        ``offsets``. ``None`` for a dynamic client."""
        if self.group_instance_id is None:
            return None
        member_id = self.previous_member_id or STRANGER
        if member_id == self.member_id:
            member_id = STRANGER
        generation = max(self.generation_id, 0)
        version = max(version, INSTANCE_ID_SINCE[api])
        if api == "Heartbeat":
            return self._heartbeat(member_id, generation, version)
        if api == "SyncGroup":
            return self._sync_group(member_id, generation, version, ())
        if api == "OffsetCommit":
            return self._offset_commit(member_id, generation, version, offsets)
        if api == "JoinGroup":
            return self.join_group(version=version, member_id=member_id)
        if api == "LeaveGroup":
            identity = MemberIdentity(member_id=member_id, group_instance_id=self.group_instance_id)
            return LeaveGroup(client=self.client, members=(identity,), version=version)
        raise ValueError(f"zombie {api!r}: use one of {ZOMBIE_APIS}")

    def _sync_group(
        self, member_id: str, generation_id: int, version: int, assignments: tuple[Assignment, ...]
    ) -> SyncGroup:
        protocols = version >= SYNC_PROTOCOL_SINCE
        return SyncGroup(
            client=self.client,
            member_id=member_id,
            generation_id=generation_id,
            group_instance_id=instance_id("SyncGroup", version, self.group_instance_id),
            protocol_type=PROTOCOL_TYPE if protocols else None,
            protocol_name=self.protocol_name if protocols else None,
            assignments=assignments,
            version=version,
        )

    def _heartbeat(self, member_id: str, generation_id: int, version: int) -> Heartbeat:
        return Heartbeat(
            client=self.client,
            member_id=member_id,
            generation_id=generation_id,
            group_instance_id=instance_id("Heartbeat", version, self.group_instance_id),
            version=version,
        )

    def _offset_commit(
        self,
        member_id: str,
        generation_id: int,
        version: int,
        offsets: tuple[TopicPartitionOffset, ...],
    ) -> OffsetCommit:
        return OffsetCommit(
            client=self.client,
            member_id=member_id,
            generation_id=generation_id,
            group_instance_id=instance_id("OffsetCommit", version, self.group_instance_id),
            offsets=offsets,
            version=version,
        )
