"""OffsetCommit and OffsetFetch: commits fenced by generation and member; simple commits.

Rules (4.x ``KafkaApis.handleOffsetCommitRequest`` /
``OffsetMetadataManager.validateOffsetCommit`` / ``commitOffset`` / ``fetchOffsets`` /
``fetchAllOffsets`` and ``ClassicGroup.validateOffsetCommit``;
3.9 ``KafkaApis.handleOffsetCommitRequest`` / ``GroupCoordinator.handleCommitOffsets`` /
``validateOffsetCommit`` / ``doCommitOffsets`` / ``handleFetchOffsets``):

1. Partitions of unknown topics or beyond a topic's partition count are answered
   ``UNKNOWN_TOPIC_OR_PARTITION`` by the broker before the coordinator sees the request (only when
   ``GroupConfig.topics`` says which topics exist).
2. Group-level validation, whose error goes to every remaining partition:
   no such group: generation < 0 creates a *simple* group (Empty, no protocol type) and commits;
   generation >= 0 is ``ILLEGAL_GENERATION`` (4.x v9+: ``GROUP_ID_NOT_FOUND``).
   Existing group: generation < 0 in Empty commits; otherwise, if a generation >= 0, a member id
   or an instance id is given: member validation (``FENCED_INSTANCE_ID`` / ``UNKNOWN_MEMBER_ID``),
   then ``ILLEGAL_GENERATION`` unless the generation is the group's; with none of them, a
   non-Empty group refuses with ``UNKNOWN_MEMBER_ID`` (an implementation may take commits from
   members only: ``Profile.simple_commit_to_existing_group``). A valid member's commit in
   CompletingRebalance is ``REBALANCE_IN_PROGRESS``; in Stable and PreparingRebalance it commits
   and restarts the member's session timer (the previous generation may still commit while the
   group prepares a rebalance).
3. Per partition: metadata longer than ``offset.metadata.max.bytes`` is
   ``OFFSET_METADATA_TOO_LARGE`` (the others still commit); else the offset is stored (``NONE``).
4. OffsetFetch answers every asked partition with its committed offset and metadata, or -1 and
   ``""`` if none — whatever the group's state, also for a group that does not exist. An empty
   partition list (v2+) means every committed partition.
5. Leader epochs (KIP-320): a commit v6+ stores the partition's ``CommittedLeaderEpoch`` as sent
   (-1, the spec's default, is "none"); an older commit stores none. OffsetFetch v5+ answers the
   stored epoch, -1 for none or for a partition with nothing committed (4.x
   ``OffsetMetadataManager.fetchOffsets`` / ``OffsetAndMetadata.fromRequest``; 3.9
   ``GroupMetadataManager.getOffsets``; ``OffsetCommitRequest.json`` /
   ``OffsetFetchResponse.json`` for the versions). An implementation may answer the partition's
   own leader epoch instead (``Profile.fetch_answers_committed_leader_epoch``).
6. ``require_stable`` (OffsetFetch v7+, KIP-447): a partition a transaction holds pending offsets
   for is ``UNSTABLE_OFFSET_COMMIT`` (offset -1), and a plain commit supersedes the pending
   offsets written before it (``transactions.py`` T6, T10).
"""

from __future__ import annotations

from dataclasses import replace

from kgc.model.classic.join import static_member_id, validate_member
from kgc.model.classic.rebalance import reschedule_heartbeat
from kgc.model.classic.state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    CommittedOffset,
)
from kgc.model.classic.transactions import has_pending, supersede_pending
from kgc.model.classic.txn import Txn, split_unknown_partitions
from kgc.model.commands import (
    NO_MEMBER_ID,
    FetchedOffset,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    GROUP_ID_NOT_FOUND,
    ILLEGAL_GENERATION,
    NONE,
    OFFSET_METADATA_TOO_LARGE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    UNSTABLE_OFFSET_COMMIT,
)


def _validate(
    tx: Txn, cmd: OffsetCommit, generation: int, member_id: str, instance: str | None
) -> str | None:
    simple_first = tx.profile.simple_commit_checked_first
    if not tx.exists and not tx.profile.commit_makes_group:
        return None  # ``Profile.commit_makes_group`` off: stored unchecked, no group made
    if tx.exists and member_id not in tx.members and not tx.profile.simple_commit_to_existing_group:
        return UNKNOWN_MEMBER_ID  # ``Profile.simple_commit_to_existing_group`` off: members only
    if tx.profile.commit_memberless_illegal_generation:
        # the instance id first (unknown: UNKNOWN_MEMBER_ID; another member's:
        # FENCED_INSTANCE_ID), then a group without members takes simple commits only
        if instance is not None:
            known = static_member_id(tx, instance) if tx.exists else None
            if known is None:
                return UNKNOWN_MEMBER_ID
            if known != member_id:
                return FENCED_INSTANCE_ID
        if generation >= 0 and not (tx.exists and tx.members):
            return ILLEGAL_GENERATION
    if not tx.exists:
        if generation < 0:
            tx.exists = True  # a simple group: Empty, generation 0, no protocol type
            if simple_first:
                return None
        else:
            if cmd.version >= 9 and tx.profile.commit_missing_group_v9_group_id_not_found:
                return GROUP_ID_NOT_FOUND
            return ILLEGAL_GENERATION
    if generation < 0 and tx.state == EMPTY and simple_first:
        return None
    if tx.state == COMPLETING_REBALANCE and tx.profile.commit_completing_rebalance_first:
        return REBALANCE_IN_PROGRESS
    if generation >= 0 or member_id != NO_MEMBER_ID or instance is not None:
        error = validate_member(tx, member_id, instance)
        if error is not None:
            return error
        if generation != tx.generation_id:
            return ILLEGAL_GENERATION
    elif tx.state != EMPTY:
        return UNKNOWN_MEMBER_ID
    if tx.state == COMPLETING_REBALANCE:
        return REBALANCE_IN_PROGRESS
    return None


def handle_offset_commit(tx: Txn, request_id: int, cmd: OffsetCommit) -> None:
    v = cmd.version
    generation = cmd.generation_id if v >= 1 else -1
    member_id = cmd.member_id if v >= 1 else NO_MEMBER_ID
    instance = cmd.group_instance_id if v >= 7 else None
    valid, results = split_unknown_partitions(tx, cmd.offsets)
    if valid:
        error = _validate(tx, cmd, generation, member_id, instance)
        if error is not None:
            results.extend(
                PartitionError(topic=o.topic, partition=o.partition, error=error) for o in valid
            )
        else:
            if tx.state in (STABLE, PREPARING_REBALANCE) and member_id in tx.members:
                reschedule_heartbeat(tx, member_id)
            stored = tx.offsets_dict()
            limit = tx.config.offset_metadata_max_bytes
            for o in valid:
                if len(o.metadata) > limit:
                    results.append(
                        PartitionError(
                            topic=o.topic, partition=o.partition, error=OFFSET_METADATA_TOO_LARGE
                        )
                    )
                else:
                    stored[(o.topic, o.partition)] = CommittedOffset(
                        topic=o.topic,
                        partition=o.partition,
                        offset=o.offset,
                        metadata=o.metadata,
                        leader_epoch=o.leader_epoch if v >= 6 else -1,
                    )
                    supersede_pending(tx, o.topic, o.partition)  # ``transactions.py`` T10
                    results.append(PartitionError(topic=o.topic, partition=o.partition, error=NONE))
    results.sort(key=lambda r: (r.topic, r.partition))
    tx.respond(request_id, OffsetCommitResponse(partitions=tuple(results)))


def handle_offset_fetch(tx: Txn, request_id: int, cmd: OffsetFetch) -> None:
    if not tx.exists and tx.profile.fetch_unknown_group_not_found:
        # the group-level error, which v0-1 have no field for: there the answer is no partitions
        # (kfake at v1: ``traces/known/kfake/offsetfetch-v1-unknown-group-no-partitions.json``)
        error = GROUP_ID_NOT_FOUND if cmd.version >= 2 else NONE
        tx.respond(request_id, OffsetFetchResponse(error=error))
        return
    stored = tx.offsets_dict()
    since_v5 = cmd.version >= 5  # rule 5: the epoch is answered from v5
    out: list[FetchedOffset] = []
    stable = cmd.require_stable and cmd.version >= 7  # rule 6
    if cmd.partitions:
        for tp in cmd.partitions:
            c = stored.get((tp.topic, tp.partition))
            if stable and has_pending(tx, tp.topic, tp.partition):
                out.append(_unstable(tp.topic, tp.partition, since_v5))
            elif c is None:
                out.append(
                    FetchedOffset(
                        topic=tp.topic,
                        partition=tp.partition,
                        offset=-1,
                        leader_epoch=-1 if since_v5 else None,
                    )
                )
            else:
                out.append(_fetched(c, since_v5))
    else:
        out = [
            _unstable(c.topic, c.partition, since_v5)
            if stable and has_pending(tx, c.topic, c.partition)
            else _fetched(c, since_v5)
            for c in stored.values()
        ]
    if since_v5 and not tx.profile.fetch_answers_committed_leader_epoch:
        out = [replace(f, leader_epoch=0) for f in out]  # the partition's, never moved
    out.sort(key=lambda f: (f.topic, f.partition))
    tx.respond(request_id, OffsetFetchResponse(error=NONE, partitions=tuple(out)))


def _unstable(topic: str, partition: int, since_v5: bool) -> FetchedOffset:
    """Rule 6: a partition a transaction still holds pending offsets for."""
    return FetchedOffset(
        topic=topic,
        partition=partition,
        offset=-1,
        leader_epoch=-1 if since_v5 else None,
        error=UNSTABLE_OFFSET_COMMIT,
    )


def _fetched(c: CommittedOffset, since_v5: bool) -> FetchedOffset:
    return FetchedOffset(
        topic=c.topic,
        partition=c.partition,
        offset=c.offset,
        leader_epoch=c.leader_epoch if since_v5 else None,
        metadata=c.metadata,
    )
