"""A tiny JSON encoding for subscriptions and assignments carried as opaque strings.

Role: in the differential suite the broker only relays JoinGroup protocol metadata and SyncGroup
assignments (``model/commands.py`` keeps them as opaque strings). Simulated members put a
subscription and an assignment into those strings with this encoding, so the properties layer can
decode what a leader handed out and check it (``assignment_z3.check_generation``). It stands in for
Kafka's binary ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment``
(``clients/src/main/resources/common/message/ConsumerProtocol*.json``), keeping the same content:
subscribed topics, owned partitions and generation; assigned partitions by topic.

Encodings are canonical (sorted keys and partitions, no spaces), so equal values encode equally:

* assignment: ``{"t0":[0,1],"t1":[2]}``
* subscription: ``{"topics":["t0","t1"]}``, with optional ``"owned"`` (an assignment object) and
  ``"generation"`` (an integer).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from kgc.model.assignors import Subscription, TopicPartition

__all__ = [
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "partitions_of",
]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def encode_assignment(assignment: Mapping[str, Iterable[int]]) -> str:
    """``{topic: [partitions]}`` -> canonical JSON. Topics with no partitions are dropped."""
    canonical: dict[str, list[int]] = {}
    for topic, partitions in assignment.items():
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic names must be non-empty strings, got {topic!r}")
        ps = sorted(set(int(p) for p in partitions))
        if any(p < 0 for p in ps):
            raise ValueError(f"partition numbers must be >= 0, got {ps} for topic {topic!r}")
        if ps:
            canonical[topic] = ps
    return _dumps(canonical)


def decode_assignment(text: str) -> dict[str, tuple[int, ...]]:
    """The inverse of :func:`encode_assignment`; ``""`` (empty SyncGroup assignment) is ``{}``."""
    if text == "":
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"assignment {text[:60]!r} is not JSON: encode it with encode_assignment()"
        ) from exc
    return _assignment_from_json(value, what="assignment")


def _assignment_from_json(value: Any, *, what: str) -> dict[str, tuple[int, ...]]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object {{topic: [partitions]}}, got {value!r}")
    out: dict[str, tuple[int, ...]] = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in partitions
        ):
            raise ValueError(
                f"{what}: topic {topic!r} must map to a list of partition numbers >= 0, "
                f"got {partitions!r}"
            )
        out[topic] = tuple(partitions)
    return out


def encode_subscription(
    topics: Iterable[str],
    *,
    owned_partitions: Mapping[str, Iterable[int]] | None = None,
    generation_id: int | None = None,
) -> str:
    """Subscribed topics (and, for the sticky assignors, owned partitions and generation)."""
    value: dict[str, Any] = {"topics": sorted(set(topics))}
    if owned_partitions:
        value["owned"] = json.loads(encode_assignment(owned_partitions))
    if generation_id is not None:
        value["generation"] = int(generation_id)
    return _dumps(value)


def decode_subscription(text: str, *, group_instance_id: str | None = None) -> Subscription:
    """The inverse of :func:`encode_subscription`, as the model's assignor input."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"subscription {text[:60]!r} is not JSON: encode it with encode_subscription()"
        ) from exc
    if not isinstance(value, dict) or not isinstance(value.get("topics"), list):
        raise ValueError(f'subscription must be an object with a "topics" list, got {text[:60]!r}')
    topics = value["topics"]
    if not all(isinstance(t, str) for t in topics):
        raise ValueError(f"subscription topics must be strings, got {topics!r}")
    owned = _assignment_from_json(value.get("owned", {}), what="owned partitions")
    generation = value.get("generation")
    if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)):
        raise ValueError(f"subscription generation must be an integer, got {generation!r}")
    return Subscription(
        topics=tuple(sorted(set(topics))),
        owned_partitions=partitions_of(owned),
        generation_id=generation,
        group_instance_id=group_instance_id,
    )


def partitions_of(assignment: Mapping[str, Iterable[int]]) -> tuple[TopicPartition, ...]:
    """``{topic: [partitions]}`` -> sorted ``TopicPartition`` tuple."""
    return tuple(sorted({TopicPartition(t, int(p)) for t, ps in assignment.items() for p in ps}))
