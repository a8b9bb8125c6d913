"""A failure the suite saw is reported even when Hypothesis does not raise it.

Hypothesis discards an example that runs out of its data budget (an *overrun*) even if the test
body failed, and so may end a run without raising. The suite's own record of the example still
holds the divergence, seen on real broker answers; ``run_suite`` must report it and save the trace
rather than call the run a pass. Here Hypothesis's runner is replaced by one that runs a single
failing example and swallows its failure, as a discarded overrun would.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers import suite as suite_module


@pytest.mark.broker
def test_failure_hypothesis_drops_is_still_reported_and_saved(
    kgc_broker: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def swallowing_runner(machine_cls: Any, settings: Any = None, **_: Any) -> None:
        @given(st.just(None))
        @settings_once
        def one_example(_: None) -> None:
            machine = machine_cls()
            machine.failed_check = "divergence"  # what a rule sets when the checker diverges
            with contextlib.suppress(AssertionError):  # dropped, as an overrun example is
                machine.teardown()

        one_example()

    settings_once = settings(max_examples=1, database=None, deadline=None)
    monkeypatch.setattr(suite_module, "run_state_machine_as_test", swallowing_runner)
    result = suite_module.run_suite(
        bootstrap_servers=kgc_broker.bootstrap_servers,
        description=description_of(kgc_broker),
        seed=1,
        traces_dir=tmp_path,
    )
    assert result.failure == "divergence"
    assert "Hypothesis did not report" in (result.message or "")
    assert len(result.saved) == 1 and result.saved[0].exists()
