"""A broker left at Kafka's default group settings gets the whole search (issue "Any
Kafka-protocol broker", item 3 and its "done when").

Kafka's defaults refuse the suite's 1-2 s sessions (``group.min.session.timeout.ms=6000``) and park
every new group's first join for 3 s (``group.initial.rebalance.delay.ms=3000``). A second broker
of the session's version is started with exactly those two settings left at Kafka's defaults, and
the same seeded searches run against it (through ``run_tasks``, as ``kgc check --bootstrap-server
--workers`` does) and against the session broker (the suite's own settings). Against the defaults
the run must read the settings, scale its time by 6, pass, and reach at least 80 % of the cells the
same seeds reach with the suite's settings. Before time scaling it reached 13 cells to 38 (``kgc
check`` seed 11: every join refused or parked).

Why eight seeds: one seed's few examples are too small a sample. Over seeds 11-21, five examples
each, the defaults reached 0.45 to 1.09 of the cells the same seed reached with the suite's
settings (4.3.1 and 3.9.2 alike; 4 of the 11 seeds under 0.8), and seed 11 alone, 30 cells to 32
here, reached 21 in one CI run: time scaling changes when answers come, so a seed's examples take
other paths. Eight seeds of five examples, all eight searches at once, reached 85 cells to 90
(4.3.1) and 84 to 89 (3.9.2), about 140 s a version; one seed used to take 34 s.
"""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.workers import run_tasks

KAFKA_DEFAULTS = {
    "group.min.session.timeout.ms": "6000",
    "group.initial.rebalance.delay.ms": "3000",
}
SEEDS = tuple(range(11, 19))
EXAMPLES = 5  # per seed, of the ci profile's 24 steps
WORKERS = len(SEEDS)  # one wave: the searches mostly wait for the brokers' timers


def _search(broker, traces_dir):  # noqa: ANN001, ANN202
    """The same seeded searches on ``broker``, their failing traces into ``traces_dir``."""
    return run_tasks(
        [(seed, EXAMPLES) for seed in SEEDS],
        WORKERS,
        bootstrap_servers=broker.bootstrap_servers,
        description=description_of(broker),
        traces_dir=traces_dir,
        profile="ci",
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
    assert reached >= 0.8 * wanted, (reached, wanted, missed, own.workers, slow.workers)
