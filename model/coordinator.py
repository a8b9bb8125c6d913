"""Coordinator discovery: which broker coordinates a group, and what clients see while it moves.

Rules (4.x ``GroupCoordinatorService.partitionFor`` / 3.9 ``GroupMetadataManager.partitionFor``;
``KafkaApis.getCoordinator``):

1. A group's coordinator partition is
   ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` of ``__consumer_offsets``.
   ``String.hashCode`` is Java's: ``s[0]*31^(n-1) + … + s[n-1]`` over the string's UTF-16 code
   units with int32 overflow; ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0
   (``clients/src/main/java/org/apache/kafka/common/utils/Utils.java``), unlike ``Math.abs``.
2. The coordinator is that partition's leader. FindCoordinator answers ``NONE`` with the leader's
   node, or ``COORDINATOR_NOT_AVAILABLE`` (node -1) when ``__consumer_offsets`` does not exist yet
   (the request triggers its creation), has an error, or the partition has no live leader.
3. While the coordinator moves (old leader resigning, new leader loading the partition) group
   requests fail with ``NOT_COORDINATOR`` (this broker does not own the partition),
   ``COORDINATOR_LOAD_IN_PROGRESS`` (it owns it and is loading) or ``COORDINATOR_NOT_AVAILABLE``
   (the coordinator is not active, or an append failed with ``NOT_ENOUGH_REPLICAS`` /
   ``REQUEST_TIMED_OUT`` / ``UNKNOWN_TOPIC_OR_PARTITION`` — 4.x
   ``CoordinatorOperationExceptionHelper``, 3.9 ``GroupMetadataManager.storeGroup``). Per-API
   conversions: a Heartbeat answered while loading is ``NONE`` in both versions; a SyncGroup
   answered while loading is ``REBALANCE_IN_PROGRESS`` in 3.9 (``GroupCoordinator.handleSyncGroup``)
   but ``COORDINATOR_LOAD_IN_PROGRESS`` in 4.x.
4. Rediscovery (the Java client, ``AbstractCoordinator`` / ``ConsumerCoordinator``):
   ``NOT_COORDINATOR`` and ``COORDINATOR_NOT_AVAILABLE`` mark the coordinator unknown — the client
   sends FindCoordinator again before retrying; ``COORDINATOR_LOAD_IN_PROGRESS`` is retried against
   the same coordinator after a backoff.

Pure functions only; the group model (``group.py``) uses :func:`find_coordinator_outcomes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgc.model.errors import (
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    NONE,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
)
from kgc.model.profiles import Profile

INT32_MIN = -(2**31)

# Errors that make the client look the coordinator up again (AbstractCoordinator:
# ``error == COORDINATOR_NOT_AVAILABLE || error == NOT_COORDINATOR`` -> markCoordinatorUnknown).
REDISCOVERY_ERRORS = frozenset({NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE})
# Errors the client retries against the same coordinator.
RETRY_SAME_COORDINATOR_ERRORS = frozenset({COORDINATOR_LOAD_IN_PROGRESS})


def _to_int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 0x1_0000_0000 if x & 0x8000_0000 else x


def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode``: over UTF-16 code units (a character outside the BMP counts
    as its two surrogates), with 32-bit signed overflow."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _to_int32(h)


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``n == Integer.MIN_VALUE ? 0 : Math.abs(n)``."""
    return 0 if n == INT32_MIN else abs(n)


def partition_for(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition that stores ``group_id``."""
    if partitions < 1:
        raise ValueError(f"offsets.topic.num.partitions must be >= 1, got {partitions}")
    return utils_abs(java_string_hash(group_id)) % partitions


def coordinator_for(group_id: str, partitions: int, leaders: Sequence[int | None]) -> int | None:
    """The coordinator node of ``group_id`` given the leader of each partition (index = partition,
    ``None`` or -1 = no leader). ``None`` when the partition has no leader."""
    if len(leaders) != partitions:
        raise ValueError(f"need one leader per partition ({partitions}), got {len(leaders)}")
    leader = leaders[partition_for(group_id, partitions)]
    return None if leader is None or leader < 0 else leader


def find_coordinator_outcomes(
    group_id: str,
    partitions: int,
    leaders: Sequence[int | None] | None,
    node_ids: Sequence[int],
) -> tuple[tuple[str, int], ...]:
    """Every (error, node id) a FindCoordinator may answer for a group, on a cluster whose offsets
    topic exists and is not moving. With a leader map the answer is exact; without one, any known
    node may lead the partition; with no knowledge at all, (``NONE``, -1) stands for "some node"
    and the conformance layer must normalise the node id before comparing."""
    if leaders is not None:
        node = coordinator_for(group_id, partitions, leaders)
        return ((COORDINATOR_NOT_AVAILABLE, -1),) if node is None else ((NONE, node),)
    if node_ids:
        return tuple((NONE, n) for n in sorted(set(node_ids)))
    return ((NONE, -1),)


def errors_while_moving(api: str, profile: Profile) -> frozenset[str]:
    """Errors a client may see from ``api`` while its group's coordinator moves or loads (rule 3),
    after the per-API conversions of ``profile``'s coordinator."""
    if api == "FindCoordinator":
        return frozenset({COORDINATOR_NOT_AVAILABLE})
    base = {NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS}
    if api == "Heartbeat":
        base.discard(COORDINATOR_LOAD_IN_PROGRESS)  # answered NONE while loading
        base.add(NONE)
    elif api == "SyncGroup" and profile.sync_load_in_progress_as_rebalance:
        base.discard(COORDINATOR_LOAD_IN_PROGRESS)
        base.add(REBALANCE_IN_PROGRESS)
    return frozenset(base)


def needs_rediscovery(error: str) -> bool:
    """Whether a client that got ``error`` must send FindCoordinator before retrying (rule 4)."""
    return error in REDISCOVERY_ERRORS
