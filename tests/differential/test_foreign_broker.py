"""Against a broker the suite did not start: only ``kgc-`` groups and topics, and no faults.

The session broker is wrapped as an *external* one (``ExternalKafka``, exactly what
``--kgc-bootstrap-server`` gives), the suite runs, and every group and topic that exists afterwards
but did not before carries the ``kgc-`` prefix. Fault injection is refused with a stated reason.
"""

from __future__ import annotations

import pytest
from kafka.protocol.admin.groups import ListGroupsRequest
from kgc.conformance.brokers.providers import ExternalKafka
from kgc.conformance.brokers.session import description_of, fault_runner
from kgc.conformance.drivers.suite import run_suite
from kgc.conformance.errors import FaultsUnavailable
from kgc.conformance.wire.client import Cluster


def _groups_and_topics(bootstrap: str) -> tuple[set[str], set[str]]:
    cluster = Cluster(bootstrap, client_id="kgc-inventory")
    try:
        groups: set[str] = set()
        cluster.refresh_metadata()
        for broker in cluster.metadata().brokers:
            resp = cluster.connection(broker.node_id).request(ListGroupsRequest())
            groups |= {g.group_id for g in resp.groups}
        topics = {t.name for t in cluster.metadata().topics}
        return groups, topics
    finally:
        cluster.close()


@pytest.mark.broker
def test_suite_on_a_foreign_broker_touches_only_its_prefix(kgc_broker, tmp_path):
    foreign = ExternalKafka(kgc_broker.bootstrap_servers)
    foreign.start()
    assert foreign.can_inject_faults is False
    assert fault_runner(foreign) is None
    with pytest.raises(FaultsUnavailable):
        foreign.pause(1)

    groups_before, topics_before = _groups_and_topics(foreign.bootstrap_servers)
    result = run_suite(
        bootstrap_servers=foreign.bootstrap_servers,
        description=description_of(foreign),
        profile="quick",
        seed=7,
        traces_dir=tmp_path,
    )
    groups_after, topics_after = _groups_and_topics(foreign.bootstrap_servers)
    assert result.ok, result.message
    assert result.commands > 0
    new_groups = groups_after - groups_before
    new_topics = topics_after - topics_before - {"__consumer_offsets"}
    assert new_groups, "the suite created no group at all"
    assert all(g.startswith("kgc-") for g in new_groups), sorted(new_groups)
    assert all(t.startswith("kgc-") for t in new_topics), sorted(new_topics)
