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

A KIP-848 consumer (``group.protocol=consumer``; ``ConsumerMembershipManager`` /
``AbstractMembershipManager`` in ``clients/.../consumer/internals``) is :class:`ConsumerView`: it
picks its own member id (KIP-1082), joins with epoch 0 and a full ConsumerGroupHeartbeat, then
heartbeats with the epoch it was last given and the partitions it owns after reconciling at once;
on ``FENCED_MEMBER_EPOCH``, ``UNKNOWN_MEMBER_ID`` or ``GROUP_ID_NOT_FOUND`` (and after its own
leave) it drops its partitions and joins again with epoch 0 and the same id
(:func:`left_group`). Its version gates: the versions it sends are :data:`CONSUMER_VERSIONS`
(:func:`consumer_version`); ``SubscribedTopicRegex`` exists from ConsumerGroupHeartbeat v1
(:data:`REGEX_SINCE`, ``ConsumerGroupHeartbeatRequest.json``); OffsetFetch names the member and its
epoch from v9 (:data:`MEMBER_FETCH_SINCE`, ``OffsetFetchRequest.json``); OffsetCommit carries the
instance id from v7 (:data:`INSTANCE_ID_SINCE`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from kgc.model.commands import (
    NO_GENERATION,
    NO_MEMBER_ID,
    AddOffsetsToTxn,
    Assignment,
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    DeleteGroups,
    DescribeGroups,
    EndTxn,
    EndTxnResponse,
    FindCoordinator,
    Heartbeat,
    HeartbeatResponse,
    InitProducerId,
    InitProducerIdResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    ListGroups,
    MemberIdentity,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    Protocol,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
    TopicPartition,
    TopicPartitionOffset,
    TxnOffsetCommit,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    GROUP_ID_NOT_FOUND,
    MEMBER_ID_REQUIRED,
    NONE,
    UNKNOWN_MEMBER_ID,
)

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
#: The first ListGroups versions that carry ``StatesFilter`` (KIP-518) and ``TypesFilter``
#: (KIP-848) (``ListGroupsRequest.json``).
LIST_STATES_SINCE = 4
LIST_TYPES_SINCE = 5
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

    def list_groups(
        self,
        *,
        version: int,
        states_filter: tuple[str, ...] = (),
        types_filter: tuple[str, ...] = (),
    ) -> ListGroups:
        """ListGroups with each filter only from the first version that carries it
        (:data:`LIST_STATES_SINCE`, :data:`LIST_TYPES_SINCE`): below it, no filter."""
        return ListGroups(
            client=self.client,
            states_filter=states_filter if version >= LIST_STATES_SINCE else (),
            types_filter=types_filter if version >= LIST_TYPES_SINCE else (),
            version=version,
        )

    def delete_groups(self, *, version: int) -> DeleteGroups:
        """DeleteGroups of the run's group, as an admin client sends it (a member's client can:
        the request names no member)."""
        return DeleteGroups(client=self.client, version=version)

    def offset_delete(
        self, *, version: int, partitions: tuple[TopicPartition, ...]
    ) -> OffsetDelete:
        """OffsetDelete of the group's offsets of ``partitions`` (an admin request, as above)."""
        return OffsetDelete(client=self.client, partitions=partitions, version=version)

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


# ---------------------------------------------------------------------- the KIP-848 consumer

#: The versions a KIP-848 consumer sends of each request, in draw order (a rule's version index
#: picks the first most often); the one table of them, read by the state machines and by the
#: differential suite, which negotiates within it (``conformance/drivers/suite.py``).
#: ConsumerGroupHeartbeat and ConsumerGroupDescribe: v0-1, what Kafka's message specs (and so
#: kgc's wire layer) encode; Kafka 4.x accepts both, and v1 requires a client-chosen member id
#: (KIP-1082). OffsetCommit and OffsetFetch: v9 (member id and epoch), v10 (topics by id), v8
#: (before KIP-848's member epochs: a consumer member's commit is ``UNSUPPORTED_VERSION``).
CONSUMER_VERSIONS: Final[dict[str, tuple[int, ...]]] = {
    "ConsumerGroupHeartbeat": (0, 1),
    "ConsumerGroupDescribe": (0, 1),
    "OffsetCommit": (9, 10, 8),
    "OffsetFetch": (9, 10, 8),
}
#: The first ConsumerGroupHeartbeat version that carries ``SubscribedTopicRegex``.
REGEX_SINCE = 1
#: The first OffsetFetch version that names a member and its epoch (KIP-848).
MEMBER_FETCH_SINCE = 9
#: Answers after which a consumer is out of the group (:func:`left_group`).
OUT_OF_GROUP = (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND)
#: What a heartbeat reports as owned (:meth:`ConsumerView.heartbeat`): the partitions it holds
#: after reconciling the last assignment, what it reported before, or nothing (the field left
#: out, as when nothing changed).
OWNED_REPORTS = ("acked", "stale", "null")
#: The epoch an OffsetCommit names (:meth:`ConsumerView.commit_epoch`).
COMMIT_EPOCHS = ("current", "previous", "ahead", "zero", "none")
#: Whom an OffsetFetch names (:meth:`ConsumerView.offset_fetch`).
FETCH_AS = ("admin", "member", "stale", "stranger")


def consumer_versions(api: str, negotiated: Mapping[str, Sequence[int]]) -> tuple[int, ...]:
    """The versions of ``api`` a consumer draws from: :data:`CONSUMER_VERSIONS`'s, in its order,
    among those ``negotiated`` lists for ``api`` (all of them when it lists none for ``api``)."""
    ours = CONSUMER_VERSIONS[api]
    offered = negotiated.get(api)
    return ours if offered is None else tuple(v for v in ours if v in offered)


def consumer_version(api: str, index: int, negotiated: Mapping[str, Sequence[int]]) -> int | None:
    """The ``index``-th (wrapping) of :func:`consumer_versions`; ``None`` when the target speaks
    none of them. The index is drawn as a plain rule argument, so what is drawn never depends on
    what a broker answered."""
    choices = consumer_versions(api, negotiated)
    return choices[index % len(choices)] if choices else None


def left_group(request: ConsumerGroupHeartbeat, response: ConsumerGroupHeartbeatResponse) -> bool:
    """Whether ``response`` puts the consumer that sent ``request`` out of the group: fenced, or
    unknown, or its group gone (:data:`OUT_OF_GROUP`), or its own leave (epoch -1, or -2 for a
    static member) accepted."""
    return response.error in OUT_OF_GROUP or (response.error == NONE and request.member_epoch < 0)


@dataclass(slots=True, kw_only=True)
class ConsumerView:
    """What one KIP-848 consumer knows, learned only from its own answers (module docstring).

    Mutable on purpose, as :class:`ClientView`: one driver's running knowledge of one consumer,
    updated by :meth:`learn`; the commands built from it are frozen records."""

    client: str
    rebalance_timeout_ms: int
    topics: tuple[str, ...]  # the topic names it subscribes to while it has no regex
    instance_id: str | None = None  # a static member (KIP-848 keeps KIP-345's group.instance.id)
    server_assignor: str | None = None  # ``group.remote.assignor``; None: the broker's default
    regex: str | None = None  # its subscription: this regex, or (None) :attr:`topics` by name
    ids: int = 0  # member ids this client has used
    member_id: str = NO_MEMBER_ID
    member_epoch: int = 0  # 0: not in the group (or fenced); the next heartbeat joins
    owned: tuple[TopicPartition, ...] = ()  # as reconciled from the last assignment received
    reported: tuple[TopicPartition, ...] | None = None  # owned set in the last heartbeat sent

    # ---------------------------------------------------------------- what it learns
    def fresh_id(self) -> str:
        """A member id of its own (KIP-1082), new each time: ``<client>-<n>``."""
        self.ids += 1
        self.member_id = f"{self.client}-{self.ids}"
        return self.member_id

    def stranger_id(self) -> str:
        """A member id the group never saw (what a confused client names)."""
        return f"{self.client}-{STRANGER}"

    def restart(self) -> None:
        """The consumer process restarts: a new member id, epoch 0, nothing owned."""
        self.fresh_id()
        self.member_epoch, self.owned, self.reported = 0, (), None

    def learn(self, request: Request, response: Response) -> None:
        """Update from the answer to one of this consumer's own heartbeats; an answer about
        another identity (a bogus one it was made to send) teaches it nothing."""
        if not isinstance(request, ConsumerGroupHeartbeat) or not isinstance(
            response, ConsumerGroupHeartbeatResponse
        ):
            return
        if request.member_id != self.member_id:
            return
        if left_group(request, response):
            self.member_epoch, self.owned, self.reported = 0, (), None
        elif response.error == NONE:
            self.member_epoch = response.member_epoch
            if response.assignment is not None:
                self.owned = response.assignment  # reconciled at once

    # ---------------------------------------------------------------- what it sends
    def heartbeat(
        self,
        *,
        index: int,
        negotiated: Mapping[str, Sequence[int]],
        epoch: int | None = None,
        owned: str = "acked",
        member_id: str | None = None,
        changes: Mapping[str, Any] | None = None,
    ) -> ConsumerGroupHeartbeat | None:
        """ConsumerGroupHeartbeat at the ``index``-th version the target speaks
        (:func:`consumer_version` over ``negotiated``): a join (epoch 0, a full request, taking a
        member id first if it has none) when it is not in the group or ``epoch`` is 0, else one
        at its epoch (or ``epoch``) reporting what it owns as ``owned`` (:data:`OWNED_REPORTS`).
        ``member_id`` sends under another id; ``changes`` replace fields, the version too (what
        a broken client sends). A regex goes at v1 at least (:data:`REGEX_SINCE`), if the target
        speaks it. ``None`` when there is nothing to send: no version, or none for a regex."""
        versions = consumer_versions("ConsumerGroupHeartbeat", negotiated)
        if not versions:
            return None
        version = versions[index % len(versions)]
        joining = self.member_epoch == 0 if epoch is None else epoch == 0
        if joining and not self.member_id:
            self.fresh_id()
        command = ConsumerGroupHeartbeat(
            client=self.client,
            member_id=self.member_id if member_id is None else member_id,
            member_epoch=self.member_epoch if epoch is None else epoch,
            instance_id=self.instance_id,
            version=version,
        )
        if joining:
            command = replace(
                command,
                rebalance_timeout_ms=self.rebalance_timeout_ms,
                server_assignor=self.server_assignor,
                topic_partitions=(),
                subscribed_topic_names=self.topics if self.regex is None else None,
                subscribed_topic_regex=self.regex,
            )
        else:
            command = replace(command, topic_partitions=self._report(owned))
        if changes:
            command = replace(command, **changes)
        if command.subscribed_topic_regex is not None and command.version < REGEX_SINCE:
            if REGEX_SINCE not in versions:
                return None
            command = replace(command, version=REGEX_SINCE)
        if member_id is None and command.topic_partitions is not None:
            self.reported = command.topic_partitions
        return command

    def _report(self, owned: str) -> tuple[TopicPartition, ...] | None:
        if owned == "acked":
            return self.owned
        if owned == "stale":
            return self.reported if self.reported is not None else self.owned
        if owned == "null":
            return None
        raise ValueError(f"owned {owned!r}: use one of {OWNED_REPORTS}")

    def describe(self, *, version: int) -> ConsumerGroupDescribe:
        return ConsumerGroupDescribe(client=self.client, version=version)

    def commit_epoch(self, which: str) -> int:
        """The epoch an OffsetCommit names for ``which`` (:data:`COMMIT_EPOCHS`): its own, the
        previous one (a commit racing a reconciliation), one ahead, 0, or -1 (as an admin)."""
        epochs = {
            "current": self.member_epoch,
            "previous": self.member_epoch - 1,
            "ahead": self.member_epoch + 1,
            "zero": 0,
            "none": -1,
        }
        if which not in epochs:
            raise ValueError(f"commit epoch {which!r}: use one of {COMMIT_EPOCHS}")
        return epochs[which]

    def offset_commit(
        self, *, version: int, offsets: tuple[TopicPartitionOffset, ...], epoch: str = "current"
    ) -> OffsetCommit:
        """OffsetCommit of ``offsets`` as a consumer-protocol member (v9+: its member id and the
        epoch ``epoch`` names, :meth:`commit_epoch`)."""
        return OffsetCommit(
            client=self.client,
            member_id=self.member_id,
            generation_id=self.commit_epoch(epoch),
            group_instance_id=instance_id("OffsetCommit", version, self.instance_id),
            offsets=offsets,
            version=version,
        )

    def offset_fetch(
        self, *, version: int, partitions: tuple[TopicPartition, ...], who: str = "admin"
    ) -> OffsetFetch:
        """OffsetFetch of ``partitions`` naming ``who`` (:data:`FETCH_AS`): nobody (an admin),
        or from v9 (:data:`MEMBER_FETCH_SINCE`) the member at its epoch, at the epoch before, or
        an id the group never saw. Before v9, or with no member id yet, it names nobody."""
        if version < MEMBER_FETCH_SINCE or who == "admin" or not self.member_id:
            return OffsetFetch(client=self.client, partitions=partitions, version=version)
        named = {
            "member": (self.member_id, self.member_epoch),
            "stale": (self.member_id, self.member_epoch - 1),
            "stranger": (self.stranger_id(), 1),
        }
        if who not in named:
            raise ValueError(f"fetch as {who!r}: use one of {FETCH_AS}")
        member_id, member_epoch = named[who]
        return OffsetFetch(
            client=self.client,
            partitions=partitions,
            version=version,
            member_id=member_id,
            member_epoch=member_epoch,
        )


# ------------------------------------------------------------------ the transactional producer


@dataclass(slots=True)
class ProducerView:
    """What a transactional producer (one simulated client, one symbolic transactional id) knows,
    learned only from its own answers: its producer id and epoch, and the epoch it had before
    another InitProducerId fenced it (what a zombie of it sends). The offsets it commits in a
    transaction are a consumer's: :meth:`txn_offset_commit` takes that consumer's member id and
    generation (``classic/transactions.py``)."""

    client: str
    transactional_id: str
    producer_id: int = -1
    producer_epoch: int = -1
    fenced_epoch: int | None = None  # the epoch a later InitProducerId fenced

    def learn(self, response: Response) -> None:
        if isinstance(response, InitProducerIdResponse) and response.error == NONE:
            if self.producer_epoch >= 0:
                self.fenced_epoch = self.producer_epoch
            self.producer_id, self.producer_epoch = response.producer_id, response.producer_epoch
        elif (
            isinstance(response, EndTxnResponse)
            and response.error == NONE
            and response.producer_epoch >= 0  # v5 (KIP-890): the epoch to go on with
        ):
            self.producer_epoch = response.producer_epoch

    def epoch(self, which: str) -> int:
        """``current``, or ``fenced``: the one before the last InitProducerId (else current)."""
        if which == "fenced" and self.fenced_epoch is not None:
            return self.fenced_epoch
        return self.producer_epoch

    def init_producer_id(self, *, version: int) -> InitProducerId:
        return InitProducerId(
            client=self.client, transactional_id=self.transactional_id, version=version
        )

    def add_offsets_to_txn(self, *, version: int, epoch: str = "current") -> AddOffsetsToTxn:
        return AddOffsetsToTxn(
            client=self.client,
            transactional_id=self.transactional_id,
            producer_id=self.producer_id,
            producer_epoch=self.epoch(epoch),
            version=version,
        )

    def txn_offset_commit(
        self,
        *,
        version: int,
        offsets: tuple[TopicPartitionOffset, ...],
        member_id: str = NO_MEMBER_ID,
        generation_id: int = NO_GENERATION,
        group_instance_id: str | None = None,
        epoch: str = "current",
    ) -> TxnOffsetCommit:
        """TxnOffsetCommit; the member fields only from v3, which carries them (KIP-447)."""
        member = version >= 3
        return TxnOffsetCommit(
            client=self.client,
            transactional_id=self.transactional_id,
            producer_id=self.producer_id,
            producer_epoch=self.epoch(epoch),
            member_id=member_id if member else NO_MEMBER_ID,
            generation_id=generation_id if member else NO_GENERATION,
            group_instance_id=group_instance_id if member else None,
            offsets=offsets,
            version=version,
        )

    def end_txn(self, *, version: int, committed: bool, epoch: str = "current") -> EndTxn:
        return EndTxn(
            client=self.client,
            transactional_id=self.transactional_id,
            producer_id=self.producer_id,
            producer_epoch=self.epoch(epoch),
            committed=committed,
            version=version,
        )
