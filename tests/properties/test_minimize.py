"""The command-deletion pass (``conformance/drivers/minimize.py``) drops what a failure does not
need.

No broker: the target is the unbroken model (``_KafkaLike`` from the search-reach test) and the
checker holds it to the ``generation-not-bumped`` variant. A failing sequence the quality search
finds is padded with requests that cannot matter (DescribeGroups from a client that never joins);
the pass must remove every one of them, keep the failure at a request of the same type, and never
return a sequence longer than it was given.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from kgc.conformance.drivers.minimize import MAX_CHUNK, deletions, diverging_request, minimize
from kgc.conformance.drivers.suite import hypothesis_settings
from kgc.engine.broken import broken
from kgc.engine.loop import Engine
from kgc.engine.registry import build
from kgc.engine.traces import Trace, new_manifest, result_of
from kgc.model.checker import CheckerConfig
from kgc.model.commands import DescribeGroups, JoinGroup, Protocol, Tick
from kgc.properties.machine import DivergenceError, SuiteContext, machine_for

from tests.properties.test_search_reach import RECORD, _KafkaLike

VARIANT = "generation-not-bumped"
CHECKER = CheckerConfig(early_ms=20, late_ms=100)


def _failing_commands() -> list[Any]:
    found: list[Trace] = []
    ctx = SuiteContext(
        open_target=_KafkaLike,
        new_model=lambda gid: build(RECORD, gid),
        checker_config=CHECKER,
        profile="quality",
        on_example_end=lambda m: found.append(m.trace()) if m.failed_check else None,
    )
    counter = iter(range(10**6))
    ctx.new_group_id = lambda: f"kgc-min-{next(counter)}"
    cls = machine_for(ctx)
    cls._hypothesis_internal_use_seed = 1  # type: ignore[attr-defined]
    with contextlib.suppress(DivergenceError):  # the failure is what we came for
        run_state_machine_as_test(
            cls, settings=settings(hypothesis_settings("quality"), phases=[Phase.generate])
        )
    assert found, "the quality search did not reach the variant"
    return list(found[0].commands)


def _run(commands: list[Any], group_id: str) -> Trace:
    target = _KafkaLike(group_id)
    engine = Engine(target, build(RECORD, group_id), checker_config=CHECKER)
    engine.run(commands, stop_at_divergence=True)
    manifest = new_manifest(
        target={}, group_id=group_id, seed=None, profile="quality", scenario="classic",
        model=RECORD, checker={"early_ms": 20, "late_ms": 100},
    )  # fmt: skip
    return Trace(manifest=manifest, events=engine.events, result=result_of(engine))


def test_padding_is_removed_and_the_failure_kept() -> None:
    with broken(VARIANT):
        commands = _failing_commands()
        pad = [DescribeGroups(client="c9", version=0)] * 3
        padded = _run(pad + commands[:1] + pad + commands[1:], "kgc-min-padded")
        assert padded.result["verdict"] == "divergence"
        want = diverging_request(padded.events, padded.events[padded.result["divergence"]["index"]])
        small = minimize(
            padded,
            open_target=_KafkaLike,
            model_factory=lambda gid: build(RECORD, gid),
            budget_s=120,
        )
    assert small.result["verdict"] == "divergence"
    got = diverging_request(small.events, small.events[small.result["divergence"]["index"]])
    assert got == want
    assert not any(getattr(c, "client", None) == "c9" for c in small.commands)
    assert len(small.commands) <= len(commands)
    assert small.manifest["minimized_from"] == padded.manifest["trace_id"]


class _Accidents:
    """``_KafkaLike``, except that the first ``n`` targets opened answer every ``kind`` request
    wrongly: a replay that fails by accident (on a broker: the engine stalled on a loaded machine
    and read an answer it would not have waited for)."""

    def __init__(self, n: int, kind: str) -> None:
        self.left = n
        self.kind = kind

    def __call__(self, group_id: str) -> Any:
        inner = _KafkaLike(group_id)
        if self.left <= 0:
            return inner
        self.left -= 1
        kinds: dict[int, str] = {}
        send, poll = inner.send, inner.poll

        def sending(request_id: int, command: Any) -> None:
            kinds[request_id] = command.type
            send(request_id, command)

        def polling(timeout_ms: float) -> list[Any]:
            return [
                dataclasses.replace(
                    a, response=dataclasses.replace(a.response, error="UNKNOWN_SERVER_ERROR")
                )
                if kinds.get(a.request_id) == self.kind
                else a
                for a in poll(timeout_ms)
            ]

        inner.send, inner.poll = sending, polling  # type: ignore[method-assign]
        return inner


def test_a_deletion_that_failed_only_by_accident_is_not_kept() -> None:
    with broken(VARIANT):
        commands = _failing_commands()
        failing = _run(commands, "kgc-min-genuine")
        want = diverging_request(
            failing.events, failing.events[failing.result["divergence"]["index"]]
        )
        # the pass's first replays (one per command but the first, fewer than it makes) all
        # fail by accident, at a request of the failure's type
        accidents = _Accidents(len(commands) - 1, want)
        small = minimize(
            failing,
            open_target=accidents,
            model_factory=lambda gid: build(RECORD, gid),
            budget_s=120,
        )
        assert accidents.left == 0  # the accidents did happen
        again = _run(list(small.commands), "kgc-min-again")
    # what the pass returns fails again on an honest target
    assert again.result["verdict"] == "divergence", [c.type for c in small.commands]


def test_the_engine_counts_the_waits_for_a_busy_client() -> None:
    # c1's join parks (c2 leads generation 1 and does not rejoin): a replayed DescribeGroups of c1
    # makes the engine wait for the join's answer first, a wait no command records. The pass
    # rejects a shortened sequence that needed one (``minimize``: ``engine.drains``).
    def join(client: str) -> JoinGroup:
        return JoinGroup(
            client=client,
            session_timeout_ms=1000,
            rebalance_timeout_ms=1000,
            protocols=(Protocol(name="range", metadata="m"),),
            version=3,
        )

    waited = Engine(_KafkaLike("kgc-min-drain"), build(RECORD, "kgc-min-drain"))
    waited.run([join("c2"), join("c1"), DescribeGroups(client="c1", version=0)])
    assert waited.drains == 1
    ticked = Engine(_KafkaLike("kgc-min-tick"), build(RECORD, "kgc-min-tick"))
    ticked.run([join("c2"), join("c1"), Tick(ms=1100), DescribeGroups(client="c1", version=0)])
    assert ticked.drains == 0


def test_a_trace_minimised_within_its_budget_is_1_minimal() -> None:
    # the pass repeats until a whole pass deletes nothing: then no single command can go. Checked
    # here from the outside, deleting each command of the result in turn
    with broken(VARIANT):
        commands = _failing_commands()
        pad = [DescribeGroups(client="c9", version=0), Tick(ms=50)]
        failing = _run(pad + commands, "kgc-min-1")
        want = diverging_request(
            failing.events, failing.events[failing.result["divergence"]["index"]]
        )
        small = minimize(
            failing,
            open_target=_KafkaLike,
            model_factory=lambda gid: build(RECORD, gid),
            budget_s=300,
        )
        assert small.manifest["minimal"] == "1-minimal"
        kept = list(small.commands)
        for i in range(len(kept)):
            shorter = kept[:i] + kept[i + 1 :]
            group_id = f"kgc-min-1-without-{i}"
            engine = Engine(_KafkaLike(group_id), build(RECORD, group_id), checker_config=CHECKER)
            try:
                engine.run(shorter, stop_at_divergence=True)
            except Exception:  # noqa: BLE001 - a sequence that cannot run does not fail
                continue
            still = (
                engine.divergence is not None
                and not engine.drains
                and diverging_request(engine.events, engine.divergence.event) == want
            )
            assert not still, f"command {i} ({kept[i].type}) could go: not 1-minimal"


def test_a_flaky_failure_seen_again_on_a_fresh_group_is_a_divergence(tmp_path: Any) -> None:
    """``save_findings``: when Hypothesis calls a failure flaky (it did not fail again while
    shrinking, as a timing-dependent failure under load may not), the failing trace is replayed on
    fresh groups; seen again there, it is reported and saved as a divergence, minimised. Without
    the planted bug the same trace replays clean, and the run stays flaky."""
    from types import SimpleNamespace

    from kgc.conformance.drivers.suite import Output, Seen, SuiteResult, save_findings

    with broken(VARIANT):
        commands = _failing_commands()
        failing = _run(commands, "kgc-min-flaky")
        setup = SimpleNamespace(
            harness=SimpleNamespace(
                open_target=_KafkaLike, new_model=lambda gid: build(RECORD, gid)
            ),
            workload=SimpleNamespace(scenario="classic"),
        )
        result = SuiteResult(profile="quality", seed=1, failure="flaky", message="flaky")
        seen = Seen(failures=[("divergence", failing, False)])
        out = Output(traces_dir=tmp_path / "a", minimize_budget_s=60)
        save_findings(result, seen, setup, out)  # type: ignore[arg-type]
    assert result.failure == "divergence" and "seen again on a fresh group" in result.message
    assert len(result.saved) == 1
    # the real model: the trace replays clean, nothing is seen again, the run stays flaky
    result = SuiteResult(profile="quality", seed=1, failure="flaky", message="flaky")
    save_findings(result, seen, setup, Output(traces_dir=tmp_path / "b", minimize_budget_s=60))  # type: ignore[arg-type]
    assert result.failure == "flaky" and len(result.saved) >= 1


def test_a_broker_that_stops_answering_ends_the_pass_with_the_trace_as_it_was() -> None:
    """Opening a fresh group for a replay fails (tansu 0.6.0 stopped answering DescribeGroups for
    30 s under ``kgc matrix``'s deletion pass, and the whole card died with it): the pass stops at
    once and the trace stays as Hypothesis left it, observed failing."""
    opened: list[str] = []

    def unreachable(group_id: str) -> Any:
        opened.append(group_id)
        raise ConnectionError("DescribeGroups v5: timeout after 30.0 s")

    with broken(VARIANT):
        failing = _run(_failing_commands(), "kgc-min-unreachable")
        small = minimize(
            failing,
            open_target=unreachable,
            model_factory=lambda gid: build(RECORD, gid),
            budget_s=120,
        )
    assert small is failing
    assert len(opened) == 1  # the first failure to open a target ends the pass


def _fails_when(needed: set[str], together: list[set[str]]):  # noqa: ANN202
    """A failure that needs every command in ``needed`` and each group in ``together`` wholly
    present or wholly absent (a member's join and its leave: the leave alone names no member,
    the join alone leaves one that every later rebalance waits for)."""

    def fails(commands: list[str]) -> bool:
        have = set(commands)
        return needed <= have and all(g <= have or not g & have for g in together)

    return fails


def test_runs_that_go_only_together_are_deleted() -> None:
    # "XY" and "PQR" cannot lose one command at a time, only as a pair and a triple
    commands = list("aXYbcPQRd")
    fails = _fails_when({"a", "d"}, [{"X", "Y"}, {"P", "Q", "R"}])
    kept, minimal = deletions(commands, fails, budget_s=60)
    assert kept[-1] == ["a", "d"]
    assert minimal
    assert all(fails(k) for k in kept)
    assert [len(k) for k in kept] == sorted((len(k) for k in kept), reverse=True)


def test_the_result_holds_no_run_that_could_go() -> None:
    # checked from the outside: no single command and no adjacent run of up to MAX_CHUNK
    commands = list("aXYZbWVcd")
    fails = _fails_when({"a", "c"}, [{"X", "Y", "Z"}, {"b", "d"}, {"W", "V"}])
    kept, minimal = deletions(commands, fails, budget_s=60)
    assert minimal
    best = kept[-1]
    for size in range(1, MAX_CHUNK + 1):
        for i in range(len(best) - size + 1):
            shorter = best[:i] + best[i + size :]
            assert not (shorter and fails(shorter)), (best, i, size)
    # b and d are not adjacent, so they stay: the search is over adjacent runs only
    assert best == list("abcd")


def test_a_search_out_of_time_is_not_minimal() -> None:
    kept, minimal = deletions(list("abc"), lambda c: True, budget_s=0)
    assert (kept, minimal) == ([], False)
