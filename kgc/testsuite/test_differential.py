"""The differential suite in pytest: Hypothesis drives one command sequence to the model and the
broker, and every response must be one the model allows.

Runs against the session broker (embedded ``--kgc-kafka-version``, or ``--kgc-bootstrap-server``).
A failure is shrunk and saved under ``--kgc-traces`` (default ``traces/``) with its replay command;
the assertion message is the readable trace. With ``--kgc-record DIR`` every executed example's
trace is also written into ``DIR`` (``make test`` records the 4.x and 3.9.x runs into one corpus
and builds its CI report from it).

With ``--kgc-known DIR`` (an implementation's known deviations, one baseline trace each) the suite
is a ratchet for that implementation's CI:

* the search passes when it stops at a known deviation: the same request, answer and allowed
  answers as a baseline (:mod:`kgc.engine.deviations`), and fails on any other;
* each baseline is replayed on the broker (``test_known_deviation_still_shows``, on a fresh
  group, up to three times as ``kgc matrix`` does): it passes when it fails again at the event it
  recorded, warns ``FIXED`` when it replays clean (drop it from ``DIR``), and fails when it fails
  elsewhere or cannot finish.

Installed with kgc, so a broker's own CI collects it with ``pytest --pyargs kgc.testsuite``
(:mod:`kgc.testsuite`); kgc's own test run collects it through ``tests/differential``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import run_suite


@pytest.mark.broker
def test_broker_answers_as_the_model_allows(kgc_broker, pytestconfig):
    description = description_of(kgc_broker)
    result = run_suite(
        bootstrap_servers=kgc_broker.bootstrap_servers,
        security=getattr(kgc_broker, "security", None),
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
    known = pytestconfig.getoption("--kgc-known")
    if known and result.failure == "divergence" and result.saved:
        same = _known_as(Path(result.saved[0]), Path(known))
        assert same, f"a NEW deviation, none of {known}'s: {result.message}{saved}"
        print(f"kgc: stopped at a known deviation: {', '.join(p.name for p in same)}")
        return
    assert result.ok, f"{result.failure}: {result.message}{saved}"
    assert result.commands > 0, "the suite sent no request"
    record = pytestconfig.getoption("--kgc-record")
    if record is not None:
        assert result.record_error is None, result.record_error
        # every example ran to its end and was written, one file each
        assert len(set(result.recorded)) == result.examples > 0
        print(f"kgc: recorded {len(result.recorded)} traces into {record}")


def _known_as(saved: Path, known: Path) -> list[Path]:
    """The baselines in ``known`` that record the same deviation as the trace at ``saved``."""
    from kgc.engine.deviations import deviation_of
    from kgc.engine.traces import TraceError, load

    mine = deviation_of(load(saved))
    if mine is None:
        return []
    out = []
    for path in sorted(known.glob("*.json")):
        try:
            theirs = deviation_of(load(path))
        except (TraceError, OSError):
            continue
        if theirs is not None and not mine.differs_in(theirs):
            out.append(path)
    return out


@pytest.mark.broker
@pytest.mark.kgc_known
def test_known_deviation_still_shows(kgc_broker, kgc_known_trace):
    from kgc.cli_matrix import confirm_baseline
    from kgc.conformance.drivers.suite import replay_on_broker
    from kgc.conformance.wire.client import Cluster
    from kgc.engine.traces import load

    trace = load(kgc_known_trace)

    def replay(t):  # noqa: ANN001, ANN202
        cluster = Cluster(
            kgc_broker.bootstrap_servers,
            client_id="kgc-known",
            security=getattr(kgc_broker, "security", None),
        )
        try:
            done = replay_on_broker(kgc_broker, cluster, t)
        finally:
            cluster.close()
            cluster.poller.close()
        return done.verdict, done.trace

    verdict, replayed, status = confirm_baseline(replay, trace)
    name = kgc_known_trace.name
    if status["status"] == "FIXED":
        warnings.warn(f"FIXED: {name} replays clean; drop it from --kgc-known", stacklevel=1)
        return
    assert status["status"] == "known", (
        f"{name}: {status['status']} after {status['replays']} replay(s) ({verdict}); "
        f"recorded {status.get('recorded_event')}, replayed {status.get('replayed_event')}"
    )
