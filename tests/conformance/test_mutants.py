"""The mutating proxy's request path and the mutation bench's kill rules, with no broker.

A scripted upstream on loopback stands in for the broker: it records each request frame the proxy
forwards and answers it with a given response. The tests check the framing (size, header,
correlation id kept, version kept) of a request a mutant changed, a request the proxy answers
itself, an answer fixed up after a changed request, the record of mutated exchanges the bench
judges kills by, that a decode/encode round trip leaves every request the proxy may touch byte for
byte the same (the offline half of the re-encode control), and the three kill rules of
``kgc bench mutants`` on hand-made runs.
"""

from __future__ import annotations

import io
import socket
import struct
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
)
from kgc.conformance.drivers.suite import SuiteResult
from kgc.conformance.mutants.catalogue import BY_NAME, MUTANTS
from kgc.conformance.mutants.proxy import (
    FAMILIES,
    REQUESTS,
    Mutant,
    MutantProxy,
    decode_request,
    read_frame,
)

from kgc.bench import mutants as bench

Answer = Callable[[bytes], bytes | None]  # request frame -> response payload (or no answer)


class Upstream:
    """A loopback 'broker': records request frames, answers each with ``answer(frame)``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.frames: list[bytes] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self._sock.accept()
        with conn:
            while (frame := read_frame(conn)) is not None:
                self.frames.append(frame)
                out = self.answer(frame)
                if out is not None:
                    conn.sendall(struct.pack(">i", len(out)) + out)

    def close(self) -> None:
        self._sock.close()


def _framed(request: Any, version: int, correlation: int) -> bytes:
    request.with_header(correlation_id=correlation, client_id="kgc-c1")
    return bytes(request.encode(version=version, header=True, framed=True))


def _answer_of(response: Any, version: int) -> Answer:
    """Answer every request with ``response`` at ``version`` and the request's correlation id."""

    def answer(frame: bytes) -> bytes:
        (correlation,) = struct.unpack_from(">i", frame, 4)
        response._header = None
        head = struct.pack(">i", correlation)
        if type(response).flexible_version_q(version):
            head += b"\x00"
        return head + bytes(response.encode(version=version))

    return answer


def _exchange(proxy: MutantProxy, frames: list[bytes]) -> list[bytes]:
    """Send ``frames`` through ``proxy`` one at a time; each answer's payload."""
    host, _, port = proxy.bootstrap_servers.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        out = []
        for f in frames:
            s.sendall(f)
            payload = read_frame(s)
            assert payload is not None, "the proxy closed the connection"
            out.append(payload)
        return out


def _join(session_ms: int = 1000, protocols: tuple[str, ...] = ("range",)) -> Any:
    return JoinGroupRequest(
        group_id="kgc-g",
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=2000,
        member_id="",
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[
            JoinGroupRequest.JoinGroupRequestProtocol(name=p, metadata=b"m") for p in protocols
        ],
        reason=None,
    )


def _join_answer() -> Any:
    return JoinGroupResponse(
        throttle_time_ms=0,
        error_code=0,
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader="m1",
        skip_assignment=False,
        member_id="m1",
        members=[],
    )


@pytest.mark.parametrize("version", [0, 5, 9])
def test_a_changed_request_keeps_its_header_version_and_framing(version: int) -> None:
    # the session timeout halved: the broker gets 500 ms, the header (correlation id 41, the
    # client id) byte for byte, the same version, and a size prefix that matches the new body
    up = Upstream(_answer_of(_join_answer(), version))
    mutant = BY_NAME["join-session-timeout-halved"]
    sent = _framed(_join(1000), version, 41)
    with MutantProxy(up.address, mutant) as proxy:
        (answer,) = _exchange(proxy, [sent])
    up.close()
    (forwarded,) = up.frames
    head, request = decode_request(JoinGroupRequest, forwarded, version)
    assert head == sent[4 : 4 + len(head)]
    assert struct.unpack_from(">hhi", forwarded, 0) == (JoinGroupRequest.API_KEY, version, 41)
    assert request.session_timeout_ms == 500 and request.group_id == "kgc-g"
    assert struct.unpack_from(">i", answer, 0) == (41,)
    (m,) = proxy.mutations
    assert (m.api, m.group_id, m.how, m.correlation_id) == ("JoinGroup", "kgc-g", "request", 41)
    assert proxy.first_mutation("kgc-g") is m and proxy.first_mutation("other") is None


def test_a_request_the_search_sends_out_of_range_is_left_alone() -> None:
    # the misuse's 1 ms session is not a drawn timeout: forwarded as is, nothing recorded
    up = Upstream(_answer_of(_join_answer(), 5))
    sent = _framed(_join(1), 5, 7)
    with MutantProxy(up.address, BY_NAME["join-session-timeout-halved"]) as proxy:
        _exchange(proxy, [sent])
    up.close()
    assert up.frames == [sent[4:]] and proxy.mutations == []


def test_a_swallowed_heartbeat_is_answered_by_the_proxy_and_never_forwarded() -> None:
    up = Upstream(_answer_of(HeartbeatResponse(throttle_time_ms=0, error_code=27), 4))
    hb = HeartbeatRequest(group_id="kgc-g", generation_id=1, member_id="m1", group_instance_id=None)
    with MutantProxy(up.address, BY_NAME["heartbeat-swallowed"]) as proxy:
        answers = _exchange(proxy, [_framed(hb, 4, 3), _framed(hb, 4, 4)])
    up.close()
    assert up.frames == []
    for correlation, payload in zip((3, 4), answers, strict=True):
        assert struct.unpack_from(">i", payload, 0) == (correlation,)
        body = HeartbeatResponse.decode(payload[5:], version=4)  # header v1: one tag byte
        assert body.error_code == 0
    assert [m.how for m in proxy.mutations] == ["reply", "reply"]


def test_a_dropped_partition_is_answered_as_its_siblings() -> None:
    # the broker commits partitions 0 and 1 only; the client hears of all three, all NONE
    topic = OffsetCommitRequest.OffsetCommitRequestTopic
    part = topic.OffsetCommitRequestPartition
    commit = OffsetCommitRequest(
        group_id="kgc-g",
        generation_id_or_member_epoch=1,
        member_id="m1",
        group_instance_id=None,
        retention_time_ms=-1,
        topics=[
            topic(
                name="t",
                topic_id=None,
                partitions=[
                    part(partition_index=i, committed_offset=5, committed_leader_epoch=-1,
                         commit_timestamp=-1, committed_metadata="")
                    for i in range(3)
                ],
            )
        ],
    )  # fmt: skip

    def answer(frame: bytes) -> bytes:
        _, got = decode_request(OffsetCommitRequest, frame, 8)
        rt = OffsetCommitResponse.OffsetCommitResponseTopic
        parts = [
            rt.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=0)
            for p in got.topics[0].partitions
        ]
        resp = OffsetCommitResponse(
            throttle_time_ms=0, topics=[rt(name="t", topic_id=None, partitions=parts)]
        )
        return _answer_of(resp, 8)(frame)

    up = Upstream(answer)
    with MutantProxy(up.address, BY_NAME["commit-partition-dropped"]) as proxy:
        (payload,) = _exchange(proxy, [_framed(commit, 8, 9)])
    up.close()
    _, forwarded = decode_request(OffsetCommitRequest, up.frames[0], 8)
    assert [p.partition_index for p in forwarded.topics[0].partitions] == [0, 1]
    heard = OffsetCommitResponse.decode(payload[5:], version=8)
    assert sorted((p.partition_index, p.error_code) for p in heard.topics[0].partitions) == [
        (0, 0),
        (1, 0),
        (2, 0),
    ]


def test_the_reencode_control_sends_reencoded_bytes_and_counts_none_changed() -> None:
    up = Upstream(_answer_of(_join_answer(), 9))
    sent = _framed(_join(1000, ("range", "roundrobin")), 9, 5)
    with MutantProxy(up.address, reencode=frozenset({"JoinGroup"})) as proxy:
        (answer,) = _exchange(proxy, [sent])
    up.close()
    assert up.frames == [sent[4:]]
    assert proxy.reencoded == 2 and proxy.reencode_differs == 0 and proxy.mutations == []
    assert struct.unpack_from(">i", answer, 0) == (5,)
    with pytest.raises(ValueError, match="reencode names"):
        MutantProxy(up.address, reencode=frozenset({"Produce"}))


def _sample_requests() -> dict[str, Any]:
    sync = SyncGroupRequest(
        group_id="g",
        generation_id=3,
        member_id="m1",
        group_instance_id="i1",
        protocol_type="consumer",
        protocol_name="range",
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id="m1", assignment=b"\x00\x01"),
            SyncGroupRequest.SyncGroupRequestAssignment(member_id="m2", assignment=b""),
        ],
    )
    leave = LeaveGroupRequest(
        group_id="g",
        member_id="m1",
        members=[
            LeaveGroupRequest.MemberIdentity(member_id="m1", group_instance_id=None, reason=None)
        ],
    )
    hb = HeartbeatRequest(group_id="g", generation_id=3, member_id="m1", group_instance_id="i1")
    return {"JoinGroup": _join(1000, ("range", "roundrobin")), "SyncGroup": sync,
            "LeaveGroup": leave, "Heartbeat": hb}  # fmt: skip


@pytest.mark.parametrize("api", ["JoinGroup", "SyncGroup", "LeaveGroup", "Heartbeat"])
def test_every_version_of_a_request_survives_a_round_trip(api: str) -> None:
    request = _sample_requests()[api]
    cls = next(c for c in REQUESTS.values() if c.__name__ == f"{api}Request")
    for version in range(cls.max_version + 1):
        frame = _framed(request, version, 11)[4:]
        head, decoded = decode_request(cls, frame, version)
        RequestHeader.decode(io.BytesIO(head), flexible=cls.flexible_version_q(version))
        decoded._header = None
        assert head + bytes(decoded.encode(version=version)) == frame, (api, version)


def test_every_mutant_has_a_family_and_hooks() -> None:
    assert {m.family for m in MUTANTS} == set(FAMILIES)
    assert len(BY_NAME) == len(MUTANTS), "two mutants share a name"
    for family in ("kept", "timer", "decision"):
        assert sum(m.family == family for m in MUTANTS) >= 6, family
    assert sum(m.family != "answer" for m in MUTANTS) >= 20
    for m in MUTANTS:
        assert m.rewrite is not None or m.request is not None, m.name


# ---------------------------------------------------------------------- kill rules
def _run(ok: bool, failing: list[bench.Failing]) -> bench.Run:
    result = SuiteResult(profile="ci", seed=1, failure=None if ok else "divergence")
    return bench.Run(result=result, proxy=MutantProxy.__new__(MutantProxy), failing=failing)


def _failing(failed_at: float, mutated_at: float | None) -> bench.Failing:
    return bench.Failing(
        group_id="kgc-g", failed_at_s=failed_at, first_mutation_s=mutated_at, first_mutated_api="X"
    )


def _judge(
    run: bench.Run, *, faithful_ok: bool = True, control: frozenset[str] = frozenset()
) -> str:
    return bench.judge(
        run, faithful_ok=faithful_ok, control_failed=set(control), apis=("JoinGroup",)
    )


def test_a_divergence_after_the_first_mutated_exchange_kills() -> None:
    assert _judge(_run(False, [_failing(10.0, 9.5)])) == ""
    assert _judge(_run(False, [_failing(10.0, 10.0)])) == ""  # the mutated answer itself


def test_a_divergence_before_the_first_mutated_exchange_does_not_kill() -> None:
    # the example failed at 10 s; its group's first mutation came at 10.5 s: not the mutant's
    assert "before its group's first mutated" in _judge(_run(False, [_failing(10.0, 10.5)]))
    assert "no mutated exchange" in _judge(_run(False, [_failing(10.0, None)]))
    # the first failing example decides, even if a later one is attributable
    assert _judge(_run(False, [_failing(10.0, None), _failing(20.0, 19.0)])) != ""


def test_no_kill_counts_when_the_faithful_proxy_or_the_control_fails() -> None:
    run = _run(False, [_failing(10.0, 9.0)])
    assert "faithful proxy" in _judge(run, faithful_ok=False)
    assert "re-encode control failed for JoinGroup" in _judge(run, control=frozenset({"JoinGroup"}))
    assert _judge(run, control=frozenset({"OffsetFetch"})) == ""  # another API's control
    assert _judge(_run(True, [])) == "the search passed"


def test_the_family_and_mutant_filters() -> None:
    timers = bench.chosen(SimpleNamespace(family="timer", mutant=None))
    assert timers and {m.family for m in timers} == {"timer"}
    (one,) = bench.chosen(SimpleNamespace(family=None, mutant="join-leader-moved"))
    assert one.family == "decision"
    assert len(bench.chosen(SimpleNamespace(family=None, mutant=None))) == len(MUTANTS)
    with pytest.raises(SystemExit, match="unknown nope"):
        bench.chosen(SimpleNamespace(family="nope", mutant=None))


def test_the_summary_reports_each_family_with_named_survivors() -> None:
    rows = {
        "a": {"family": "timer", "killed": True, "find_s": 1.0},
        "b": {"family": "timer", "killed": False, "reason": "the search passed"},
        "c": {"family": "kept", "killed": True},
    }
    out = bench.summary(rows)
    assert out["families"]["timer"] == {
        "killed": 1,
        "total": 2,
        "killed_share": 0.5,
        "survivors": {"b": "the search passed"},
    }
    assert out["killed"] == 2 and out["survivors"] == ["b"]


def test_a_hook_that_raises_forwards_the_request_unchanged_and_is_reported() -> None:
    # a join with a session that no int32 holds after the change: the connection must not hang
    def overflow(r: Any, version: int, memory: dict[str, Any]) -> Any:
        r.session_timeout_ms = 2**40
        return r

    broken = Mutant(name="overflow", api="JoinGroup", kind="test", what="", request=overflow)
    up = Upstream(_answer_of(_join_answer(), 5))
    sent = _framed(_join(1000), 5, 8)
    with MutantProxy(up.address, broken) as proxy:
        (answer,) = _exchange(proxy, [sent])
    up.close()
    assert up.frames == [sent[4:]] and struct.unpack_from(">i", answer, 0) == (8,)
    assert proxy.mutations == [] and "JoinGroup request" in proxy.errors[0]


def test_the_longest_timeouts_are_left_alone() -> None:
    hook = BY_NAME["join-session-timeout-never"].request
    assert hook is not None
    assert hook(_join(2**31 - 1), 5, {}) is None  # a misuse's: 60 times it is no int32
    assert hook(_join(2000), 5, {}).session_timeout_ms == 120_000
