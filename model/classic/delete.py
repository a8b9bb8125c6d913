"""DeleteGroups and OffsetDelete: deleting the group, or some of its committed offsets.

Rules. 4.x (``group-coordinator``): ``GroupCoordinatorShard.deleteGroups`` (per group:
``GroupMetadataManager.validateDeleteGroup`` → ``ClassicGroup.validateDeleteGroup``, then
``OffsetMetadataManager.deleteAllOffsets`` and the group's tombstone), ``OffsetMetadataManager
.deleteOffsets`` (``validateOffsetDelete`` → ``ClassicGroup.validateOffsetDelete``, then
``ClassicGroup.isSubscribedToTopic`` per topic), ``ClassicGroup.initNextGeneration`` /
``computeSubscribedTopics``; the answers built by ``KafkaApis.handleDeleteGroupsRequest`` /
``handleOffsetDeleteRequest`` and ``OffsetDeleteResponse.Builder.merge``. Read in apache/kafka
trunk at 1eb7644 (October 2024); the 4.3.1 jar (``javap``) makes the same calls
(``deleteGroups`` now ``createGroupTombstoneRecordsAndCancelTimers``). 3.9 (Scala, branch 3.9):
``GroupCoordinator.handleDeleteGroups`` (l.718-758), ``handleDeleteOffsets`` (l.761-810),
``GroupMetadata.isSubscribedToTopic`` (l.478) / ``computeSubscribedTopics`` (l.490) /
``initNextGeneration`` (l.574), ``GroupMetadataManager.cleanupGroupMetadata`` (l.863);
``GroupCoordinatorAdapter.deleteGroups`` / ``deleteOffsets``.

1. DeleteGroups of a group that does not exist: ``GROUP_ID_NOT_FOUND`` (4.x
   ``GroupMetadataManager.group`` throws ``GroupIdNotFoundException``; 3.9 ``groupNotExists``).
   The model has no Dead group: a deleted one does not exist.
2. DeleteGroups of a group in PreparingRebalance, CompletingRebalance or Stable:
   ``NON_EMPTY_GROUP``; the group is unchanged.
3. DeleteGroups of an Empty group (KIP-394 pending members, if any, do not count): ``NONE``; the
   group and every offset it committed are gone. A later OffsetFetch finds no offsets, and a
   JoinGroup makes a new group whose generations start again at 1 (the member ids the model named
   stay named: ``issued_ids``). Pending members go with it; their next JoinGroup names a member
   id of no group (``UNKNOWN_MEMBER_ID``, ``join.py``).
4. OffsetDelete. First the broker drops the partitions of topics it does not know
   (``UNKNOWN_TOPIC_OR_PARTITION``, only when ``GroupConfig.topics`` says which exist). Then a
   group-level error answers alone, with no partitions (4.x ``merge`` keeps only the top-level
   error; 3.9 ``getErrorResponse``): the group does not exist → ``GROUP_ID_NOT_FOUND``; the group
   has members (not Empty) and its protocol type is not ``consumer`` → ``NON_EMPTY_GROUP``.
   Otherwise each asked partition is ``NONE`` and its offset, if any, is deleted — except, in a
   group that is not Empty, the partitions of a topic the group is subscribed to (rule 5):
   ``GROUP_SUBSCRIBED_TO_TOPIC``, their offsets kept. An Empty group is subscribed to nothing
   (3.9 does not ask; 4.x's subscribed topics of an Empty group are empty or not known with no
   protocol type, so ``isSubscribedToTopic`` is false).
5. The subscribed topics are computed when a join phase completes (``initNextGeneration``) and
   kept until the next one: the union of the topics in every member's subscription for the chosen
   protocol, ``()`` for a consumer group left without members. Not known (``None``) before the
   group's first join phase completed, for another protocol type, or when a subscription does not
   parse as a ``ConsumerProtocolSubscription``: then a consumer group is subscribed to every
   topic (3.9 ``case None => true``; 4.x ``orElse(usesConsumerGroupProtocol())``). So during a
   group's first join phase every topic is subscribed, and during the join phase right after the
   group was Empty none is. The model's subscriptions are its canonical JSON
   (``client_view.subscription``); any other metadata is sent raw and does not parse.
6. 3.9 and older (``Profile.offset_delete_drops_empty_group``): an OffsetDelete that reaches the
   deletion for an Empty group left with no offsets deletes the group too (``cleanupGroupMetadata``
   turns it Dead), as rule 3 would; 4.x keeps the group.

Both are write operations in 4.x: they read the group as it is now (not at the last committed
offset, as DescribeGroups does), and answer once their records are committed.
"""

from __future__ import annotations

from kgc.model.classic.state import EMPTY
from kgc.model.classic.subscription import read_subscription
from kgc.model.classic.transactions import drop_pending
from kgc.model.classic.txn import Txn, partition_exists
from kgc.model.commands import (
    DeleteGroups,
    DeleteGroupsResponse,
    OffsetDelete,
    OffsetDeleteResponse,
    PartitionError,
)
from kgc.model.errors import (
    GROUP_ID_NOT_FOUND,
    GROUP_SUBSCRIBED_TO_TOPIC,
    NON_EMPTY_GROUP,
    NONE,
    UNKNOWN_TOPIC_OR_PARTITION,
)

CONSUMER_PROTOCOL_TYPE = "consumer"  # Kafka's ``ConsumerProtocol.PROTOCOL_TYPE``


def handle_delete_groups(tx: Txn, request_id: int, cmd: DeleteGroups) -> None:
    if not tx.exists:
        error = GROUP_ID_NOT_FOUND  # rule 1
    elif tx.state != EMPTY:
        error = NON_EMPTY_GROUP  # rule 2
    else:
        delete_group(tx)  # rule 3
        error = NONE
    tx.respond(request_id, DeleteGroupsResponse(error=error))


def handle_offset_delete(tx: Txn, request_id: int, cmd: OffsetDelete) -> None:
    known = [tp for tp in cmd.partitions if partition_exists(tx, tp.topic, tp.partition)]
    results = [
        PartitionError(topic=tp.topic, partition=tp.partition, error=UNKNOWN_TOPIC_OR_PARTITION)
        for tp in cmd.partitions
        if tp not in known
    ]
    if not tx.exists:
        tx.respond(request_id, OffsetDeleteResponse(error=GROUP_ID_NOT_FOUND))
        return
    empty = tx.state == EMPTY
    if not empty and tx.protocol_type != CONSUMER_PROTOCOL_TYPE:
        tx.respond(request_id, OffsetDeleteResponse(error=NON_EMPTY_GROUP))
        return
    stored = tx.offsets_dict()
    for tp in known:
        if not empty and is_subscribed_to_topic(tx, tp.topic):
            results.append(
                PartitionError(
                    topic=tp.topic, partition=tp.partition, error=GROUP_SUBSCRIBED_TO_TOPIC
                )
            )
            continue
        stored.pop((tp.topic, tp.partition), None)
        drop_pending(tx, {(tp.topic, tp.partition)})  # ``transactions.py`` T10
        results.append(PartitionError(topic=tp.topic, partition=tp.partition, error=NONE))
    if (
        empty
        and known
        and not stored
        and not tx.txn_offsets  # ``hasOffsets`` counts pending ones (``transactions.py`` T10)
        and tx.profile.offset_delete_drops_empty_group
    ):
        delete_group(tx)  # rule 6
    results.sort(key=lambda r: (r.topic, r.partition))
    tx.respond(request_id, OffsetDeleteResponse(error=NONE, partitions=tuple(results)))


def delete_group(tx: Txn) -> None:
    """The group and its offsets are gone (rule 3): what remains is what the model keeps about
    clients (issued and unrevealed member ids, answers in flight, a deferred request, the clock)."""
    tx.exists = False
    tx.state = EMPTY
    tx.generation_id = 0
    tx.protocol_type = None
    tx.protocol_name = None
    tx.leader = ()
    tx.members.clear()
    tx.pending_members.clear()
    tx.pending_sync.clear()
    tx.join_timer = None
    tx.sync_timer = None
    tx.new_member_added = False
    tx.offsets = ()
    drop_pending(tx)  # ``transactions.py`` T10
    tx.subscribed_topics = None
    tx.unconfirmed = False


def is_subscribed_to_topic(tx: Txn, topic: str) -> bool:
    """Rule 5, for a consumer group that is not Empty."""
    return tx.subscribed_topics is None or topic in tx.subscribed_topics


def subscribed_topics(tx: Txn) -> tuple[str, ...] | None:
    """``computeSubscribedTopics`` as ``initNextGeneration`` calls it, after the protocol is
    chosen (rule 5): sorted topics, or ``None`` when not known (a subscription the line's reader
    cannot read, ``subscription.py``; one whose failure escapes is the caller's known bug)."""
    if tx.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    if not tx.members:
        return ()
    topics: set[str] = set()
    for member in tx.members.values():
        parsed = read_subscription(
            member.metadata(tx.protocol_name),
            tx.profile.subscription_reader,
            wrapped=tx.profile.subscription_failures_wrapped,
        )
        if isinstance(parsed, str):
            return None
        topics.update(parsed)
    return tuple(sorted(topics))
