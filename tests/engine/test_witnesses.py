"""Every cell the coverage universe counts has a witness recorded against a real broker (issue
"Search power", item 2).

``tests/engine/witnesses/<broker>/`` holds, per embedded broker, a few traces recorded by
``kgc check --record`` and picked by ``python -m kgc.conformance.drivers.witness build``
(CONTRIBUTING.md): together they reach every cell ``engine/coverage.py`` counts for that broker.
Re-checked here against today's model, so a model change that makes a witness fail, or a universe
change that counts a cell no broker showed (or excludes one a broker did show), fails this test.
The sets also witness the input cells (request × version × field class): each set's traces were
recorded since the search draws every version.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kgc.conformance.drivers.witness import check, select
from kgc.engine.coverage import universe
from kgc.engine.traces import expand, load

WITNESSES = Path(__file__).parent / "witnesses"
SETS = sorted(p.name for p in WITNESSES.iterdir() if p.is_dir())


def test_there_is_a_set_for_the_default_broker_and_the_3_9_line() -> None:
    assert {"kafka-4.3.1", "kafka-3.9.2"} <= set(SETS)


@pytest.mark.parametrize("name", SETS)
def test_every_counted_cell_has_a_witness_that_still_passes(name: str) -> None:
    traces = [(str(p), load(p)) for p in expand([WITNESSES / name])]
    assert all(t.manifest["target"]["implementation"] == "apache-kafka" for _, t in traces)
    report = check(traces)
    assert not report.failing, report.failing
    assert not report.excluded, f"witnessed, yet excluded by the universe: {report.excluded}"
    assert not report.missing, f"counted, yet never witnessed: {report.missing}"
    assert len(report.witnessed) >= 0.85 * len(universe())
    # input cells (request × version × field class): none sent may be one the universe excludes,
    # and the set sent at least 90 % of those its broker's versions count
    assert not report.inputs_excluded, f"sent, yet excluded: {report.inputs_excluded}"
    counted = len(report.inputs_witnessed) + len(report.inputs_missing)
    assert counted and len(report.inputs_witnessed) >= 0.9 * counted, report.inputs_missing


def test_select_cuts_each_trace_after_its_last_new_cell() -> None:
    traces = [load(p) for p in expand([WITNESSES / "kafka-4.3.1"])]
    again = select(traces)
    assert len(again) <= len(traces)
    for t in again:
        assert t.result == {"verdict": "pass"}
        assert type(t.events[-1]).__name__ == "Receive"
