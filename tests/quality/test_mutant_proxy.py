"""The mutating proxy (``conformance/mutants/proxy.py``) is a fair broker until a mutant is set.

Without a mutant, the default search through the proxy passes: the proxy itself adds no
divergence, and every client really went through it (Metadata and FindCoordinator name the
proxy). With a mutant that makes successful joins name the next generation, the search fails,
and the saved trace fails again when replayed through a fresh proxy with the same mutant, and
passes through one without: the divergence is the mutant's, nobody else's. A mutant that answers
requests in the proxy (``requests.py``) is caught too, at or after its first mutated exchange.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.drivers.suite import replay_with_own_client, run_suite
from kgc.conformance.mutants.catalogue import BY_NAME
from kgc.conformance.mutants.proxy import MutantProxy
from kgc.engine.traces import load

MUTANT = BY_NAME["join-generation-slips"]


def _search(proxy: MutantProxy, description: dict[str, Any], traces: Path) -> Any:
    return run_suite(
        bootstrap_servers=proxy.bootstrap_servers,
        description=description,
        profile="quick",
        seed=7,
        traces_dir=traces,
        minimize_budget_s=None,
    )


@pytest.mark.broker
def test_the_proxy_is_fair_without_a_mutant_and_the_mutant_is_caught(
    kgc_broker: Any, tmp_path: Path
) -> None:
    description = description_of(kgc_broker)
    upstream = kgc_broker.bootstrap_servers.split(",")[0]
    with MutantProxy(upstream) as fair:
        result = _search(fair, description, tmp_path)
        assert result.ok, result.message
        assert fair.answers > result.commands > 0  # the search's answers, and discovery's
    with MutantProxy(upstream, MUTANT) as broken:
        result = _search(broken, description, tmp_path)
        assert broken.mutated > 0
    assert result.failure == "divergence", result.message
    (saved,) = result.saved
    trace = load(saved)
    for mutant, verdict in ((MUTANT, "STILL FAILING"), (None, "FIXED")):
        with (
            MutantProxy(upstream, mutant) as proxy,
            open_broker(bootstrap_server=proxy.bootstrap_servers) as through,
        ):
            assert replay_with_own_client(through, trace).verdict == verdict


@pytest.mark.broker
def test_a_request_mutant_is_caught_at_or_after_its_first_mutated_exchange(
    kgc_broker: Any, tmp_path: Path
) -> None:
    # every commit answered NONE by the proxy and never forwarded: what the broker keeps differs
    # from what it answered; the search reads it back and fails, after the group's first mutated
    # exchange, and the kill counts under the bench's three rules
    from kgc.bench import mutants as bench

    description = description_of(kgc_broker)
    upstream = kgc_broker.bootstrap_servers.split(",")[0]
    mutant = BY_NAME["commit-never-forwarded"]
    run = bench.against(upstream, description, mutant, profile="quick", traces=str(tmp_path))
    assert not run.result.ok and run.proxy.errors == []
    assert run.failing and run.failing[0].attributed
    assert {m.how for m in run.proxy.mutations} == {"reply"}
    assert bench.judge(run, faithful_ok=True, control_failed=set(), apis=mutant.apis) == ""
