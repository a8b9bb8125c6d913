"""Quality: the differential suite catches deliberately broken models against a real broker.

Each variant (``kgc.engine.broken``) breaks one rule of the reference model. With it in force,
the suite runs against the session broker and must (1) report a divergence — not "flaky" — on
the first of ``SEEDS`` whose search does not pass it by, (2) save a shrunk trace of at most 10
commands, and (3) that trace, replayed against the broker with the variant still in force, must
fail again at the same request. Without the variant the same replay passes, which shows the
failure is the planted bug and not the broker or timing.

A shrunk trace may leave two clients' requests sent within the reorder window, and the coordinator
may take them in either order (``model/timed.py``; docs/design-notes.md, "Order at the broker").
So "fails again" means on one of ``REPLAY_ATTEMPTS`` replays, as a report card confirms a baseline
(``confirm_baseline``). The CI run that showed this: the broker answered a rejoin before it had
taken the other member's join sent 21 ms earlier, and generation 1 was then right for the broken
model too.

Shrinking against a live broker is bounded (``shrink_budget_s``) so the whole module fits in CI, and
followed by the command-deletion pass (``conformance/drivers/minimize.py``, ``minimize_budget_s``).
"""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import replay_on_broker, run_suite
from kgc.conformance.wire.client import Cluster
from kgc.engine.broken import broken
from kgc.engine.traces import load, render
from kgc.model.history import Invoke, Receive

from kgc.cli_matrix import REPLAY_ATTEMPTS

MAX_COMMANDS = 10
# A search is random, and against a live broker its draws follow the answers' timing too: a seeded
# search that reached a variant on one run may pass by it on another (``pending-join-not-alive``:
# seed 1 reaches it in CI's module order, not run alone). A variant counts as caught when the first
# of these seeds whose search is not a clean pass reports it as a divergence; a "flaky" report
# fails at once. Only a clean pass moves on to the next seed, as the model-only search does
# (``tests/properties/test_search_reach.py``). After seed 1 come seeds whose model-only search
# reaches ``pending-join-not-alive`` (5 of seeds 1-10 do: 4, 6, 7, 9, 10; seeds 1-3 do not). CI of
# ``c3b708e``, with the main pass beside it, failed that variant after three seeds (1, 4, 6; run
# alone here seed 4 catches it in 79 examples): the search is given all five.
SEEDS = (1, 4, 6, 7, 9, 10)
VARIANTS = [
    ("generation-not-bumped", "quality"),
    ("stale-generation-wrong-error", "quality"),
    ("leader-not-rechosen", "quality"),
    ("expiry-ignored", "quality"),
    # needs an existing member parked in a rebalance past its session while another member does
    # not rejoin: reached by form_group's "reconfigure" and the deadline-aimed tick
    ("pending-join-not-alive", "quality"),
]


def _replay(broker, trace):  # noqa: ANN001
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-quality")
    try:
        done = replay_on_broker(broker, cluster, trace)
        return done.engine, done.trace
    finally:
        cluster.close()


def _diverging_request(events, divergence):  # noqa: ANN001
    e = divergence.event
    rid = e.request_id if isinstance(e, Receive | Invoke) else None
    for x in events:
        if isinstance(x, Invoke) and x.request_id == rid:
            return x.command.type
    return e.kind


@pytest.mark.broker
@pytest.mark.quality
@pytest.mark.parametrize(("variant", "profile"), VARIANTS, ids=[v for v, _ in VARIANTS])
def test_suite_catches_broken_model(variant, profile, kgc_broker, tmp_path):
    passed_by: list[int] = []
    for seed in SEEDS:
        with broken(variant):
            result = run_suite(
                bootstrap_servers=kgc_broker.bootstrap_servers,
                description=description_of(kgc_broker),
                profile=profile,
                seed=seed,
                traces_dir=tmp_path / f"seed-{seed}",
                shrink_budget_s=30,
                minimize_budget_s=120,
            )
        if result.failure is not None:
            break
        passed_by.append(seed)
    assert result.failure == "divergence", (
        f"{variant}: expected a divergence, got {result.failure} (seeds that passed it by: "
        f"{passed_by}): {result.message[:2000]}"
    )
    if passed_by:
        print(f"{variant}: seeds {passed_by} passed it by; seed {seed} caught it")
    assert len(result.saved) == 1
    trace = load(result.saved[0])
    commands = trace.commands
    print(
        f"{variant}: {result.examples} examples, trace of {len(commands)} commands\n{render(trace)}"
    )
    assert len(commands) <= MAX_COMMANDS, render(trace)

    for _ in range(REPLAY_ATTEMPTS):
        with broken(variant):
            engine, replayed = _replay(kgc_broker, trace)
        if engine.divergence is not None:
            break
    assert engine.divergence is not None, (
        f"{REPLAY_ATTEMPTS} replays did not fail again; the last:\n{render(replayed)}"
    )
    original = trace.result["divergence"]
    again = _diverging_request(engine.events, engine.divergence)
    first_kind = _diverging_request(trace.events, _Div(trace.events[original["index"]]))
    assert again == first_kind, f"replay failed differently ({again} vs {first_kind})"

    engine, replayed = _replay(kgc_broker, trace)  # the real model: the same commands pass
    assert engine.divergence is None, f"the unbroken model diverges too:\n{render(replayed)}"


class _Div:
    def __init__(self, event) -> None:  # noqa: ANN001
        self.event = event
