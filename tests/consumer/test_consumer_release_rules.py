"""Which consumer-group rules each Apache Kafka 4.x line is held to (``engine/registry.py``
``consumer_manifest``). Each switch was read in that line's kafka-group-coordinator jar and shown by
the suite on a live broker of the older line (see the switches' comments in
``model/consumer_group.py``)."""

from __future__ import annotations

import pytest
from kgc.engine.registry import build_consumer, consumer_manifest


@pytest.mark.parametrize(
    ("version", "first_epoch", "zero_rejoins", "pending_in_describe"),
    [
        ("4.0.2", 0, False, False),
        ("4.1.2", 0, False, False),
        ("4.2.1", 0, True, False),
        ("4.3.0", 1, True, True),
        ("4.3.1", 1, True, True),
        ("unknown", 1, True, True),  # a broker that does not say: the newest rules
    ],
)
def test_each_line_gets_its_own_consumer_rules(
    version: str, first_epoch: int, zero_rejoins: bool, pending_in_describe: bool
) -> None:
    record = consumer_manifest({"version": version}, {"t": 3})
    config = build_consumer(record, "g").config
    assert config.initial_group_epoch == first_epoch
    assert config.epoch_zero_rejoins is zero_rejoins
    assert config.describe_includes_pending_revocation is pending_in_describe
