"""The transactional offsets path: InitProducerId, AddOffsetsToTxn, TxnOffsetCommit, EndTxn, and
what their pending offsets do to OffsetFetch (``require_stable``), plain commits and deletions.

The group side is modelled exactly; the transaction coordinator only as far as the group side
needs it: per transactional id its symbolic producer id, epoch, ``TransactionState`` and whether
the group's offsets partition is in the transaction (``state.Producer``). Sources, 4.3.1 (Java
group coordinator, Scala transaction coordinator): ``OffsetMetadataManager``
(``validateTransactionalOffsetCommit``, ``commitTransactionalOffset``, ``fetchOffsets``,
``fetchAllOffsets``, ``replay``, ``replayEndTransactionMarker``, ``deleteOffsets``,
``deleteAllOffsets``, ``cleanupExpiredOffsets``), ``ClassicGroup.validateOffsetCommit``,
``GroupCoordinatorService.commitTransactionalOffsets``, ``CoordinatorRuntime
.scheduleTransactionalWriteOperation``, ``CoordinatorPartitionWriter
.maybeStartTransactionVerification``, ``ReplicaManager
.maybeSendPartitionsToTransactionCoordinator``,
``KafkaApis.handleInitProducerIdRequest`` / ``handleAddOffsetsToTxnRequest`` /
``handleTxnOffsetCommitRequest`` / ``handleEndTxnRequest``, ``TransactionCoordinator
.handleInitProducerId`` / ``prepareInitProducerIdTransit`` / ``handleAddPartitionsToTransaction`` /
``handleVerifyPartitionsInTransaction`` / ``endTransactionWithTV1`` / ``endTransaction``,
``TransactionMetadata.prepareIncrementProducerEpoch`` / ``prepareFenceProducerEpoch`` /
``prepareAbortOrCommit`` / ``prepareComplete``. 3.9.2 (Scala group coordinator):
``GroupCoordinator.handleTxnCommitOffsets`` / ``doTxnCommitOffsets`` / ``validateOffsetCommit``,
``GroupMetadataManager.getOffsets`` / ``maybeConvertOffsetCommitError``, ``GroupMetadata
.prepareTxnOffsetCommit`` / ``completePendingTxnOffsetCommit`` /
``hasPendingOffsetCommitsForTopicPartition`` / ``removeOffsets`` / ``hasOffsets``,
``AddPartitionsToTxnManager`` (the error mapping), the same transaction coordinator.

T1. InitProducerId (transactional id given, timeout valid): an unknown transactional id gets the
    next producer id at epoch 0, Empty. Empty, CompleteCommit, CompleteAbort: epoch + 1, Empty,
    ``NONE`` (``prepareIncrementProducerEpoch``; epoch exhaustion is not modelled). PrepareCommit,
    PrepareAbort: ``CONCURRENT_TRANSACTIONS``. Ongoing: the old epoch is fenced: epoch + 1,
    PrepareAbort (markers on their way, T9), answered ``CONCURRENT_TRANSACTIONS``; the retry after
    the abort completed bumps once more (``prepareFenceProducerEpoch``, then the abort; 3.9 and 4.x
    reach the same epochs). Errors carry producer id and epoch -1.
T2. AddOffsetsToTxn (``handleAddPartitionsToTransaction`` with the offsets partition): an unknown
    transactional id or another producer id ``INVALID_PRODUCER_ID_MAPPING``; another epoch
    ``PRODUCER_FENCED`` (v0-1: ``INVALID_PRODUCER_EPOCH``, ``KafkaApis``); PrepareCommit,
    PrepareAbort ``CONCURRENT_TRANSACTIONS``; otherwise ``NONE`` and the transaction is Ongoing
    with the offsets partition.
T3. TxnOffsetCommit is verified with the transaction coordinator before the group reads it. When
    the group already holds pending offsets of this producer id (its transaction is open in the
    offsets partition's log), none is asked: at their epoch it passes, below it is
    ``INVALID_PRODUCER_EPOCH`` (``UnifiedLog.maybeStartTransactionVerification`` returns the
    sentinel; the producer state refuses an older epoch). Otherwise: an unknown transactional id
    or another producer id ``INVALID_PRODUCER_ID_MAPPING``; another epoch ``INVALID_PRODUCER_EPOCH``
    (``PRODUCER_FENCED`` mapped by ``AddPartitionsToTxnManager``); PrepareCommit, PrepareAbort
    ``CONCURRENT_TRANSACTIONS``. Then v5 (transaction version 2, 4.x) adds the offsets partition to
    the transaction itself (``handleAddPartitionsToTransaction`` with TV2; KIP-890); v0-4 need it
    added: else ``TRANSACTION_ABORTABLE`` (v4) or ``INVALID_TXN_STATE`` (v0-3,
    ``AddPartitionsToTxnManager``'s mapping for old clients). A verification error answers every
    partition.
T4. The group: 4.x, after verification, a group that does not exist is created as a simple group
    (Empty, no protocol type) for a generation < 0, else ``ILLEGAL_GENERATION``. 3.9 creates it
    Empty before the verification, whatever the generation (``Profile
    .txn_commit_creates_group_first``). Then ``validateOffsetCommit`` with ``isTransactional``:
    a generation < 0 in an Empty group commits; a generation >= 0, a member id or an instance id
    is validated as a member (``UNKNOWN_MEMBER_ID`` / ``FENCED_INSTANCE_ID``) and must name the
    group's generation (``ILLEGAL_GENERATION``); with none of them any group takes it. Unlike a
    plain commit, CompletingRebalance is no ``REBALANCE_IN_PROGRESS`` and a non-Empty group takes a
    memberless commit. v0-2 carry no member fields. A TxnOffsetCommit restarts no session.
T5. Per partition: unknown topics ``UNKNOWN_TOPIC_OR_PARTITION`` (the broker, first); metadata
    over ``offset.metadata.max.bytes`` ``OFFSET_METADATA_TOO_LARGE``; else the offset is pending
    for the producer (its earlier pending offset of the partition replaced), leader epoch from v2.
T6. OffsetFetch with ``require_stable`` (v7+): a partition any transaction holds a pending offset
    for is answered ``UNSTABLE_OFFSET_COMMIT`` with offset -1, leader epoch -1, metadata ``""``;
    the answer's top-level error stays ``NONE`` (a partition error at every version, 4.x
    ``fetchOffsets``/``fetchAllOffsets``, 3.9 ``getOffsets``). Without it pending offsets are
    invisible: the committed offset is answered.
T7. EndTxn, transaction version 1 (v0-4; every version on 3.9): an unknown transactional id or
    another producer id ``INVALID_PRODUCER_ID_MAPPING``; another epoch ``PRODUCER_FENCED`` (v0-1:
    ``INVALID_PRODUCER_EPOCH``); Ongoing: PrepareCommit/PrepareAbort, answered ``NONE`` at once
    (T9); CompleteCommit takes a commit again (``NONE``), CompleteAbort an abort; PrepareCommit
    answers a commit, PrepareAbort an abort ``CONCURRENT_TRANSACTIONS``; every other pair, and
    Empty, ``INVALID_TXN_STATE``.
T8. EndTxn v5, transaction version 2 (4.x, KIP-890): the epoch is bumped on every end and answered
    (``prepareAbortOrCommit``). The epoch must be the current one in Empty and Ongoing, the
    current one or the one before (a retry) when complete, the one before in PrepareCommit and
    PrepareAbort; else ``PRODUCER_FENCED``. Ongoing: Prepare*, epoch + 1, ``NONE`` naming it. A
    retry (the epoch before) of the same end ``NONE`` naming the current epoch; an abort with the
    current epoch in Empty, CompleteCommit or CompleteAbort aborts an empty transaction: epoch + 1,
    ``NONE``. Everything else as T7 (``INVALID_TXN_STATE``, ``CONCURRENT_TRANSACTIONS``). Errors
    name producer id and epoch -1; below v5 the answer has no such fields (-1).
T9. EndTxn is answered before the markers are written (``endTransaction``: "we can respond to
    the client immediately and continue to write the txn markers";
    ``TransactionMarkerChannelManager.addTxnMarkersToSend``): the group's marker
    (``WriteTxnMarkers`` → ``GroupCoordinator.completeTransaction`` →
    ``replayEndTransactionMarker``;
    3.9 ``scheduleHandleTxnCompletion`` → ``completePendingTxnOffsetCommit``) then the
    transaction's completion (``prepareComplete``) come later. So from the answer on, each request
    the coordinator handles may find neither done, the group's marker written, or both — an
    explicit choice the first observation resolves, never undone — and by
    :data:`MARKERS_WRITTEN_WITHIN_MS` after the answer both are done (measured on 4.3.1, an idle
    single-node broker: ``UNSTABLE_OFFSET_COMMIT`` for 20-30 ms after a commit's answer, 7 ms
    after an abort's; the bound leaves a loaded 2-core machine two orders of magnitude). The
    commit marker moves the producer's pending offsets to the committed ones unless a plain commit
    of the partition was written after them (the later record wins); the abort marker drops them.
T10. Pending offsets and the group: a plain OffsetCommit of a partition supersedes the pending
    offsets written before it (T9); OffsetDelete drops the pending offsets of the partitions it
    deletes and DeleteGroups all of them (4.x tombstones replayed over ``openTransactions``; 3.9
    ``removeOffsets``); a group with pending offsets is kept by the cleanup and by 3.9's
    OffsetDelete (``hasOffsets``; 4.x ``cleanupExpiredOffsets``); DescribeGroups does not show
    them (a group a TxnOffsetCommit made is Empty with protocol type ``""``).
"""

from __future__ import annotations

from dataclasses import replace

from kgc.model.classic.state import EMPTY, CommittedOffset, PendingTxnOffset, Producer
from kgc.model.classic.txn import Txn, split_unknown_partitions
from kgc.model.commands import (
    AddOffsetsToTxn,
    AddOffsetsToTxnResponse,
    EndTxn,
    EndTxnResponse,
    InitProducerId,
    InitProducerIdResponse,
    PartitionError,
    TxnOffsetCommit,
    TxnOffsetCommitResponse,
)
from kgc.model.errors import (
    CONCURRENT_TRANSACTIONS,
    ILLEGAL_GENERATION,
    INVALID_PRODUCER_EPOCH,
    INVALID_PRODUCER_ID_MAPPING,
    INVALID_TXN_STATE,
    NONE,
    OFFSET_METADATA_TOO_LARGE,
    PRODUCER_FENCED,
    TRANSACTION_ABORTABLE,
)

# Kafka's ``TransactionState`` names
TXN_EMPTY = "Empty"
ONGOING = "Ongoing"
PREPARE_COMMIT = "PrepareCommit"
PREPARE_ABORT = "PrepareAbort"
COMPLETE_COMMIT = "CompleteCommit"
COMPLETE_ABORT = "CompleteAbort"
PREPARING = (PREPARE_COMMIT, PREPARE_ABORT)

#: T9: the markers of an ended transaction are written within this long of EndTxn's answer.
MARKERS_WRITTEN_WITHIN_MS = 2000.0


def _fenced(version: int, first_version_with_it: int = 2) -> str:
    """``PRODUCER_FENCED`` as a version answers it: older clients get ``INVALID_PRODUCER_EPOCH``
    (``KafkaApis``: InitProducerId below v4, AddOffsetsToTxn and EndTxn below v2)."""
    return PRODUCER_FENCED if version >= first_version_with_it else INVALID_PRODUCER_EPOCH


# ------------------------------------------------------------------------------- T9: the markers


def settle_markers(tx: Txn) -> None:
    """T9, before any request is handled: each ended transaction's markers may have been written
    since (a choice), and are written once their deadline has passed."""
    for tid in sorted(tx.producers):
        p = tx.producers[tid]
        if p.state not in PREPARING:
            continue
        done = 1 if p.markers_written else 0
        if p.markers_deadline_ms is None or tx.now_ms >= p.markers_deadline_ms:
            target = 2
        else:
            target = tx.choose(tuple(range(done, 3)))
        if done < 1 <= target:
            _write_group_marker(tx, p)
            p = tx.producers[tid] = replace(p, markers_written=True)
        if target == 2:
            tx.producers[tid] = replace(
                p,
                state=COMPLETE_COMMIT if p.state == PREPARE_COMMIT else COMPLETE_ABORT,
                offsets_added=False,
                markers_written=False,
                markers_deadline_ms=None,
            )


def _write_group_marker(tx: Txn, p: Producer) -> None:
    mine = [o for o in tx.txn_offsets if o.producer_id == p.producer_id]
    if not mine:
        return
    tx.txn_offsets = [o for o in tx.txn_offsets if o.producer_id != p.producer_id]
    if p.state != PREPARE_COMMIT:
        return  # the abort marker drops them
    stored = tx.offsets_dict()
    for o in mine:
        if o.superseded and (o.topic, o.partition) in stored:
            continue  # a later plain commit's record wins
        stored[(o.topic, o.partition)] = CommittedOffset(
            topic=o.topic,
            partition=o.partition,
            offset=o.offset,
            metadata=o.metadata,
            leader_epoch=o.leader_epoch,
        )


def _end(tx: Txn, p: Producer, committed: bool, epoch: int) -> Producer:
    """The transaction enters PrepareCommit/PrepareAbort at ``epoch``; markers on their way."""
    ended = replace(
        p,
        state=PREPARE_COMMIT if committed else PREPARE_ABORT,
        producer_epoch=epoch,
        markers_written=False,
        markers_deadline_ms=tx.now_ms + MARKERS_WRITTEN_WITHIN_MS,
    )
    tx.producers[p.transactional_id] = ended
    return ended


# -------------------------------------------------------------------------- T1: InitProducerId


def handle_init_producer_id(tx: Txn, request_id: int, cmd: InitProducerId) -> None:
    p = tx.producers.get(cmd.transactional_id)
    if p is None:
        tx.producer_ids_issued += 1
        p = Producer(
            transactional_id=cmd.transactional_id,
            producer_id=tx.producer_ids_issued,
            producer_epoch=0,
            state=TXN_EMPTY,
        )
        tx.producers[cmd.transactional_id] = p
        tx.respond(
            request_id,
            InitProducerIdResponse(error=NONE, producer_id=p.producer_id, producer_epoch=0),
        )
        return
    if p.state in PREPARING:
        tx.respond(request_id, InitProducerIdResponse(error=CONCURRENT_TRANSACTIONS))
        return
    if p.state == ONGOING:
        _end(tx, p, committed=False, epoch=p.producer_epoch + 1)  # the old epoch fenced
        tx.respond(request_id, InitProducerIdResponse(error=CONCURRENT_TRANSACTIONS))
        return
    p = replace(p, producer_epoch=p.producer_epoch + 1, state=TXN_EMPTY, offsets_added=False)
    tx.producers[cmd.transactional_id] = p
    tx.respond(
        request_id,
        InitProducerIdResponse(
            error=NONE, producer_id=p.producer_id, producer_epoch=p.producer_epoch
        ),
    )


# ------------------------------------------------------------------------- T2: AddOffsetsToTxn


def handle_add_offsets_to_txn(tx: Txn, request_id: int, cmd: AddOffsetsToTxn) -> None:
    p = tx.producers.get(cmd.transactional_id)
    if p is None or p.producer_id != cmd.producer_id:
        error = INVALID_PRODUCER_ID_MAPPING
    elif p.producer_epoch != cmd.producer_epoch:
        error = _fenced(cmd.version)
    elif p.state in PREPARING:
        error = CONCURRENT_TRANSACTIONS
    else:
        tx.producers[cmd.transactional_id] = replace(p, state=ONGOING, offsets_added=True)
        error = NONE
    tx.respond(request_id, AddOffsetsToTxnResponse(error=error))


# ------------------------------------------------------------------- T3-T5: TxnOffsetCommit


def _verify(tx: Txn, cmd: TxnOffsetCommit) -> str | None:
    """T3: the transaction's verification, or its error."""
    open_epochs = {o.producer_epoch for o in tx.txn_offsets if o.producer_id == cmd.producer_id}
    if cmd.producer_epoch in open_epochs:
        return None  # open in the log at this epoch: not asked
    if open_epochs and cmd.producer_epoch < max(open_epochs):
        return INVALID_PRODUCER_EPOCH
    p = tx.producers.get(cmd.transactional_id)
    if p is None or p.producer_id != cmd.producer_id:
        return INVALID_PRODUCER_ID_MAPPING
    if p.producer_epoch != cmd.producer_epoch:
        return INVALID_PRODUCER_EPOCH
    if p.state in PREPARING:
        return CONCURRENT_TRANSACTIONS
    if cmd.version >= 5:  # transaction version 2: the partition is added here
        if not (p.state == ONGOING and p.offsets_added):
            tx.producers[cmd.transactional_id] = replace(p, state=ONGOING, offsets_added=True)
        return None
    if not (p.state == ONGOING and p.offsets_added):
        return TRANSACTION_ABORTABLE if cmd.version >= 4 else INVALID_TXN_STATE
    return None


def _validate(tx: Txn, cmd: TxnOffsetCommit) -> str | None:
    """T4 after the verification: the group and its member."""
    # here, not at the top: ``join`` imports ``rebalance``, which imports ``delete``, which
    # imports this module
    from kgc.model.classic.join import validate_member

    v3 = cmd.version >= 3
    generation = cmd.generation_id if v3 else -1
    member_id = cmd.member_id if v3 else ""
    instance = cmd.group_instance_id if v3 else None
    if not tx.exists:
        if generation >= 0:
            return ILLEGAL_GENERATION
        tx.exists = True  # a simple group: Empty, no protocol type
    if generation < 0 and tx.state == EMPTY:
        return None
    if generation >= 0 or member_id != "" or instance is not None:
        error = validate_member(tx, member_id, instance)
        if error is not None:
            return error
        if generation != tx.generation_id:
            return ILLEGAL_GENERATION
    return None


def handle_txn_offset_commit(tx: Txn, request_id: int, cmd: TxnOffsetCommit) -> None:
    valid, results = split_unknown_partitions(tx, cmd.offsets)
    if valid:
        if tx.profile.txn_commit_creates_group_first:
            tx.exists = True  # T4, 3.9: an Empty group before anything is checked
        error = _verify(tx, cmd)
        if error is None:
            error = _validate(tx, cmd)
        if error is not None:
            results.extend(
                PartitionError(topic=o.topic, partition=o.partition, error=error) for o in valid
            )
        else:
            limit = tx.config.offset_metadata_max_bytes
            for o in valid:
                if len(o.metadata) > limit:
                    error = OFFSET_METADATA_TOO_LARGE
                else:
                    _store_pending(
                        tx, cmd, o.topic, o.partition, o.offset, o.metadata, o.leader_epoch
                    )
                    error = NONE
                results.append(PartitionError(topic=o.topic, partition=o.partition, error=error))
    results.sort(key=lambda r: (r.topic, r.partition))
    tx.respond(request_id, TxnOffsetCommitResponse(partitions=tuple(results)))


def _store_pending(
    tx: Txn,
    cmd: TxnOffsetCommit,
    topic: str,
    partition: int,
    offset: int,
    metadata: str,
    leader_epoch: int,
) -> None:
    tx.txn_offsets = [
        o
        for o in tx.txn_offsets
        if not (o.producer_id == cmd.producer_id and (o.topic, o.partition) == (topic, partition))
    ]
    tx.txn_offsets.append(
        PendingTxnOffset(
            producer_id=cmd.producer_id,
            producer_epoch=cmd.producer_epoch,
            topic=topic,
            partition=partition,
            offset=offset,
            metadata=metadata,
            leader_epoch=leader_epoch if cmd.version >= 2 else -1,
        )
    )


# -------------------------------------------------------------------------------- T7-T8: EndTxn


def handle_end_txn(tx: Txn, request_id: int, cmd: EndTxn) -> None:
    p = tx.producers.get(cmd.transactional_id)
    if p is None or p.producer_id != cmd.producer_id:
        tx.respond(request_id, EndTxnResponse(error=INVALID_PRODUCER_ID_MAPPING))
        return
    if cmd.version >= 5:
        _end_txn_v2(tx, request_id, cmd, p)
        return
    if cmd.producer_epoch != p.producer_epoch:
        tx.respond(request_id, EndTxnResponse(error=_fenced(cmd.version)))
        return
    if p.state == ONGOING:
        _end(tx, p, cmd.committed, p.producer_epoch)
        error = NONE
    else:
        error = _ended_error(p.state, cmd.committed)
    tx.respond(request_id, EndTxnResponse(error=error))


def _ended_error(state: str, committed: bool) -> str:
    """T7 outside Ongoing."""
    if (state, committed) in ((COMPLETE_COMMIT, True), (COMPLETE_ABORT, False)):
        return NONE
    if (state, committed) in ((PREPARE_COMMIT, True), (PREPARE_ABORT, False)):
        return CONCURRENT_TRANSACTIONS
    return INVALID_TXN_STATE


def _end_txn_v2(tx: Txn, request_id: int, cmd: EndTxn, p: Producer) -> None:
    retry = cmd.producer_epoch + 1 == p.producer_epoch
    current = cmd.producer_epoch == p.producer_epoch
    if p.state in (ONGOING, TXN_EMPTY):
        valid = current
    elif p.state in PREPARING:
        valid = retry
    else:
        valid = retry or current
    if not valid:
        tx.respond(request_id, EndTxnResponse(error=PRODUCER_FENCED))
        return
    if p.state == ONGOING:
        ended = _end(tx, p, cmd.committed, p.producer_epoch + 1)
        tx.respond(
            request_id,
            EndTxnResponse(
                error=NONE, producer_id=p.producer_id, producer_epoch=ended.producer_epoch
            ),
        )
        return
    completed = {COMPLETE_COMMIT: True, COMPLETE_ABORT: False}.get(p.state)
    if completed is not None and retry:
        error = NONE if completed == cmd.committed else INVALID_TXN_STATE
    elif p.state in (TXN_EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) and not cmd.committed:
        ended = _end(tx, replace(p, offsets_added=False), False, p.producer_epoch + 1)
        tx.respond(
            request_id,
            EndTxnResponse(
                error=NONE, producer_id=p.producer_id, producer_epoch=ended.producer_epoch
            ),
        )
        return
    elif p.state in PREPARING:
        error = _ended_error(p.state, cmd.committed)
    else:
        error = INVALID_TXN_STATE
    if error == NONE:
        answer = EndTxnResponse(
            error=NONE, producer_id=p.producer_id, producer_epoch=p.producer_epoch
        )
    else:
        answer = EndTxnResponse(error=error)
    tx.respond(request_id, answer)


# ------------------------------------------------------------ T10: the group's other requests


def supersede_pending(tx: Txn, topic: str, partition: int) -> None:
    """T10: a plain commit of ``topic``-``partition`` was written after the pending offsets."""
    tx.txn_offsets = [
        replace(o, superseded=True) if (o.topic, o.partition) == (topic, partition) else o
        for o in tx.txn_offsets
    ]


def drop_pending(tx: Txn, partitions: set[tuple[str, int]] | None = None) -> None:
    """T10: tombstones drop the pending offsets of ``partitions`` (``None``: all of them)."""
    tx.txn_offsets = [
        o
        for o in tx.txn_offsets
        if partitions is not None and (o.topic, o.partition) not in partitions
    ]


def has_pending(tx: Txn, topic: str, partition: int) -> bool:
    """T6: a transaction holds a pending offset for the partition."""
    return any((o.topic, o.partition) == (topic, partition) for o in tx.txn_offsets)
