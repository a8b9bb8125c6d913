"""Payloads and topic names as the wire carries them, for the request builders and decoders.

* Opaque strings: protocol metadata and assignments are the UTF-8 bytes of the model's strings;
  bytes that are not UTF-8 decode with backslash escapes (visible in a divergence, never a crash).
* The consumer protocol's payloads (``ConsumerProtocolSubscription`` / ``...Assignment``), which
  Kafka 4.x parses: their canonical JSON form in the model (below).
* Topic ids: the requests that name topics by id (OffsetCommit/OffsetFetch v10+, the KIP-848
  APIs) and the answers that carry only ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kgc.model import commands as m


def utf8(s: str) -> bytes:
    return s.encode("utf-8")


def text(b: bytes | None) -> str:
    if b is None:
        return ""
    return bytes(b).decode("utf-8", errors="backslashreplace")


# ---- consumer-protocol payloads ------------------------------------------------------------------
# With protocol_type "consumer", Kafka 4.x's coordinator *parses* JoinGroup metadata as a
# ConsumerProtocolSubscription (and assignments as ConsumerProtocolAssignment); bytes that do not
# parse make its join timer's write fail, and the join never completes (found by this suite on
# 4.3.1: "Tried to allocate a collection of size 1953460329"). So the model's opaque strings have a
# canonical JSON form for these two structures, sent as the real encoding:
#   subscription  {"topics": ["t1", …]}            -> ConsumerProtocolSubscription v0
#   assignment    {"t1": [0, 2], …}               -> ConsumerProtocolAssignment v0
# Any string not starting with "{" is sent as its raw UTF-8 bytes. Decoding turns bytes back into
# the canonical JSON only when they decode *and* re-encode to the same bytes; else UTF-8 text.


def metadata_bytes(s: str) -> bytes:
    if not s.startswith("{"):
        return utf8(s)
    obj = json.loads(s)
    sub = ConsumerProtocolSubscription(version=0, topics=list(obj["topics"]), user_data=None)
    return bytes(sub.encode(version=0))


def assignment_bytes(s: str) -> bytes:
    if not s.startswith("{"):
        return utf8(s)
    obj = json.loads(s)
    parts = [
        ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=list(ps))
        for t, ps in sorted(obj.items())
    ]
    return bytes(
        ConsumerProtocolAssignment(version=0, assigned_partitions=parts, user_data=None).encode(
            version=0
        )
    )


def metadata_text(b: bytes | None) -> str:
    raw = b"" if b is None else bytes(b)
    try:
        sub = ConsumerProtocolSubscription.decode(raw)
        canonical = json.dumps({"topics": list(sub.topics)}, sort_keys=True)
        if raw and metadata_bytes(canonical) == raw:
            return canonical
    except Exception:  # noqa: BLE001 - not a subscription: fall back to text
        pass
    return text(raw)


def assignment_text(b: bytes | None) -> str:
    raw = b"" if b is None else bytes(b)
    try:
        a = ConsumerProtocolAssignment.decode(raw)
        canonical = json.dumps(
            {tp.topic: list(tp.partitions) for tp in a.assigned_partitions}, sort_keys=True
        )
        if raw and assignment_bytes(canonical) == raw:
            return canonical
    except Exception:  # noqa: BLE001 - not an assignment: fall back to text
        pass
    return text(raw)


def topic_id(topic: str, topic_ids: Mapping[str, Any] | None) -> Any:
    if topic_ids is None or topic not in topic_ids:
        raise ValueError(
            f"ConsumerGroupHeartbeat names topics by id: pass topic_ids with {topic!r}"
        )
    return topic_ids[topic]


def partitions_by_name(topics: Any, names: dict[Any, str]) -> tuple[m.TopicPartition, ...]:
    """Wire ``[{topic_id, partitions}]`` -> the model's sorted (topic, partition) records; an id
    no topic of the run has becomes ``unknown-topic-<id>`` (a visible divergence)."""
    out = [
        m.TopicPartition(topic=names.get(t.topic_id, f"unknown-topic-{t.topic_id}"), partition=p)
        for t in topics or ()
        for p in t.partitions
    ]
    return tuple(sorted(out, key=lambda tp: (tp.topic, tp.partition)))


def names_by_id(topic_ids: Mapping[str, Any] | None) -> dict[Any, str]:
    return {} if topic_ids is None else {tid: name for name, tid in topic_ids.items()}


def topic_name(topic: Any, version: int, names: dict[Any, str]) -> str:
    if version >= 10:
        return names.get(topic.topic_id, f"topic-id-{topic.topic_id}")
    return str(topic.name)
