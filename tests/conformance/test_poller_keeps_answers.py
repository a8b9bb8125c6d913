"""Regression: a wait on one request must not swallow another connection's answer.

Found by the differential suite: opening client c2 (its ApiVersions handshake waits on the shared
poller) while c1's JoinGroup was pending dropped c1's answer from the poller's completed queue, and
the suite reported a hang the broker never had.
"""

from __future__ import annotations

import pytest
from kgc.conformance.wire.client import Connection, Poller, describe_groups, parse_bootstrap


@pytest.mark.broker
def test_answer_completed_during_another_wait_is_still_returned(kgc_broker, kgc_group_id):
    host, port = parse_bootstrap(kgc_broker.bootstrap_servers)[0]
    poller = Poller()
    try:
        first = Connection(host, port, "kgc-c1", poller=poller)
        pending = describe_groups(first, [kgc_group_id])
        # a second connection's handshake waits on the same poller; c1's answer lands meanwhile
        second = Connection(host, port, "kgc-c2", poller=poller)
        poller.wait([describe_groups(second, [kgc_group_id])], 10)
        seen = []
        for _ in range(50):
            seen += poller.poll(0.05)
            if pending in seen:
                break
        assert pending.done
        assert pending in seen, "the first connection's answer was dropped by the other wait"
    finally:
        poller.close()
