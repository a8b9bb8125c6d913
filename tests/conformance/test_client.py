"""The raw client's mechanics against a scripted fake broker (no Kafka needed).

The fake speaks just enough of the protocol: it answers ApiVersions with the version ranges a test
gives it, and hands every other request to the test's script, which decides when and how (or
whether) to answer. Responses are encoded with kafka-python's classes, as a broker would send them.
"""

from __future__ import annotations

import queue
import socket
import struct
import threading
import time
from collections.abc import Callable

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest, HeartbeatResponse, JoinGroupRequest
from kafka.protocol.metadata.api_versions import ApiVersionsResponse
from kgc.conformance.mutants.proxy import recv_exact
from kgc.conformance.wire import client as kc

HEARTBEAT = 12
JOIN_GROUP = 11
API_VERSIONS = 18


class FakeBroker:
    """Accepts connections; answers ApiVersions itself and queues other requests for the test."""

    def __init__(self, ranges: dict[int, tuple[int, int]], *, api_versions_max: int = 4) -> None:
        self.ranges = ranges
        self.api_versions_max = api_versions_max
        self.requests: queue.Queue[Request] = queue.Queue()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._stop = False
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                sock, _ = self._server.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(sock,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, sock: socket.socket) -> None:
        with sock:
            while True:
                head = recv_exact(sock, 4)
                if head is None:
                    return
                (size,) = struct.unpack(">i", head)
                body = recv_exact(sock, size)
                if body is None:
                    return
                api_key, version, correlation_id = struct.unpack_from(">hhi", body, 0)
                if api_key == API_VERSIONS:
                    sock.sendall(self._api_versions(version, correlation_id))
                else:
                    done = threading.Event()
                    self.requests.put(Request(sock, api_key, version, correlation_id, done))
                    done.wait(30)

    def _api_versions(self, version: int, correlation_id: int) -> bytes:
        keys = [
            ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi)
            for k, (lo, hi) in sorted(self.ranges.items())
        ]
        keys.append(
            ApiVersionsResponse.ApiVersion(
                api_key=API_VERSIONS, min_version=0, max_version=self.api_versions_max
            )
        )
        if version > self.api_versions_max:
            # Kafka answers an unsupported ApiVersions version in the v0 layout, with the ranges
            resp = ApiVersionsResponse(error_code=35, api_keys=keys)
            version = 0
        else:
            resp = ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
        resp.API_VERSION = version  # before with_header: kafka-python's setter touches the header
        resp.with_header(correlation_id=correlation_id)
        return resp.encode(header=True, framed=True)

    def next_request(self, timeout_s: float = 5.0) -> Request:
        return self.requests.get(timeout=timeout_s)

    def close(self) -> None:
        self._stop = True
        self._server.close()


class Request:
    def __init__(self, sock, api_key, version, correlation_id, done) -> None:
        self.sock, self.api_key, self.version = sock, api_key, version
        self.correlation_id, self._done = correlation_id, done

    def heartbeat_answer(self, error_code: int = 0, *, correlation_id: int | None = None) -> bytes:
        resp = HeartbeatResponse(throttle_time_ms=0, error_code=error_code)
        cid = self.correlation_id if correlation_id is None else correlation_id
        resp.API_VERSION = self.version
        resp.with_header(correlation_id=cid)
        return resp.encode(header=True, framed=True)

    def reply(self, data: bytes, *, chunk: int | None = None) -> None:
        if chunk is None:
            self.sock.sendall(data)
        else:
            for i in range(0, len(data), chunk):
                self.sock.sendall(data[i : i + chunk])
                time.sleep(0.001)
        self._done.set()

    def hang_up(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self._done.set()


@pytest.fixture
def fake():
    broker = FakeBroker({HEARTBEAT: (0, 4), JOIN_GROUP: (0, 9)})
    yield broker
    broker.close()


def _open(fake: FakeBroker, poller: kc.Poller | None = None, name: str = "c1") -> kc.Connection:
    return kc.Connection("127.0.0.1", fake.port, f"kgc-{name}", poller=poller, timeout_s=5)


def _heartbeat(conn: kc.Connection, version: int | None = None, **kw) -> kc.Handle:
    return kc.heartbeat(conn, "g", member_id="m", generation_id=1, version=version, **kw)


def _in_thread(fn: Callable[[], None]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_negotiates_the_highest_common_version(fake):
    fake.ranges[HEARTBEAT] = (0, 2)
    with _open(fake) as conn:
        assert conn.versions == {"ApiVersions": 3}
        assert conn.version_for(HeartbeatRequest) == 2  # broker max < kafka-python max (4)
        assert conn.version_for(JoinGroupRequest) == 9  # both 9
        assert conn.versions == {"ApiVersions": 3, "Heartbeat": 2, "JoinGroup": 9}
        assert conn.version_for(HeartbeatRequest, pinned=4) == 4  # pinned is sent as is
        with pytest.raises(kc.UnsupportedVersionError, match="v0-v4"):
            conn.version_for(HeartbeatRequest, pinned=5)


def test_broker_minimum_above_what_we_encode_is_a_clear_error():
    broker = FakeBroker({JOIN_GROUP: (10, 12)})
    try:
        with _open(broker) as conn, pytest.raises(kc.UnsupportedVersionError, match="v10-v12"):
            conn.version_for(JoinGroupRequest)
    finally:
        broker.close()


def test_api_versions_retried_at_the_brokers_maximum():
    broker = FakeBroker({HEARTBEAT: (0, 4)}, api_versions_max=2)
    try:
        with _open(broker) as conn:
            assert conn.versions["ApiVersions"] == 2
            assert conn.broker_versions[HEARTBEAT] == (0, 4)
    finally:
        broker.close()


def test_one_request_in_flight_per_connection(fake):
    with _open(fake) as conn:
        h1 = _heartbeat(conn)
        assert not h1.done  # send returned before any answer
        with pytest.raises(kc.RequestInFlightError, match="Heartbeat"):
            _heartbeat(conn)
        req = fake.next_request()
        assert (req.api_key, req.version, req.correlation_id) == (HEARTBEAT, 4, h1.correlation_id)
        req.reply(req.heartbeat_answer(22))
        assert conn.poller.wait([h1], 5) == [h1]
        assert kc.error_name(h1.result().error_code) == "ILLEGAL_GENERATION"
        assert h1.sent_at <= h1.received_at
        h2 = _heartbeat(conn)
        assert h2.correlation_id == h1.correlation_id + 1


def test_a_pending_request_does_not_hold_up_another_connection(fake):
    poller = kc.Poller()
    a, b = _open(fake, poller, "a"), _open(fake, poller, "b")
    ha = _heartbeat(a)
    req_a = fake.next_request()
    hb = _heartbeat(b)
    req_b = fake.next_request()
    req_b.reply(req_b.heartbeat_answer())
    assert poller.wait([ha, hb], 5, until="any") == [hb]
    assert not ha.done
    assert poller.wait([ha], 0.2) == []  # still pending after a bounded wait, no error
    assert ha.error is None and not a.closed
    req_a.reply(req_a.heartbeat_answer())
    assert poller.wait([ha], 5) == [ha]
    assert ha.received_at > hb.received_at
    poller.close()


def test_a_response_arriving_in_pieces_is_reassembled(fake):
    with _open(fake) as conn:
        h = _heartbeat(conn, version=0)
        req = fake.next_request()
        _in_thread(lambda: req.reply(req.heartbeat_answer(27), chunk=1))
        assert conn.poller.wait([h], 5) == [h]
        assert kc.error_name(h.result().error_code) == "REBALANCE_IN_PROGRESS"


def test_connection_closed_by_broker_fails_the_pending_request(fake):
    with _open(fake) as conn:
        h = _heartbeat(conn)
        fake.next_request().hang_up()
        assert conn.poller.wait([h], 5) == [h]
        assert h.error == "connection closed by broker"
        assert conn.closed
        with pytest.raises(kc.ConnectionClosedError):
            h.result()
        with pytest.raises(kc.ConnectionClosedError, match="closed"):
            _heartbeat(conn)


def test_wrong_correlation_id_is_a_protocol_error(fake):
    with _open(fake) as conn:
        h = _heartbeat(conn)
        req = fake.next_request()
        req.reply(req.heartbeat_answer(correlation_id=req.correlation_id + 100))
        assert conn.poller.wait([h], 5) == [h]
        assert "unexpected correlation id" in h.error
        assert conn.closed


def test_request_timeout_fails_the_handle_and_closes(fake):
    with _open(fake) as conn:
        req = HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
        h = conn.send(req, timeout_s=0.2)
        fake.next_request()  # never answered
        t0 = time.monotonic()
        assert conn.poller.wait([h], 5) == [h]
        assert time.monotonic() - t0 < 2
        assert h.error.startswith("timeout after 0.2")
        assert conn.closed


def test_cannot_connect_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(kc.ConnectionClosedError, match=f"cannot connect to 127.0.0.1:{port}"):
        kc.Connection("127.0.0.1", port, "kgc-c1", timeout_s=2)


def test_parse_bootstrap():
    assert kc.parse_bootstrap("h1:1, h2:2") == [("h1", 1), ("h2", 2)]
    assert kc.parse_bootstrap(["[::1]:9092"]) == [("::1", 9092)]
    with pytest.raises(ValueError, match="HOST:PORT"):
        kc.parse_bootstrap("nohost")


def test_a_wait_for_one_handle_keeps_other_answers_for_poll(fake):
    # what went wrong once: a new connection's handshake (a wait on the shared poller) drained
    # another connection's answer, so poll() never reported it and the suite saw a false hang
    poller = kc.Poller()
    a = _open(fake, poller, "a")
    ha = _heartbeat(a)
    req_a = fake.next_request()
    req_a.reply(req_a.heartbeat_answer())
    time.sleep(0.05)  # a's answer is in the socket before b's handshake starts waiting
    b = _open(fake, poller, "b")  # waits on the poller for ApiVersions
    hb = _heartbeat(b)
    req_b = fake.next_request()
    req_b.reply(req_b.heartbeat_answer())
    assert poller.wait([hb], 5) == [hb]
    assert ha.done
    seen = poller.poll(0)
    assert seen == [ha]  # reported once, by poll; hb was reported by its wait
    assert poller.poll(0) == []
    poller.close()
