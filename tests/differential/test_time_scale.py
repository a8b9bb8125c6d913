"""A broker left at Kafka's default group settings gets the whole search (issue "Any
Kafka-protocol broker", item 3 and its "done when").

Kafka's defaults refuse the suite's 1-2 s sessions (``group.min.session.timeout.ms=6000``) and park
every new group's first join for 3 s (``group.initial.rebalance.delay.ms=3000``). A second broker
of the session's version is started with exactly those two settings left at Kafka's defaults, and
the same seeded search runs against it (through ``run_suite``, as ``kgc check
--bootstrap-server`` does) and against the session broker (the suite's own settings). Against the
defaults the run must read the settings, scale its time by 6, pass, and reach at least 80 % of the
cells the same seed reaches with the suite's settings. Before time scaling it reached 13 cells to
38 (``kgc check`` seed 11: every join refused or parked).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from kgc.conformance.broker import EmbeddedKafka
from kgc.conformance.session import description_of
from kgc.conformance.suite import run_suite

KAFKA_DEFAULTS = {
    "group.min.session.timeout.ms": "6000",
    "group.initial.rebalance.delay.ms": "3000",
}
SEED = 11
SEARCH = settings(
    max_examples=5,
    stateful_step_count=16,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _search(broker, traces_dir):  # noqa: ANN001, ANN202
    """The same seeded search on ``broker``, its failing traces into ``traces_dir``."""
    return run_suite(
        bootstrap_servers=broker.bootstrap_servers,
        description=description_of(broker),
        seed=SEED,
        traces_dir=traces_dir,
        search_settings=SEARCH,
    )


@pytest.mark.broker
def test_kafka_default_group_settings_get_the_whole_search_slower(kgc_broker, tmp_path):
    if not isinstance(kgc_broker, EmbeddedKafka):
        pytest.skip("starts a second broker of the session's version: embedded sessions only")
    version = kgc_broker.version
    own = _search(kgc_broker, tmp_path / "own")
    assert own.ok, own.message
    assert "time_scale" not in own.target
    with EmbeddedKafka(version, nodes=1, config=KAFKA_DEFAULTS) as defaults:
        slow = _search(defaults, tmp_path / "defaults")
    assert slow.ok, slow.message
    assert slow.target["group_config"]["group.min.session.timeout.ms"] == 6000
    assert slow.target["fact_sources"]["group.min.session.timeout.ms"] == "read"
    assert slow.target["time_scale"] == 6
    reached, wanted = len(slow.coverage), len(own.coverage)
    missed = sorted(set(own.coverage) - set(slow.coverage))
    assert reached >= 0.8 * wanted, (reached, wanted, missed)
