"""How a classic group's coordinator reads a consumer-protocol member's subscription.

Role: ``computeSubscribedTopics`` (3.9 ``GroupMetadata``, 4.x ``ClassicGroup``), called by
``initNextGeneration`` once the protocol is chosen, reads each member's metadata for that protocol
as a ``ConsumerProtocolSubscription`` at version 0 (the prefix of every version) after its 2-byte
version, and catches ``SchemaException`` only: a failure it catches leaves the subscribed topics
unknown; any other exception leaves the method, the join phase's completion with it, and the join
phase never completes (the known bug ``join-stalled-by-subscription``, ``known_bugs.py``). Which
failures are which depends on the reader the line's clients library has
(``Profile.subscription_reader``):

- ``"struct"`` (2.4 - 2.6: ``ConsumerProtocol.SUBSCRIPTION_V0.read``, the ``Struct`` schema types):
  every malformed input is a ``SchemaException``.
- ``"generated"`` (2.7: the generated ``ConsumerProtocolSubscription.read``): a buffer underflow is
  wrapped into a ``SchemaException`` (``ConsumerProtocol.deserializeSubscription``), but a negative
  array or string length is a ``RuntimeException`` ("non-nullable field topics was serialized as
  null") and user data longer than the bytes left an ``IllegalArgumentException``
  (``ByteBufferAccessor.readByteBuffer``: ``res.limit(length)``). A string longer than the bytes
  left underflows (``readArray``: ``buf.get``). It allocates a topic list of the claimed count
  before reading any: a count the heap cannot hold ends the broker ("Terminating due to
  java.lang.OutOfMemoryError: Java heap space", seen on 2.7.2 for 1,869,881,441 topics). That is
  outside the model, which reads on as for a count the heap holds; the search never sends one.
- ``"checked"`` (2.8 - 4.1 and 4.3: the generated reader with size checks): also an array count
  above the bytes left ("Tried to allocate a collection of size …") and a string longer than the
  bytes left (``ByteBufferAccessor.readArray``: "Error reading byte array of …") are
  ``RuntimeException``.
- and whatever the reader, 4.2.2 and 4.4.0 catch every failure
  (``Profile.subscription_failures_wrapped``: ``ConsumerProtocol
  .deserializeConsumerProtocolSubscription`` wraps every ``RuntimeException`` into
  ``SchemaException("Malformed consumer protocol subscription")``, read from the kafka-clients
  jars' bytecode; 4.0.2's, 4.1.2's and 4.3.1's do not).

Seen on brokers with three inputs (``tests/findings/test_consumer_metadata.py``): a count of 16
with no bytes after it, a 5-byte topic name with 2 bytes left, and 9 bytes of user data with none
left. 2.4.1 - 2.6.3 answered all three; 2.7.2 answered the first two and never the third; 2.8.2,
3.0.2, 3.5.2, 3.9.2 and 4.3.1 never answered any; 4.4.0 answered all three.

The model's metadata strings are sent as the wire sends them (``conformance/wire/payloads.py``
``metadata_bytes``): canonical JSON ``{"topics": […]}`` as a real subscription, any other string as
its UTF-8 bytes, which this module reads as the broker would.
"""

from __future__ import annotations

import json
import struct
from typing import Final, Literal

Reader = Literal["struct", "generated", "checked"]
READERS: Final[tuple[str, ...]] = ("struct", "generated", "checked")

CAUGHT: Final = "caught"  # a SchemaException: the subscribed topics are unknown
ESCAPES: Final = "escapes"  # another exception: the join phase never completes

_ESCAPING: Final[dict[str, frozenset[str]]] = {
    "struct": frozenset(),
    "generated": frozenset({"negative-length", "bytes-past-end"}),
    "checked": frozenset(
        {"negative-length", "bytes-past-end", "collection-past-end", "string-past-end"}
    ),
}


class _Failure(Exception):  # noqa: N818 - a reader's failure, named by kind
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def read_subscription(
    metadata: str, reader: str, *, wrapped: bool = False
) -> tuple[str, ...] | str:
    """The topics ``metadata`` subscribes to as the coordinator reads them with ``reader``, or
    :data:`CAUGHT` / :data:`ESCAPES` (module docstring; ``wrapped``: every failure caught)."""
    if metadata.startswith("{"):
        topics = _canonical_topics(metadata)
        if topics is not None:
            return topics
    try:
        return _read_v0(metadata.encode("utf-8"), reader)
    except _Failure as failure:
        escapes = failure.kind in _ESCAPING[reader] and not wrapped
        return ESCAPES if escapes else CAUGHT


def _canonical_topics(metadata: str) -> tuple[str, ...] | None:
    try:
        obj = json.loads(metadata)
    except ValueError:
        return None
    topics = obj.get("topics") if isinstance(obj, dict) else None
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        return None
    return tuple(topics)


def _read_v0(data: bytes, reader: str) -> tuple[str, ...]:
    pos = 0

    def take(n: int, past_end: str) -> bytes:
        nonlocal pos
        if n > len(data) - pos:
            raise _Failure(past_end)
        out = data[pos : pos + n]
        pos += n
        return out

    def left() -> int:
        return len(data) - pos

    take(2, "underflow")  # the version, read and set aside: version 0 is every version's prefix
    (count,) = struct.unpack(">i", take(4, "underflow"))
    if count < 0:
        raise _Failure("negative-length")
    if count > left() and reader == "checked":
        raise _Failure("collection-past-end")
    topics = []
    for _ in range(count):
        (length,) = struct.unpack(">h", take(2, "underflow"))
        if length < 0:
            raise _Failure("negative-length")
        past_end = "string-past-end" if reader == "checked" else "underflow"
        topics.append(take(length, past_end).decode("utf-8", errors="replace"))
    (user_data,) = struct.unpack(">i", take(4, "underflow"))
    if user_data > left():
        # the Struct reader's BYTES type checks the size; the generated one slices past the end
        raise _Failure("underflow" if reader == "struct" else "bytes-past-end")
    return tuple(topics)
