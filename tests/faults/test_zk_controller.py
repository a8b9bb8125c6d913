"""ZooKeeper-mode controller failover and epoch fencing, live (Kafka 3.9, 3 brokers + ZooKeeper).

Pause the active controller past ``zookeeper.session.timeout.ms``: ZooKeeper drops ``/controller``,
a survivor wins the election and writes ``/controller_epoch + 1``. A control request stamped with
the old epoch is then rejected ``STALE_CONTROLLER_EPOCH`` by a broker that has heard from the new
controller, while the same request with the current epoch is not rejected for its epoch. Each
broker answer is compared with :class:`kgc.model.controller.ZkControllerRules`' prediction, and a
deliberately broken variant that accepts stale epochs is shown to mispredict the real broker.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
from kgc.conformance.faults.controlplane import BrokerEndpoint, read_zk_controller, update_metadata
from kgc.conformance.wire import probe
from kgc.model.controller import (
    ControlResult,
    ZkControllerRules,
    ZkReading,
    check_zk_readings,
    receive_control_request,
    zk_cluster,
)

pytestmark = [pytest.mark.broker, pytest.mark.faults]


class AcceptsStaleEpoch(ZkControllerRules):
    """Deliberately broken: a receiver that takes any controller epoch."""

    def receive(self, known_epoch: int, request_epoch: int) -> ControlResult:
        return ControlResult(error="NONE", controller_epoch=max(known_epoch, request_epoch))


def _live_brokers(host: str, port: int) -> list[BrokerEndpoint]:
    """The receiver's current live-broker list, so an accepted UpdateMetadata changes nothing."""
    return [
        BrokerEndpoint(node_id=b.node_id, host=b.host, port=b.port)
        for b in probe.metadata(host, port, 3.0).brokers
    ]


def test_paused_controller_is_replaced_and_its_epoch_fenced(
    zk3: Any, zk_nemesis: Any, say: Any
) -> None:
    from kazoo.client import KazooClient

    zk_host, zk_port = zk3.zookeeper_address
    zk = KazooClient(hosts=f"{zk_host}:{zk_port}")
    zk.start(timeout=15)
    readings: list[ZkReading] = []

    def read() -> ZkReading:
        r = read_zk_controller(zk)
        readings.append(r)
        return r

    try:
        before = read()
        old, old_epoch = before.controller, before.controller_epoch
        assert old is not None and old_epoch >= 1
        nodes = list(zk3.node_ids)

        # the model, positioned where the cluster is: `old` won epoch `old_epoch`
        rules = ZkControllerRules()
        model = dataclasses.replace(zk_cluster(nodes), controller_epoch=old_epoch - 1)
        model = rules.elect(model, old)

        zk_nemesis.pause(old)
        t_pause = time.monotonic()
        now = before
        while now.controller in (None, old):
            assert time.monotonic() - t_pause < 40, f"no new controller 40 s after pausing {old}"
            time.sleep(0.2)
            now = read()
        new = now.controller
        say(
            f"controller {old}@{old_epoch} paused; {new}@{now.controller_epoch} after "
            f"{time.monotonic() - t_pause:.1f} s"
        )
        model = rules.elect(rules.expire_session(rules.pause(model, old), old), new)
        assert now.controller_epoch == model.controller_epoch == old_epoch + 1

        # a survivor that has heard from the new controller (its Metadata names it: the metadata
        # cache's controller id and ReplicaManager.controllerEpoch come from the same request)
        receiver = next((n for n in nodes if n not in (old, new)), new)
        host, port = zk3.broker_address(receiver)
        end = time.monotonic() + 30
        while probe.metadata(host, port, 3.0).controller_id != new:
            assert time.monotonic() < end, f"broker {receiver} never learned of controller {new}"
            time.sleep(0.2)
        model, _ = rules.deliver(model, receiver, model.controller_epoch)

        brokers = _live_brokers(host, port)
        stale = update_metadata(
            host, port, controller_id=old, controller_epoch=old_epoch, live_brokers=brokers
        )
        model_after, predicted = rules.deliver(model, receiver, old_epoch)
        say(f"UpdateMetadata epoch {old_epoch} to broker {receiver}: {stale}")
        assert stale == predicted.error == "STALE_CONTROLLER_EPOCH"
        _, broken = AcceptsStaleEpoch().deliver(model, receiver, old_epoch)
        assert broken.error != stale, "the broken variant must mispredict the real broker"

        current = update_metadata(
            host,
            port,
            controller_id=new,
            controller_epoch=now.controller_epoch,
            live_brokers=brokers,
        )
        _, predicted_current = rules.deliver(model_after, receiver, now.controller_epoch)
        say(f"UpdateMetadata epoch {now.controller_epoch} to broker {receiver}: {current}")
        assert current == predicted_current.error == "NONE"
        after = probe.metadata(host, port, 3.0)
        assert after.controller_id == new
        assert sorted(b.node_id for b in after.brokers) == sorted(b.node_id for b in brokers)

        zk_nemesis.resume(old)
        # the zombie notices its expired session and rejoins as a plain broker; the epoch stays
        old_host, old_port = zk3.broker_address(old)
        end = time.monotonic() + 40
        while True:
            r = read()
            try:
                md = probe.metadata(old_host, old_port, 3.0)
                if md.controller_id == new and old in {b.node_id for b in md.brokers}:
                    break
            except probe.ProbeError:
                pass
            assert time.monotonic() < end, f"resumed broker {old} never followed controller {new}"
            time.sleep(0.3)
        assert (r.controller, r.controller_epoch) == (new, now.controller_epoch)
        # the resumed broker fences the old epoch too: it has heard from the new controller
        zombie_view = update_metadata(
            old_host,
            old_port,
            controller_id=old,
            controller_epoch=old_epoch,
            live_brokers=_live_brokers(old_host, old_port),
        )
        assert zombie_view == receive_control_request(now.controller_epoch, old_epoch).error
    finally:
        zk.stop()
        zk.close()

    violations = check_zk_readings(readings)
    assert violations == [], "\n".join(f"{v.rule}: {v.detail}" for v in violations)
    say(f"{len(readings)} ZooKeeper readings, no violation")
