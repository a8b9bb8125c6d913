"""A mutating Kafka-protocol proxy: a real broker behind it, one deliberate bug in front of it.

Role: the mutation benchmark (``kgc bench mutants``, issue "Search power"). The differential suite
is pointed at the proxy as at any broker (``--bootstrap-server``); the proxy forwards every request
to a real single-node broker unchanged and hands the answers back, except where its *mutant* says
otherwise: an error swapped for another, a member missing from a list, a generation that slipped,
an answer dropped. A search that reports a divergence has *killed* the
mutant. Nothing here claims that any broker conforms: the mutants are broken on purpose, and the
proxy without one (``mutant=None``) must pass, which the tests check.

Wire: each connection from the client gets its own connection to the broker. Requests are framed
(4-byte size) and passed on byte for byte; the proxy reads only their header (API key, version,
correlation id) to know how to decode the answer. Answers to the APIs a mutant touches are decoded
with kafka-python's classes (generated from Kafka's JSON message specs), changed and encoded again
(the response header is written here: correlation id, and an empty tagged-field section on flexible
versions except ApiVersions, as Kafka's ``ResponseHeader`` v1); every other answer passes through
untouched. Metadata and FindCoordinator answers are rewritten so that every broker address is the
proxy's own: the client never goes around it. One upstream node only (the embedded broker).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin.groups import DescribeGroupsResponse
from kafka.protocol.consumer.group import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataResponse
from kgc.model.apis import KEYS

RESPONSES: dict[int, Any] = {
    c.API_KEY: c
    for c in (
        MetadataResponse,
        FindCoordinatorResponse,
        JoinGroupResponse,
        SyncGroupResponse,
        HeartbeatResponse,
        LeaveGroupResponse,
        OffsetCommitResponse,
        OffsetFetchResponse,
        DescribeGroupsResponse,
    )
}
API_NAMES = {key: cls.__name__.removesuffix("Response") for key, cls in RESPONSES.items()}
API_VERSIONS_KEY = KEYS["ApiVersions"]

DROP = object()  # a mutant's verdict: this answer never reaches the client


Rewrite = Callable[[Any, int, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """One broker bug: ``rewrite(response, version, memory)`` gets each decoded answer of ``api``
    and returns None (unchanged), the answer to send instead, :data:`DROP`.
    ``memory`` is the mutant's own dict, for counting."""

    name: str
    api: str
    kind: str  # wrong error | missing member | generation slip | dropped answer | …
    what: str
    rewrite: Rewrite


@dataclass
class MutantProxy:
    upstream: str  # host:port of the broker's single node
    mutant: Mutant | None = None
    host: str = "127.0.0.1"
    mutated: int = 0  # answers the mutant changed or dropped
    answers: int = 0  # answers that came through (to show that the clients used the proxy)
    _listener: socket.socket = field(init=False)
    _stop: threading.Event = field(init=False, default_factory=threading.Event)
    _memory: dict[str, Any] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _sockets: list[socket.socket] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self._listener = socket.create_server((self.host, 0))
        self.port = self._listener.getsockname()[1]

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def __enter__(self) -> MutantProxy:
        threading.Thread(target=self._accept, name="kgc-proxy-accept", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.close()

    # ------------------------------------------------------------------ plumbing
    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            host, _, port = self.upstream.rpartition(":")
            try:
                broker = socket.create_connection((host, int(port)), timeout=10)
            except OSError:
                client.close()
                continue
            broker.settimeout(None)
            with self._lock:
                self._sockets += [client, broker]
            pending: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
            for target, args in (
                (self._requests, (client, broker, pending)),
                (self._answers, (broker, client, pending)),
            ):
                threading.Thread(target=target, args=args, daemon=True).start()

    def _requests(self, client: socket.socket, broker: socket.socket, pending: dict) -> None:
        while (frame := read_frame(client)) is not None:
            key, version, correlation = struct.unpack_from(">hhi", frame, 0)
            pending[correlation] = (key, version)
            try:
                broker.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        _close(client, broker)

    def _answers(self, broker: socket.socket, client: socket.socket, pending: dict) -> None:
        while (frame := read_frame(broker)) is not None:
            (correlation,) = struct.unpack_from(">i", frame, 0)
            key, version = pending.pop(correlation, (-1, -1))
            self.answers += 1
            out = self._change(key, version, correlation, frame)
            if out is None:
                continue
            try:
                client.sendall(struct.pack(">i", len(out)) + out)
            except OSError:
                break
        _close(client, broker)

    # ------------------------------------------------------------------ rewriting
    def _change(self, key: int, version: int, correlation: int, frame: bytes) -> bytes | None:
        mutant = self.mutant
        mutates = mutant is not None and API_NAMES.get(key) == mutant.api
        if key not in (MetadataResponse.API_KEY, FindCoordinatorResponse.API_KEY) and not mutates:
            return frame
        cls = RESPONSES[key]
        response = cls.decode(frame, version=version, header=True)
        if key == MetadataResponse.API_KEY:
            for b in response.brokers:
                b.host, b.port = self.host, self.port
        elif key == FindCoordinatorResponse.API_KEY:
            if version < 4:
                response.host, response.port = self.host, self.port
            for c in response.coordinators or ():
                c.host, c.port = self.host, self.port
        if mutates:
            assert mutant is not None
            with self._lock:
                verdict = mutant.rewrite(response, version, self._memory)
            if verdict is DROP:
                self.mutated += 1
                return None
            if verdict is not None:
                self.mutated += 1
                response = verdict
        return _encode(cls, response, version, correlation)


def _encode(cls: Any, response: Any, version: int, correlation: int) -> bytes:
    # the body alone (kafka-python 3.0.12 cannot encode a decoded response's header at a given
    # version: its version setter writes a request field into the response header)
    response._header = None
    body = bytes(response.encode(version=version))
    header = struct.pack(">i", correlation)
    if cls.flexible_version_q(version) and cls.API_KEY != API_VERSIONS_KEY:
        header += b"\x00"  # ResponseHeader v1: no tagged fields
    return header + body


def read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed Kafka frame's payload, or None once ``sock`` is closed."""
    head = recv_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    return recv_exact(sock, size)


def recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """Exactly ``n`` bytes from ``sock``, or None once it is closed or fails."""
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _close(*socks: socket.socket) -> None:
    for s in socks:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            s.close()
