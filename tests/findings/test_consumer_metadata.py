"""Finding: Apache Kafka 2.7 - 4.1 and 4.3 never answer a JoinGroup whose consumer-protocol
subscription its coordinator cannot read (the model's known bug ``join-stalled-by-subscription``).

The classic protocol treats JoinGroup ``protocols[].metadata`` as opaque bytes the leader
interprets. With ``protocol_type`` ``consumer``, the coordinator reads it as a
``ConsumerProtocolSubscription`` when the join phase completes (``computeSubscribedTopics``) and
catches only ``SchemaException``; from 2.7 the generated reader throws other exceptions for some
malformed inputs, the completion ends there, and the members wait forever: no answer, no error.
4.2.2 and 4.4.0 wrap those exceptions and answer. Which input escapes on which line is the model's
``model/classic/subscription.py``, from each line's kafka-clients; found by the differential suite
on 4.3.1 (its opaque metadata hung joins), which now sends real consumer-protocol bytes.

What the test requires is the protocol's contract: *some* answer (success, or an error such as
INCONSISTENT_GROUP_PROTOCOL) within the rebalance timeout plus a margin, for three malformed
subscriptions. (Not the text that first hung 4.3.1, ``[not a consumer subscription]``: read as a
subscription it claims 1,869,881,441 topics, and 2.7's reader, which allocates the claimed count
before it reads, ends a 2.7.2 broker with "Terminating due to java.lang.OutOfMemoryError: Java
heap space", seen here; the count-past-end input is the same failure on the other lines.)

On an Apache Kafka release that is its line's newest patch (the line's profile describes it),
an input the model says stalls the join is a strict xfail naming the bug: the day Kafka answers
it, it XPASSes and fails, and the model's record is wrong. Seen here: 2.4.1 - 2.6.3
and 4.2.2, 4.4.0 answer all three; 2.7.2 all but the user data past the end; 2.8.2, 3.0.2, 3.5.2,
3.9.2, 4.0.2 and 4.3.1 none. Any other broker is held to the contract.
"""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.client import join_group
from kgc.model.classic.subscription import ESCAPES, read_subscription
from kgc.model.known_bugs import JOIN_STALLED_BY_SUBSCRIPTION
from kgc.model.profiles import profile_for_version

REBALANCE_MS = 1000
MARGIN_MS = 3000

SUBSCRIPTIONS = {
    "count-past-end": "\x00\x00\x00\x00\x00\x10",  # 16 topics, no byte left
    "name-past-end": "\x00\x00\x00\x00\x00\x01\x00\x05ab",  # a 5-byte name, 2 bytes left
    "user-data-past-end": "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09",  # 9 bytes, none left
}


def _known_hang(broker, metadata: str) -> str | None:  # noqa: ANN001
    d = description_of(broker)
    if d.get("implementation") != "apache-kafka":
        return None
    version = str(d.get("version", ""))
    try:
        profile = profile_for_version(version)
    except ValueError:
        return None
    if profile.kafka_version != version:
        return None  # another patch of the line: its profile does not describe it
    read = read_subscription(
        metadata,
        profile.subscription_reader,
        wrapped=profile.subscription_failures_wrapped,
    )
    if read != ESCAPES:
        return None
    bug = JOIN_STALLED_BY_SUBSCRIPTION
    return f"Kafka {version}: known bug {bug.key} ({bug.title}; {bug.story})"


@pytest.mark.broker
@pytest.mark.parametrize("name", sorted(SUBSCRIPTIONS))
def test_join_with_unparseable_consumer_metadata_is_answered(
    kgc_broker, kgc_client, kgc_group_id, request, name
):
    metadata = SUBSCRIPTIONS[name]
    reason = _known_hang(kgc_broker, metadata)
    if reason:
        # only the missing answer is the bug: a harness error (a lost connection, a refused
        # join) fails the test instead of counting as the expected failure
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason, raises=AssertionError))
    group = kgc_client.group(kgc_group_id)
    try:
        conn = group.member("c1")
        handle = join_group(
            conn,
            kgc_group_id,
            session_timeout_ms=REBALANCE_MS,
            rebalance_timeout_ms=REBALANCE_MS,
            protocols=[("range", metadata.encode("utf-8"))],
            version=3,
        )
        group.poller.wait([handle], (REBALANCE_MS + MARGIN_MS) / 1000)
        assert handle.done, (
            f"no answer to JoinGroup within {REBALANCE_MS + MARGIN_MS} ms "
            "(rebalance timeout + margin)"
        )
    finally:
        group.close()
