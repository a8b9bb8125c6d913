"""The differential suite in pytest: Hypothesis drives one command sequence to the model and the
broker, and every response must be one the model allows.

Runs against the session broker (embedded ``--kgc-kafka-version``, or ``--kgc-bootstrap-server``).
A failure is shrunk and saved under ``--kgc-traces`` (default ``traces/``) with its replay command;
the assertion message is the readable trace. With ``--kgc-record DIR`` every executed example's
trace is also written into ``DIR`` (``make test`` records the 4.x and 3.9.x runs into one corpus
and builds its CI report from it).

Installed with kgc, so a broker's own CI collects it with ``pytest --pyargs kgc.testsuite``
(:mod:`kgc.testsuite`); kgc's own test run collects it through ``tests/differential``.
"""

from __future__ import annotations

import pytest

from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import run_suite


@pytest.mark.broker
def test_broker_answers_as_the_model_allows(kgc_broker, pytestconfig):
    description = description_of(kgc_broker)
    result = run_suite(
        bootstrap_servers=kgc_broker.bootstrap_servers,
        description=description,
        profile=pytestconfig.getoption("--kgc-profile"),
        seed=pytestconfig.getoption("--kgc-seed"),
        traces_dir=pytestconfig.getoption("--kgc-traces"),
        record_dir=pytestconfig.getoption("--kgc-record"),
    )
    print(
        f"kgc: {result.examples} examples, {result.commands} requests + {result.ticks} ticks "
        f"in {result.wall_s:.1f} s, seed {result.seed}, peak {result.peak_states} model states"
    )
    saved = "".join(f"\nsaved: {p}" for p in result.saved)
    assert result.ok, f"{result.failure}: {result.message}{saved}"
    assert result.commands > 0, "the suite sent no request"
    record = pytestconfig.getoption("--kgc-record")
    if record is not None:
        assert result.record_error is None, result.record_error
        # every example ran to its end and was written, one file each
        assert len(set(result.recorded)) == result.examples > 0
        print(f"kgc: recorded {len(result.recorded)} traces into {record}")
