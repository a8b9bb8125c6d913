"""Kafka's API keys: the one table of request types every layer of kgc reads.

The numbers are Kafka's ``ApiKeys`` enum (``clients/src/main/java/org/apache/kafka/common/
protocol/ApiKeys.java``, each key the ``apiKey`` of its JSON message spec under
``clients/src/main/resources/common/message/``). ``tests/conformance/test_api_keys.py`` checks
every one against kafka-python's ``ApiKey`` enum, as ``test_error_names.py`` checks
``errors.py``. Code names a request type by its name (``"JoinGroup"``) and looks its key up
here; no other module writes a key number.

Which versions of a request a release line answers is a rule of that line
(``profiles.Profile.api_range``); which versions the suite draws is the driver's
(``requests.py``'s ``RequestType.drawn_versions`` for the classic group, ``client_view.py``'s
``CONSUMER_VERSIONS`` for KIP-848, narrowed by ``conformance/wire/negotiate.py``).
"""

from __future__ import annotations

from typing import Final

#: Kafka's API key of every request type kgc sends, reads in an ApiVersions answer, or names.
KEYS: Final[dict[str, int]] = {
    "Metadata": 3,
    "LeaderAndIsr": 4,  # ZooKeeper-mode inter-broker only: its presence tells a ZK broker
    "UpdateMetadata": 6,
    "OffsetCommit": 8,
    "OffsetFetch": 9,
    "FindCoordinator": 10,
    "JoinGroup": 11,
    "Heartbeat": 12,
    "LeaveGroup": 13,
    "SyncGroup": 14,
    "DescribeGroups": 15,
    "ListGroups": 16,
    "ApiVersions": 18,
    "CreateTopics": 19,
    "InitProducerId": 22,
    "AddOffsetsToTxn": 25,
    "EndTxn": 26,
    "TxnOffsetCommit": 28,
    "DescribeConfigs": 32,
    "DeleteGroups": 42,
    "OffsetDelete": 47,
    "DescribeQuorum": 55,
    "DescribeCluster": 60,
    "ConsumerGroupHeartbeat": 68,
    "ConsumerGroupDescribe": 69,
    "ShareGroupHeartbeat": 76,
    "ShareGroupDescribe": 77,
}

#: The name of each key in :data:`KEYS`.
NAMES: Final[dict[int, str]] = {key: name for name, key in KEYS.items()}

#: The KIP-848 consumer-group requests.
CONSUMER_GROUP_APIS: Final[tuple[str, ...]] = ("ConsumerGroupHeartbeat", "ConsumerGroupDescribe")
#: The KIP-932 share-group membership requests.
SHARE_GROUP_APIS: Final[tuple[str, ...]] = ("ShareGroupHeartbeat", "ShareGroupDescribe")
#: The offset requests both protocols share.
OFFSET_APIS: Final[tuple[str, ...]] = ("OffsetCommit", "OffsetFetch")


def key(name: str) -> int:
    """The API key of request type ``name``; a ``KeyError`` names an unknown type."""
    return KEYS[name]


def keys_of(names: tuple[str, ...]) -> dict[str, int]:
    """``{name: key}`` for ``names``, in their order."""
    return {name: KEYS[name] for name in names}
