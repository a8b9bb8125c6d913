"""Implementation profiles (``conformance/brokers/implementations.py``): each launched
implementation is judged by Kafka's rules with its named deviations in force, so a search goes on
past them.

A deviation that is only a setting (``SETTINGS``: kfake has no initial rebalance delay) and one the
model names as a switch (``SWITCHES``: kfake's JoinGroup errors name no member) each come with
their proof traces in ``traces/known/``. On a freshly launched instance, each proof passes when
judged by the implementation's whole profile, and fails with that one entry taken out: the entry
is needed, and the profile explains what the implementation did.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from kgc.conformance.brokers.implementations import (
    KFAKE_VERSION,
    LAUNCHERS,
    RDKAFKA_COMMIT,
    SETTINGS,
    SWITCHES,
    TANSU_TAG,
    launched,
    settings_of,
    switches_of,
)
from kgc.conformance.drivers.suite import replay_with_own_client
from kgc.engine.registry import (
    KNOWN_BUG_SWITCHES,
    build,
    build_share,
    model_manifest,
    share_manifest,
)
from kgc.engine.registry import SETTINGS as SETTING_FIELDS
from kgc.engine.traces import Trace, load
from kgc.model.profiles import IMPLEMENTATION_SWITCHES, KAFKA_4_X, PROFILES, SHARE_SWITCHES

from kgc.cli_analyze import analyze_trace
from kgc.cli_matrix import REPLAY_ATTEMPTS

ROOT = Path(__file__).parents[2]
REGISTRY = "kgc.engine.registry"

CASES = [
    (impl, "switch", s.name, s.value, proof)
    for impl, switches in SWITCHES.items()
    for s in switches
    for proof in s.proofs
] + [
    (impl, "setting", s.key, s.value, s.proof)
    for impl, settings in SETTINGS.items()
    for s in settings
    if s.proof is not None
]


# Recorded runs of a race no replay makes happen on demand (``Switch.evidence``)
EVIDENCE = [
    (impl, s.name, evidence)
    for impl, switches in SWITCHES.items()
    for s in switches
    for evidence in s.evidence
]


def _judged_by_profile(trace: Trace, implementation: str, *, without: str | None) -> Trace:
    """``trace`` judged as a run on ``implementation`` is (``model_manifest`` over the target it
    recorded, with the implementation's whole profile), less the entry named ``without``."""
    switches = {k: v for k, v in switches_of(implementation).items() if k != without}
    settings = {k: v for k, v in settings_of(implementation).items() if k != without}
    target = copy.deepcopy(trace.manifest["target"])
    target["implementation_switches"] = switches
    target["implementation_settings"] = settings
    target["group_config"] = {**(target.get("group_config") or {}), **settings}
    manifest = {**copy.deepcopy(trace.manifest), "model": _model_record(trace, target)}
    return Trace(manifest=manifest, events=list(trace.events), result=trace.result)


def _model_record(trace: Trace, target: dict) -> dict:
    """The model record a run on ``target`` makes for ``trace``'s protocol: a share group's
    (``share_manifest`` over the topics the run made), else the classic group's."""
    recorded = trace.manifest["model"]
    if recorded.get("name") == "ShareGroupModel":
        topics = {str(t): int(n) for t, n in recorded["config"]["topics"]}
        return share_manifest(target, topics)
    return model_manifest(target)


def _replay(implementation: str, trace: Trace) -> object:
    with launched(implementation) as broker:
        return replay_with_own_client(broker, trace, client_id="kgc-profile").engine.divergence


def test_every_entry_names_its_source_at_the_pinned_version_and_proofs_that_exist() -> None:
    assert CASES
    for impl, kind, name, _, proof in CASES:
        assert impl in LAUNCHERS
        assert (ROOT / proof).is_file(), proof
        assert Path(proof).parent.name == impl
        if kind == "switch":  # an implementation switch, or a release-line rule of Profile
            assert (  # or of the share group's model (``ShareGroupConfig``)
                name in IMPLEMENTATION_SWITCHES
                or name in SHARE_SWITCHES
                or isinstance(getattr(KAFKA_4_X, name), bool)
            )
        else:
            assert name in SETTING_FIELDS
    for s in SWITCHES.get("kfake", ()) + SETTINGS.get("kfake", ()):
        assert KFAKE_VERSION in s.source
    # a proof is a baseline: it records the deviation (its manifest judges by rules without the
    # entry it proves), or ``kgc matrix`` replays it clean and calls it FIXED
    for _, _kind, name, _, proof in CASES:
        trace = load(ROOT / proof)
        assert (trace.result or {}).get("verdict") != "pass", f"{proof} records no deviation"
        assert name not in (trace.manifest["model"].get("switches") or {}), (proof, name)
    for s in SWITCHES.get("tansu", ()) + SETTINGS.get("tansu", ()):
        assert TANSU_TAG in s.source
    for s in SWITCHES.get("librdkafka-mock", ()) + SETTINGS.get("librdkafka-mock", ()):
        assert RDKAFKA_COMMIT in s.source


def test_a_launched_implementation_is_judged_with_its_profile() -> None:
    described = {"implementation": "kfake", "version": KFAKE_VERSION, "model_profile": "kafka-4.3"}
    described["implementation_switches"] = switches_of("kfake")
    record = model_manifest(described)
    # and held to the contract where the line has a known Kafka bug (``KNOWN_BUG_SWITCHES``)
    contract = {
        k: v for k, v in KNOWN_BUG_SWITCHES.items() if getattr(PROFILES["kafka-4.3"], k) != v
    }
    assert contract == {"subscription_failures_wrapped": True}
    classic = {k: v for k, v in switches_of("kfake").items() if k not in SHARE_SWITCHES}
    assert record["switches"] == {**contract, **classic}
    # the share group's switches go to the share group's record, and only there
    share = share_manifest(described, {"t": 3})
    assert share["switches"] == {
        k: v for k, v in switches_of("kfake").items() if k in SHARE_SWITCHES
    }
    assert share["switches"]["initial_group_epoch"] == 0  # as Kafka 4.2's line
    config = build_share(share, "g").config
    assert config.initial_group_epoch == 0 and config.initialized_at_subscription
    assert "switches" not in share_manifest({**described, "implementation_switches": {}}, {})
    with pytest.raises(ValueError, match="not a switch of the share group's model"):
        build_share({**share, "switches": {"join_error_names_member": False}}, "g")
    assert record["switches"]["join_error_names_member"] is False
    profile = build(record, "g").config.profile
    assert profile.join_error_names_member is False and profile.unknown_group_not_found
    # a record without switches is Kafka's rules; a bad switch is a one-line ValueError
    assert build(
        model_manifest({**described, "implementation_switches": {}}), "g"
    ).config.profile.join_error_names_member
    with pytest.raises(ValueError, match="not a switch of the model's profile"):
        build({**record, "switches": {"leader_epoch_is_zero": True}}, "g")
    assert settings_of("kfake")["group.initial.rebalance.delay.ms"] == 0
    # tansu's KIP-394 handshake at every version is a switch the model reads
    assert switches_of("tansu")["member_id_required_from_v4"] is False
    tansu = model_manifest({**described, "implementation_switches": switches_of("tansu")})
    assert not build(tansu, "g").config.profile.member_id_required_from_v4


# launches its own implementation (no kgc_broker): unmarked, as tests/differential/
# test_implementations.py, so the 3.9.2 pass (``-m broker``) does not run it again
@pytest.mark.parametrize(
    ("implementation", "kind", "name", "value", "proof"),
    CASES,
    ids=[f"{c[0]}-{c[2]}-{Path(c[4]).stem}" for c in CASES],
)
def test_the_profile_explains_each_proof_and_not_without_its_entry(
    implementation: str, kind: str, name: str, value: object, proof: str
) -> None:
    trace = load(ROOT / proof)
    whole = _replay(implementation, _judged_by_profile(trace, implementation, without=None))
    assert whole is None, f"{proof} fails under {implementation}'s whole profile: {whole}"
    less = _judged_by_profile(trace, implementation, without=name)
    # a racy deviation (two timers due together) may replay clean: REPLAY_ATTEMPTS fresh tries
    for _ in range(REPLAY_ATTEMPTS):
        failed = _replay(implementation, less)
        if failed is not None:
            break
    assert failed is not None, f"{proof} passes without {kind} {name}: it explains nothing"


@pytest.mark.parametrize(
    ("implementation", "name", "evidence"), EVIDENCE, ids=[Path(e[2]).stem for e in EVIDENCE]
)
def test_each_race_the_profile_names_passes_as_recorded_and_not_without_its_entry(
    implementation: str, name: str, evidence: str
) -> None:
    """A race's evidence is judged as it was recorded (no broker: a replay would usually not
    repeat the race): the whole profile explains it, and without the entry it diverges."""
    assert Path(evidence).parent == Path("tests/differential/recorded")
    trace = load(ROOT / evidence)
    assert trace.manifest["target"]["implementation"] == implementation
    verdict, divergence = analyze_trace(_judged_by_profile(trace, implementation, without=None))
    assert verdict == "pass", divergence
    verdict, _ = analyze_trace(_judged_by_profile(trace, implementation, without=name))
    assert verdict == "divergence", f"{evidence} passes without {name}: it explains nothing"


def _check(bootstrap: str, profile: str) -> tuple[int, dict, str]:
    done = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "check", "--bootstrap-server", bootstrap]
        + ["--implementation-profile", profile, "--profile", "quick", "--seed", "1"]
        + ["--shrink-budget", "0", "--minimize-budget", "0", "--json", "--traces", TRACES_DIR],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


TRACES_DIR = "build/kgc-profile-traces"


def test_a_broker_kgc_did_not_launch_is_judged_by_the_profile_it_is_given() -> None:
    """``kgc check --bootstrap-server … --implementation-profile kfake``: a kfake kgc did not
    launch (here one it did, reached by address only, so described as an unknown broker) is judged
    by kfake's profile and passes the quick search; ``none`` judges the same broker by Kafka's
    rules alone, and the search stops at a deviation the profile names (kfake answers a new
    group's first JoinGroup at once: no initial rebalance delay)."""
    with launched("kfake") as broker:
        code, out, err = _check(broker.bootstrap_servers, "kfake")
        assert code == 0, err[-3000:]
        target = out["target"]
        assert target["implementation"] == "unknown"
        assert target["implementation_profile"] == "kfake"
        assert target["implementation_switches"] == switches_of("kfake")
        assert "+ kfake deviations (given: --implementation-profile)" in out["judged_by"]
        code, out, err = _check(broker.bootstrap_servers, "none")
        assert code == 1, err[-3000:]
        assert out["target"]["implementation_switches"] == {}
        # the first JoinGroup, answered at once where Kafka's 3 s initial delay holds it
        assert "the broker answered request 0 with JoinGroupResponse(error='NONE'" in out["message"]
        assert "model allowed: request 0: no response yet" in out["message"]
        assert "no implementation's deviations (--implementation-profile none)" in out["judged_by"]
    bad = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "check", "--implementation-profile", "nisshi"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "invalid choice: 'nisshi'" in bad.stderr


def test_a_steer_names_what_the_machine_steers_and_the_baseline_it_avoids() -> None:
    """A deviation that kills the process, or leaves the run's group, is steered around
    (``implementations.STEERS``): each names a steer of the machine, cites the pinned source and
    keeps its baseline; a launched implementation's searches get it, and a profile given by name
    carries it too."""
    from kgc.conformance.brokers.implementations import RDKAFKA_COMMIT, STEERS, judged_by
    from kgc.model.commands import JoinGroup, Protocol
    from kgc.properties.machine import STEERS as MACHINE_STEERS
    from kgc.properties.machine import first_protocols_agree

    assert STEERS
    for impl, steers in STEERS.items():
        for steer in steers:
            assert steer.name in MACHINE_STEERS and (ROOT / steer.proof).is_file()
            assert Path(steer.proof).parent.name == impl
            assert impl != "librdkafka-mock" or RDKAFKA_COMMIT in steer.source
    assert judged_by({}, "librdkafka-mock")["implementation_steers"] == [
        "first_protocols_agree",
        "group_id_never_empty",
        "join_names_a_protocol",
        "join_group_below_v6",
        "sync_group_below_v4",
        "leave_group_below_v3",
        "session_timeout_in_bounds",
    ]
    assert judged_by({}, "none")["implementation_steers"] == []
    from kgc.cli_check import _rules_line

    mock = judged_by({"model_profile": "kafka-3.7"}, "librdkafka-mock")
    assert (
        "; steered around: first_protocols_agree, group_id_never_empty, join_names_a_protocol, "
        "join_group_below_v6, sync_group_below_v4, leave_group_below_v3, "
        "session_timeout_in_bounds)" in _rules_line(mock)
    )

    def join(*names: str) -> JoinGroup:
        protocols = tuple(Protocol(name=n, metadata=f"m-{n}") for n in names)
        return JoinGroup(
            client="c1",
            member_id="",
            session_timeout_ms=6000,
            rebalance_timeout_ms=6000,
            protocols=protocols,
            version=5,
        )

    def names(command: JoinGroup) -> list[str]:
        return [p.name for p in command.protocols]

    assert names(first_protocols_agree(join("roundrobin", "range"))) == ["range", "roundrobin"]
    assert names(first_protocols_agree(join("range", "roundrobin"))) == ["range", "roundrobin"]
    lone = first_protocols_agree(join("roundrobin"))
    assert names(lone) == ["range", "roundrobin"] and lone.protocols[0].metadata == "m-roundrobin"


def test_a_version_cap_steer_drops_only_the_versions_above_it() -> None:
    """``machine.capped_versions``: the steer ``join_group_below_v6`` takes JoinGroup v6+ out of
    the drawn versions and nothing else; a steer without caps changes nothing; a request type
    offered only above its cap keeps its versions (the run meets the deviation, a baseline)."""
    from kgc.properties.machine import STEER_VERSION_CAPS, capped_versions
    from kgc.properties.machine import STEERS as MACHINE_STEERS

    offered = {"JoinGroup": (0, 1, 2, 3, 4, 5, 6), "SyncGroup": (0, 1, 2, 3, 4)}
    assert capped_versions(offered, ["join_group_below_v6"]) == {
        "JoinGroup": (0, 1, 2, 3, 4, 5),
        "SyncGroup": (0, 1, 2, 3, 4),
    }
    assert capped_versions(offered, ["group_id_never_empty"]) == offered
    assert capped_versions({"JoinGroup": (6, 7)}, ["join_group_below_v6"]) == {"JoinGroup": (6, 7)}
    assert set(STEER_VERSION_CAPS) <= set(MACHINE_STEERS)


def test_the_session_steer_sends_no_out_of_bounds_session_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The steer ``session_timeout_in_bounds``: a model-target search with it sends no JoinGroup
    whose session timeout is 1 ms or Integer.MAX_VALUE, and ``aim`` is offered none; the same
    seed without it sends one."""
    import itertools

    from kgc.properties import machine as machine_module

    offered: list[object] = []
    candidates = machine_module.GroupMachine._candidates

    def recording(self, vi: int):  # noqa: ANN001, ANN202
        out = candidates(self, vi)
        offered.extend(command for command, _ in out)
        return out

    monkeypatch.setattr(machine_module.GroupMachine, "_candidates", recording)

    from kgc.engine.registry import build
    from kgc.engine.target import ModelTarget
    from kgc.model.checker import CheckerConfig
    from kgc.model.commands import JoinGroup
    from kgc.properties.machine import SuiteContext, machine_for, search

    record = {"profile": "kafka-4.x", "config": {"group_initial_rebalance_delay_ms": 0}}

    def sessions(steers: frozenset[str], *, seed: int) -> set[int]:
        sent: list[object] = []

        class Recording(ModelTarget):
            def send(self, request_id: int, command) -> None:  # noqa: ANN001
                sent.append(command)
                super().send(request_id, command)

        counter = itertools.count()
        ctx = SuiteContext(
            open_target=lambda gid: Recording(build(record, gid)),
            new_model=lambda gid: build(record, gid),
            checker_config=CheckerConfig(early_ms=0, late_ms=0),
            steers=steers,
        )
        ctx.new_group_id = lambda: f"kgc-model-{next(counter)}"
        search(machine_for(ctx), examples=40, steps=30, seed=seed, shrink=False)
        return {c.session_timeout_ms for c in sent if isinstance(c, JoinGroup)}

    out_of_bounds = {1, 2**31 - 1}
    assert sessions(frozenset(), seed=3) & out_of_bounds
    assert any(getattr(c, "session_timeout_ms", None) == 1 for c in offered)
    offered.clear()
    for seed in (1, 2, 3, 4):  # the rule join_invalid_session and aim's candidates alike
        assert not sessions(frozenset({"session_timeout_in_bounds"}), seed=seed) & out_of_bounds
    assert offered and not any(
        getattr(c, "session_timeout_ms", None) in out_of_bounds for c in offered
    )
