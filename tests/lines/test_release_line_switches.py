"""Each behaviour switch that separates two neighbouring release lines, shown on both brokers.

The traces under ``data/`` are divergences ``kgc check`` found on an old release while that line was
still judged by 3.9's rules; each became a switch on ``Profile`` (cited there). Each is replayed on
a fresh broker of the last line with the old behaviour and of the first line with the new one:

* on both, the line's own rules pass it (the switch explains what each broker answered);
* on the old line, the new line's rules fail it: the switch is needed, and the two brokers really
  answer differently (the same model on both would pass one and fail the other).

The expectations are the Kafka sources cited at each switch, not the model: a profile that
dropped a switch would fail here against the broker.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.drivers.suite import replay_with_own_client
from kgc.engine.traces import load

DATA = Path(__file__).parent / "data"

# (trace, switch, last patch with the old behaviour, first patch with the new)
CASES = [
    (
        "heartbeat-awaiting-sync-found-on-1.0.2.json",
        "heartbeat_awaiting_sync_is_rebalancing",
        "2.5.1",
        "2.6.3",
    ),
    (
        "unknown-instance-id-in-sync-found-on-2.4.1.json",
        "unknown_instance_id_rejected",
        "2.8.2",
        "3.0.2",
    ),
    (
        "awaiting-sync-state-name-found-on-1.0.2.json",
        "completing_rebalance_name",
        "1.0.2",
        "1.1.1",
    ),
    (
        "join-error-generation-found-on-1.0.2.json",
        "join_error_generation_id",
        "1.1.1",
        "2.4.1",
    ),
    (
        "simple-commit-with-instance-id-found-on-3.0.2.json",
        "simple_commit_checked_first",
        "3.2.3",
        "3.3.2",
    ),
    (
        "static-rejoin-in-completing-rebalance-found-on-2.4.1.json",
        "static_rejoin_answered_in_completing",
        "2.4.1",
        "3.3.2",  # 2.5 - 3.2 cannot write this trace's v3 leader answer (a finding, see docs)
    ),
    (
        "new-member-timer-lost-found-on-2.4.1.json",
        "new_member_keeps_no_timer_after_first_join",
        "2.4.1",
        "2.5.1",
    ),
    (
        # group.max.size 3 (the embedded broker's): a static member is Stable alone, three new
        # members join (v3) while it has not rejoined; 2.5.1 refuses the third at once (the group
        # has 3 members), 2.6.3 parks it (2 members awaiting join, KAFKA-9885)
        "new-member-of-full-rebalancing-group-found-on-2.5.1.json",
        "max_size_limits_unknown_members_only",
        "2.5.1",
        "2.6.3",
    ),
]


@pytest.fixture(scope="module")
def brokers():
    started: dict[str, EmbeddedKafka] = {}

    def get(version: str) -> EmbeddedKafka:
        if version not in started:
            started[version] = EmbeddedKafka(version).start()
        return started[version]

    yield get
    for broker in started.values():
        broker.stop()


def _judged_by(trace, version: str, *, flipped: str | None = None, to: str | None = None):  # noqa: ANN001, ANN202
    """The recording with the model record of ``version``'s release line; with ``flipped``, of
    that line's profile with that one switch set as line ``to`` has it (registered for the test
    under a name of its own): the switch alone, not the lines' other differences."""
    from kgc.model import profile_for_version
    from kgc.model.profiles import PROFILES

    profile = profile_for_version(version)
    if flipped is not None:
        assert to is not None
        value = getattr(profile_for_version(to), flipped)
        profile = dataclasses.replace(
            profile, name=f"{profile.name}-{flipped}-as-{to}", **{flipped: value}
        )
        PROFILES[profile.name] = profile
    judged = copy.deepcopy(trace)
    judged.manifest["model"]["profile"] = profile.name
    judged.result = None
    return judged


def _replay(broker: EmbeddedKafka, trace) -> str:  # noqa: ANN001
    return replay_with_own_client(broker, trace, client_id="kgc-lines").verdict


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(("name", "switch", "old", "new"), CASES, ids=[c[1] for c in CASES])
def test_a_switch_explains_both_lines_and_is_needed(brokers, name, switch, old, new) -> None:
    from kgc.model import profile_for_version

    assert getattr(profile_for_version(old), switch) != getattr(profile_for_version(new), switch)
    trace = load(DATA / name)
    assert _replay(brokers(old), _judged_by(trace, old)) == "PASSES", f"{old} by its own rules"
    assert _replay(brokers(new), _judged_by(trace, new)) == "PASSES", f"{new} by its own rules"
    flipped = _judged_by(trace, old, flipped=switch, to=new)
    assert _replay(brokers(old), flipped) == "FAILING", (
        f"{old}'s broker passed with {switch} as {new} has it: the switch makes no difference"
    )


def _scripted(tmp_path: Path, name: str, commands: list[dict], *, like: str = CASES[0][0]) -> Path:
    """A trace of ``commands`` (requests as the model's command records, and ``{"tick": ms}``)
    with the manifest of a recorded one (``like``, under ``data/``): what a replay re-sends, with
    nothing recorded yet."""
    template = json.loads((DATA / like).read_text())
    events: list[dict] = []
    request_id = 0
    for step, c in enumerate(commands):
        if "tick" in c:
            events.append({"at_ms": 0.0, "kind": "tick", "ms": c["tick"], "step": step})
            continue
        events.append(
            {
                "at_ms": 0.0,
                "command": c,
                "group_state": "Empty",
                "kind": "invoke",
                "request_id": request_id,
                "step": step,
            }
        )
        request_id += 1
    path = tmp_path / name
    path.write_text(json.dumps({"manifest": template["manifest"], "events": events}))
    return path


def _join(
    client: str,
    member_id: str = "",
    session_ms: int = 10_000,
    version: int = 2,
    instance: str | None = None,
    protocols: tuple[str, ...] = ("range",),
) -> dict:
    return {
        "type": "JoinGroup",
        "client": client,
        "member_id": member_id,
        "group_instance_id": instance,
        "session_timeout_ms": session_ms,
        "rebalance_timeout_ms": 1_000,
        "protocol_type": "consumer",
        "protocols": [{"name": p, "metadata": '{"topics": ["kgc-lines"]}'} for p in protocols],
        "version": version,
    }


def _sync(client: str, member_id: str, generation: int, assignments: list[dict]) -> dict:
    return {
        "type": "SyncGroup",
        "client": client,
        "member_id": member_id,
        "group_instance_id": None,
        "generation_id": generation,
        "protocol_type": None,
        "protocol_name": None,
        "assignments": assignments,
        "version": 1,
    }


def _heartbeat(client: str, member_id: str, generation: int) -> dict:
    return {
        "type": "Heartbeat",
        "client": client,
        "member_id": member_id,
        "group_instance_id": None,
        "generation_id": generation,
        "version": 1,
    }


def _commit(client: str, member_id: str, generation: int) -> dict:
    return {
        "type": "OffsetCommit",
        "client": client,
        "member_id": member_id,
        "group_instance_id": None,
        "generation_id": generation,
        "offsets": [{"topic": "kgc-lines", "partition": 0, "offset": 7, "metadata": ""}],
        "version": 2,
    }


ONLY_C1 = [{"member_id": "c1-1", "assignment": '{"kgc-lines": [0, 1, 2]}'}]
SCRIPTED = [
    # (switch, old line's newest patch, new line's, commands)
    (
        # 1.x: a Heartbeat in CompletingRebalance is not asked its generation
        "heartbeat_awaiting_sync_skips_generation",
        "1.1.1",
        "2.4.1",
        [_join("c1"), {"tick": 50}, _heartbeat("c1", "c1-1", 0)],
    ),
    (
        # 1.x: an OffsetCommit in CompletingRebalance is REBALANCE_IN_PROGRESS before the
        # generation check (2.4: ILLEGAL_GENERATION)
        "commit_completing_rebalance_first",
        "1.1.1",
        "2.4.1",
        [_join("c1"), {"tick": 50}, _commit("c1", "c1-1", 0)],
    ),
    (
        # a static member restarts (empty member id, same instance) in Stable preferring another
        # protocol it alone votes for: 2.5 answers at once with the current generation, 2.6
        # rebalances (generation 2)
        "static_rejoin_checks_protocol",
        "2.5.1",
        "2.6.3",
        [
            _join("c1", version=5, instance="c1-instance"),
            {"tick": 50},
            _sync("c1", "c1-1", 1, ONLY_C1),
            {"tick": 50},
            _join("c1", version=5, instance="c1-instance", protocols=("roundrobin", "range")),
            {"tick": 50},
            _heartbeat("c1", "c1-2", 1),
        ],
    ),
    (
        # 1.x checks the group id "" in JoinGroup alone: its SyncGroup, Heartbeat and LeaveGroup
        # find no group "" (UNKNOWN_MEMBER_ID); 2.4 refuses all four (INVALID_GROUP_ID). No group
        # "" exists on these brokers: nothing but this test sends one
        "empty_group_id_checked_by_join_only",
        "1.1.1",
        "2.4.1",
        [
            _join("c1"),
            {"tick": 50},
            _sync("c1", "c1-1", 1, ONLY_C1),
            {**_join("c1", "c1-1"), "empty_group_id": True},
            {**_sync("c1", "c1-1", 1, ONLY_C1), "empty_group_id": True},
            {**_heartbeat("c1", "c1-1", 1), "empty_group_id": True},
            {
                "type": "LeaveGroup",
                "client": "c1",
                "members": [{"member_id": "c1-1", "group_instance_id": None}],
                "version": 1,
                "empty_group_id": True,
            },
            _heartbeat("c1", "c1-1", 1),
        ],
    ),
    (
        # up to 3.2 a rejoin keeps the first join's 10 s session; 3.3 takes the rejoin's 1 s,
        # so after 1.5 s of silence the member is gone on 3.3 and still there on 3.2
        "rejoin_updates_timeouts",
        "3.2.3",
        "3.3.2",
        [
            _join("c1"),
            {"tick": 50},
            _sync("c1", "c1-1", 1, ONLY_C1),
            {"tick": 50},
            _join("c1", "c1-1", session_ms=1_000),
            {"tick": 50},
            _sync("c1", "c1-1", 2, ONLY_C1),
            {"tick": 1_500},
            _heartbeat("c1", "c1-1", 2),
        ],
    ),
]


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(
    ("switch", "old", "new", "commands"), SCRIPTED, ids=[s[0] for s in SCRIPTED]
)
def test_a_scripted_switch_shows_on_both_lines(brokers, tmp_path, switch, old, new, commands):
    from kgc.model import profile_for_version

    assert getattr(profile_for_version(old), switch) != getattr(profile_for_version(new), switch)
    trace = load(_scripted(tmp_path, f"{switch}.json", commands))
    assert _replay(brokers(old), _judged_by(trace, old)) == "PASSES", f"{old} by its own rules"
    assert _replay(brokers(new), _judged_by(trace, new)) == "PASSES", f"{new} by its own rules"
    flipped = _judged_by(trace, old, flipped=switch, to=new)
    assert _replay(brokers(old), flipped) == "FAILING", switch


@pytest.mark.broker
@pytest.mark.slow
def test_the_sync_deadline_starts_in_2_8(brokers, tmp_path) -> None:
    """``sync_deadline``: c2 joins generation 2 and never sends SyncGroup; the leader c1 syncs.
    One rebalance timeout (1 s) later, 2.8's ``DelayedSync`` removes c2 and a rebalance starts, so
    c1's Heartbeat is REBALANCE_IN_PROGRESS; 2.7 has no such timer and c2 stays (sessions are 10 s),
    so c1's Heartbeat is NONE."""
    from kgc.model import profile_for_version

    assert (
        not profile_for_version("2.7.2").sync_deadline
        and profile_for_version("2.8.2").sync_deadline
    )
    assignments = [
        {"member_id": "c1-1", "assignment": '{"kgc-lines": [0]}'},
        {"member_id": "c2-1", "assignment": '{"kgc-lines": [1]}'},
    ]
    path = _scripted(
        tmp_path,
        "sync-deadline.json",
        [
            _join("c1"),
            {"tick": 50},
            _join("c2"),
            {"tick": 50},
            _join("c1", "c1-1"),
            {"tick": 50},
            {
                "type": "SyncGroup",
                "client": "c1",
                "member_id": "c1-1",
                "group_instance_id": None,
                "generation_id": 2,
                "protocol_type": None,
                "protocol_name": None,
                "assignments": assignments,
                "version": 3,
            },
            {"tick": 1_500},
            {
                "type": "Heartbeat",
                "client": "c1",
                "member_id": "c1-1",
                "group_instance_id": None,
                "generation_id": 2,
                "version": 3,
            },
        ],
    )
    trace = load(path)
    assert _replay(brokers("2.7.2"), _judged_by(trace, "2.7.2")) == "PASSES"
    assert _replay(brokers("2.8.2"), _judged_by(trace, "2.8.2")) == "PASSES"
    flipped = _judged_by(trace, "2.7.2", flipped="sync_deadline", to="2.8.2")
    assert _replay(brokers("2.7.2"), flipped) == "FAILING"


@pytest.mark.broker
@pytest.mark.slow
def test_an_unwritable_leader_answer_is_the_known_bug_before_3_3(brokers, tmp_path) -> None:
    """``join_response_instance_ids_ignorable``: a static member alone in its group rejoins at v3,
    so it leads and its answer must list itself. 3.3 writes the list (instance ids left out); up
    to 3.2 the answer cannot be written, and what the broker does from there is the known bug
    ``join-answered-twice`` (``model/known_bugs.py``). So 3.2's own rules stop judging at that very
    join, where 3.2.3 answered UNSUPPORTED_VERSION, and 3.3's rules fail 3.2.3 there."""
    from kgc.model import profile_for_version
    from kgc.model.commands import JoinGroup, JoinGroupResponse
    from kgc.model.history import Invoke, Receive

    switch = "join_response_instance_ids_ignorable"
    assert not getattr(profile_for_version("3.2.3"), switch)
    assert getattr(profile_for_version("3.3.2"), switch)
    trace = load(
        _scripted(
            tmp_path,
            "unwritable-leader-answer.json",
            [
                _join("c1", version=5, instance="c1-instance"),
                {"tick": 50},
                _sync("c1", "c1-1", 1, ONLY_C1),
                {"tick": 50},
                _join("c1", "c1-1", version=3),
                {"tick": 50},
            ],
        )
    )
    assert _replay(brokers("3.3.2"), _judged_by(trace, "3.3.2")) == "PASSES"
    done = replay_with_own_client(brokers("3.2.3"), _judged_by(trace, "3.2.3"), client_id="kgc")
    assert done.verdict == "KNOWN KAFKA BUG"
    hit = done.engine.known_bug
    assert hit is not None and hit.world.key == "join-answered-twice"
    met = done.trace.events[hit.since]
    assert isinstance(met, Invoke) and isinstance(met.command, JoinGroup)
    assert met.command.version == 3
    answer = next(
        e.response
        for e in done.trace.events
        if isinstance(e, Receive) and e.request_id == met.request_id
    )
    assert isinstance(answer, JoinGroupResponse) and answer.error == "UNSUPPORTED_VERSION"
    flipped = _judged_by(trace, "3.2.3", flipped=switch, to="3.3.2")
    assert _replay(brokers("3.2.3"), flipped) == "FAILING"


@pytest.mark.broker
@pytest.mark.slow
def test_a_pending_member_rejoin_grows_a_full_group_before_2_6(brokers, tmp_path) -> None:
    """``max_size_limits_unknown_members_only``, the other half of KAFKA-9885: group.max.size 3
    (the embedded broker's, and the manifest's). c1 is Stable alone; c2 and c3 get pending ids
    (JoinGroup v4); c4 joins (v3) and c1 rejoins, so the join phase waits for the pending ids. c2
    rejoins (3 members); c3 rejoins: 2.5.1 counts only empty member ids against the limit, adds it
    and completes generation 2 with 4 members; 2.6.3 counts the 3 members awaiting join and
    refuses it (GROUP_MAX_SIZE_REACHED), completing generation 2 without it."""
    from kgc.model import profile_for_version

    switch = "max_size_limits_unknown_members_only"
    assert getattr(profile_for_version("2.5.1"), switch)
    assert not getattr(profile_for_version("2.6.3"), switch)
    commands = [
        _join("c1"),
        {"tick": 50},
        _sync("c1", "c1-1", 1, ONLY_C1),
        {"tick": 50},
        _join("c2", version=4),
        {"tick": 50},
        _join("c3", version=4),
        {"tick": 50},
        _join("c4"),
        {"tick": 50},
        _join("c1", "c1-1"),
        {"tick": 50},
        _join("c2", "c2-1", version=4),
        {"tick": 50},
        _join("c3", "c3-1", version=4),
        {"tick": 200},
    ]
    like = CASES[-1][0]  # recorded with group.max.size 3
    trace = load(_scripted(tmp_path, "pending-member-rejoin.json", commands, like=like))
    assert trace.manifest["model"]["config"]["group_max_size"] == 3
    assert _replay(brokers("2.5.1"), _judged_by(trace, "2.5.1")) == "PASSES"
    assert _replay(brokers("2.6.3"), _judged_by(trace, "2.6.3")) == "PASSES"
    flipped = _judged_by(trace, "2.5.1", flipped=switch, to="2.6.3")
    assert _replay(brokers("2.5.1"), flipped) == "FAILING"


@pytest.mark.broker
@pytest.mark.slow
def test_a_refused_static_restart_forgets_the_instance_before_2_8(brokers, tmp_path) -> None:
    """``max_size_refusal_forgets_instance``: group.max.size 3. Three static members complete
    generation 2 (every join v5, so the leader's answer can list them); c2 restarts (empty member
    id, same instance) and is refused on both lines. 2.7.2 also drops c2-instance's mapping
    (``removeStaticMember``), so an OffsetCommit naming only the instance is UNKNOWN_MEMBER_ID;
    2.8.2 keeps it and fences the commit (FENCED_INSTANCE_ID). Found on 2.5.1 (seed 8)."""
    from kgc.model import profile_for_version

    switch = "max_size_refusal_forgets_instance"
    assert getattr(profile_for_version("2.7.2"), switch)
    assert not getattr(profile_for_version("2.8.2"), switch)
    commit_by_instance = {
        "type": "OffsetCommit",
        "client": "c2",
        "member_id": "",
        "group_instance_id": "c2-instance",
        "generation_id": -1,
        "offsets": [{"topic": "kgc-lines", "partition": 0, "offset": 7, "metadata": ""}],
        "version": 7,
    }
    commands = [
        _join("c1", version=5, instance="c1-instance"),
        {"tick": 50},
        _join("c2", version=5, instance="c2-instance"),
        {"tick": 50},
        _join("c3", version=5, instance="c3-instance"),
        {"tick": 50},
        _join("c1", "c1-1", version=5, instance="c1-instance"),
        {"tick": 50},
        _join("c2", version=5, instance="c2-instance"),
        {"tick": 50},
        commit_by_instance,
        {"tick": 50},
    ]
    like = CASES[-1][0]  # recorded with group.max.size 3
    trace = load(_scripted(tmp_path, "static-restart-refused.json", commands, like=like))
    assert _replay(brokers("2.7.2"), _judged_by(trace, "2.7.2")) == "PASSES"
    assert _replay(brokers("2.8.2"), _judged_by(trace, "2.8.2")) == "PASSES"
    flipped = _judged_by(trace, "2.7.2", flipped=switch, to="2.8.2")
    assert _replay(brokers("2.7.2"), flipped) == "FAILING"
