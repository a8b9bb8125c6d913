"""Member connections outlive a target: idle ones serve the next group, pending ones never do.

The suite opens one ``BrokerTarget`` per Hypothesis example on one ``Cluster``. Reusing the
previous example's idle connection for the same client saves the TCP connect and the ApiVersions
handshake; it must not let anything from one example reach the next.
"""

from __future__ import annotations

import time

import pytest
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.model.commands import DescribeGroups, DescribeGroupsResponse, JoinGroup, Protocol


def _join(client: str) -> JoinGroup:
    return JoinGroup(
        client=client,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        protocols=(Protocol(name="range", metadata=""),),
        protocol_type="kgc-test",  # not "consumer": the metadata is not a subscription
        version=3,
    )


def _answers(target: BrokerTarget, want: set[int], timeout_s: float = 10.0) -> dict[int, object]:
    got: dict[int, object] = {}
    end = time.monotonic() + timeout_s
    while not want <= set(got) and time.monotonic() < end:
        for a in target.poll(50):
            got[a.request_id] = a.response
    return got


@pytest.mark.broker
def test_idle_connections_serve_the_next_group_and_pending_ones_are_closed(
    kgc_client, kgc_group_id
):
    first = BrokerTarget(kgc_client, f"{kgc_group_id}-a", description={})
    first.send(0, DescribeGroups(client="c1", version=5))
    first.send(1, _join("c2"))
    assert set(_answers(first, {0, 1})) == {0, 1}
    first.send(2, _join("c3"))  # c2 has not rejoined: c3 waits for it (up to 1 s)
    assert 2 not in _answers(first, {2}, timeout_s=0.2)
    assert first.in_flight("c3")
    c1, c2, c3 = (first._group.members[c] for c in ("c1", "c2", "c3"))
    first.close()
    assert not c1.closed and not c2.closed and kgc_client.spare_connections == 2
    assert c3.closed, "a connection with a request pending must not be reused"

    second = BrokerTarget(kgc_client, f"{kgc_group_id}-b", description={})
    second.send(10, DescribeGroups(client="c1", version=5))
    second.send(11, DescribeGroups(client="c3", version=5))
    got = _answers(second, {10, 11})
    assert second._group.members["c1"] is c1  # same socket, same client id kgc-c1
    assert (
        second._group.members["c3"] is not c3 and second._group.members["c3"].client_id == "kgc-c3"
    )
    # only this target's answers, about this target's (new, empty) group
    assert set(got) == {10, 11}
    for response in got.values():
        assert isinstance(response, DescribeGroupsResponse)
        assert response.error == "NONE" and response.members == ()
    second.close()
    kgc_client.close()
    assert c1.closed and kgc_client.spare_connections == 0
