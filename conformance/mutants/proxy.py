"""A mutating Kafka-protocol proxy: a real broker behind it, one deliberate bug in front of it.

Role: the mutation benchmark (``kgc bench mutants``, issue "Search power"). The differential suite
is pointed at the proxy as at any broker (``--bootstrap-server``); the proxy forwards every request
to a real single-node broker and hands the answers back, except where its *mutant* says
otherwise. A mutant may change answers (an error swapped for another, a member missing from a
list, an answer dropped) and, since issue 29, requests too, so that what the broker *keeps*,
*times* and *decides* differs from what the client asked: a request forwarded changed
(:class:`Forward`, whose ``then`` may fix up the broker's answer, so the client is answered as if
nothing happened), or answered by the proxy itself and never forwarded (:class:`Reply`). A search
that reports a divergence has *killed* the mutant. Nothing here claims that any broker conforms:
the mutants are broken on purpose, and the proxy without one (``mutant=None``) must pass, which
the tests check.

Wire: each connection from the client gets its own connection to the broker. Requests are framed
(4-byte size); the proxy reads their header (API key, version, correlation id, client id, and on
flexible versions the tagged fields) to know how to decode the answer. Requests of the APIs a
mutant touches are decoded with kafka-python's classes (generated from Kafka's JSON message specs)
for the hooks and the group id; a request a hook changed is encoded again *at the same version*
behind the original header bytes (so the correlation id is kept) and framed with its new size.
Answers to those APIs are decoded, changed and encoded again (the response header is written here:
correlation id, and an empty tagged-field section on flexible versions except ApiVersions, as
Kafka's ``ResponseHeader`` v1); every other frame passes through untouched. A :class:`Reply` is
written only on a connection with nothing else in flight (so answers keep their order), under the
connection's write lock. Metadata and FindCoordinator answers are rewritten so that every broker
address is the proxy's own: the client never goes around it. One upstream node only (the
embedded broker).

What the bench needs to judge a kill: ``mutations`` (each exchange the mutant changed, with its
group id and monotonic time; ``first_mutation(group_id)``) and the re-encode control: with
``reencode={"JoinGroup", …}`` and no mutant, every request and answer of those APIs is decoded and
encoded again unchanged and the *re-encoded* bytes are sent (``reencoded``; ``reencode_differs``
counts frames whose bytes changed on the way, which must stay 0).
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin.groups import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
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
# the requests a mutant may read or change: the group APIs the classic search sends
REQUESTS: dict[int, Any] = {
    c.API_KEY: c
    for c in (
        JoinGroupRequest,
        SyncGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        OffsetCommitRequest,
        OffsetFetchRequest,
        DescribeGroupsRequest,
    )
}
API_NAMES = {key: cls.__name__.removesuffix("Response") for key, cls in RESPONSES.items()}
API_KEYS = {name: key for key, name in API_NAMES.items()}
API_VERSIONS_KEY = KEYS["ApiVersions"]
ROUTING_KEYS = (MetadataResponse.API_KEY, FindCoordinatorResponse.API_KEY)

DROP = object()  # a mutant's verdict: this answer never reaches the client


@dataclass(frozen=True, slots=True)
class Forward:
    """A request hook's verdict: forward ``request`` (changed in place or a new one; it is encoded
    again at the request's own version) and pass the broker's answer through
    ``then(answer, version)`` (None: unchanged; an answer; :data:`DROP`)."""

    request: Any
    then: Callable[[Any, int], Any] | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A request hook's verdict: never forward the request; answer ``response`` (a decoded
    response object of the request's API) as the broker would, with its correlation id."""

    response: Any


class Memory(dict[str, Any]):
    """A mutant's own state (a dict, for counting and for what one answer tells another), shared
    by every connection; hooks run under the proxy's lock. ``wait_for(predicate, timeout_s)``
    releases the lock until ``predicate()`` holds (another connection's hook ran) or time is up:
    for a mutant that must see one member's answer before it can change another's."""

    def __init__(self, condition: threading.Condition) -> None:
        super().__init__()
        self._condition = condition

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        return self._condition.wait_for(predicate, timeout_s)


Rewrite = Callable[[Any, int, dict[str, Any]], Any]
RequestRewrite = Callable[[Any, int, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """One broker bug, in one of four families (``FAMILIES``). ``rewrite(response, version,
    memory)`` gets each decoded answer of ``api`` and returns None (unchanged), the answer to send
    instead, or :data:`DROP`. ``request(request, version, memory)`` gets each decoded request of
    ``api`` before it is forwarded and returns None (forward it unchanged), the request to forward
    instead, a :class:`Forward` or a :class:`Reply`. ``also`` names more APIs whose requests and
    answers the hooks see (to learn, e.g., the group's generation from JoinGroup answers): a hook
    of a mutant with ``also`` tells the APIs apart by the object's class. ``memory`` is the
    mutant's own :class:`Memory`."""

    name: str
    api: str
    kind: str  # wrong error | missing member | generation slip | dropped answer | …
    what: str
    rewrite: Rewrite | None = None
    request: RequestRewrite | None = None
    family: str = "answer"
    also: tuple[str, ...] = ()

    @property
    def apis(self) -> tuple[str, ...]:
        return (self.api, *self.also)


FAMILIES = {
    "answer": "an answer differs from what the broker answered",
    "kept": "what the broker keeps differs from what the client was answered",
    "timer": "a timer fires early, late or never",
    "decision": "the broker chooses wrongly (leader, protocol, who stays, whose request counts)",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutation:
    """One exchange the mutant changed: ``at_s`` on ``time.monotonic()`` (the request's arrival
    for a changed or answered request, the answer's departure for a changed or dropped answer)."""

    at_s: float
    api: str
    correlation_id: int
    group_id: str | None
    how: str  # request | reply | answer | drop


@dataclass(slots=True)
class _Exchange:
    key: int
    version: int
    group_id: str | None = None
    then: Callable[[Any, int], Any] | None = None


@dataclass(slots=True)
class _Connection:
    client: socket.socket
    broker: socket.socket
    pending: dict[int, _Exchange] = field(default_factory=dict)  # by correlation id
    write: threading.Lock = field(default_factory=threading.Lock)  # to the client


@dataclass
class MutantProxy:
    upstream: str  # host:port of the broker's single node
    mutant: Mutant | None = None
    host: str = "127.0.0.1"
    # the re-encode control: the APIs whose requests and answers are decoded and sent re-encoded
    reencode: frozenset[str] = frozenset()
    mutated: int = 0  # exchanges the mutant changed, answered or dropped
    answers: int = 0  # answers that came through (to show that the clients used the proxy)
    reencoded: int = 0  # frames decoded and encoded again (mutant's APIs and ``reencode``)
    reencode_differs: int = 0  # of those, frames whose bytes changed with no mutation
    mutations: list[Mutation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # hooks or encodings that raised (must be [])
    _listener: socket.socket = field(init=False)
    _stop: threading.Event = field(init=False, default_factory=threading.Event)
    _lock: threading.Condition = field(init=False, default_factory=threading.Condition)
    _memory: Memory = field(init=False)
    _sockets: list[socket.socket] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.reencode) - set(API_KEYS))
        if unknown:
            raise ValueError(
                f"reencode names {', '.join(unknown)}; the proxy decodes {', '.join(API_KEYS)}"
            )
        self._memory = Memory(self._lock)
        touched = set(self.reencode) | set(self.mutant.apis if self.mutant else ())
        self._touched = frozenset(API_KEYS[name] for name in touched)
        self._listener = socket.create_server((self.host, 0))
        self.port = self._listener.getsockname()[1]

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def first_mutation(self, group_id: str) -> Mutation | None:
        """The first exchange of ``group_id`` the mutant changed, if any."""
        with self._lock:
            return next((m for m in self.mutations if m.group_id == group_id), None)

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
            conn = _Connection(client=client, broker=broker)
            for target in (self._requests, self._answers):
                threading.Thread(target=target, args=(conn,), daemon=True).start()

    def _requests(self, conn: _Connection) -> None:
        while (frame := read_frame(conn.client)) is not None:
            key, version, correlation = struct.unpack_from(">hhi", frame, 0)
            exchange = _Exchange(key=key, version=version)
            out: bytes | None = frame
            if key in self._touched:
                out = self._request(conn, exchange, correlation, frame)
            if out is None:
                continue  # answered here
            conn.pending[correlation] = exchange
            try:
                conn.broker.sendall(struct.pack(">i", len(out)) + out)
            except OSError:
                break
        _close(conn.client, conn.broker)

    def _answers(self, conn: _Connection) -> None:
        while (frame := read_frame(conn.broker)) is not None:
            (correlation,) = struct.unpack_from(">i", frame, 0)
            exchange = conn.pending.pop(correlation, None) or _Exchange(key=-1, version=-1)
            self.answers += 1
            out = self._answer(exchange, correlation, frame)
            if out is None:
                continue
            if not self._send(conn, out):
                break
        _close(conn.client, conn.broker)

    def _send(self, conn: _Connection, payload: bytes) -> bool:
        try:
            with conn.write:
                conn.client.sendall(struct.pack(">i", len(payload)) + payload)
        except OSError:
            return False
        return True

    def _record(self, how: str, exchange: _Exchange, correlation: int) -> None:
        with self._lock:
            self.mutated += 1
            self.mutations.append(
                Mutation(
                    at_s=time.monotonic(),
                    api=API_NAMES[exchange.key],
                    correlation_id=correlation,
                    group_id=exchange.group_id,
                    how=how,
                )
            )

    # ------------------------------------------------------------------ requests
    def _request(
        self, conn: _Connection, exchange: _Exchange, correlation: int, frame: bytes
    ) -> bytes | None:
        """The request frame to forward (maybe changed), or None once the proxy answered it."""
        cls = REQUESTS[exchange.key]
        try:
            head, request = decode_request(cls, frame, exchange.version)
        except Exception:  # noqa: BLE001 - a version kafka-python cannot read: pass it on
            return frame
        exchange.group_id = group_of(request)
        body = frame[len(head) :]
        try:
            return self._mutate_request(conn, exchange, correlation, head, request, body)
        except Exception as exc:  # noqa: BLE001 - a broken hook must not hang the connection
            self.errors.append(f"{API_NAMES[exchange.key]} request: {exc!r}")
            return frame

    def _mutate_request(
        self,
        conn: _Connection,
        exchange: _Exchange,
        correlation: int,
        head: bytes,
        request: Any,
        body: bytes,
    ) -> bytes | None:
        mutant = self.mutant
        verdict = None
        if mutant is not None and mutant.request is not None:
            with self._lock:
                verdict = mutant.request(request, exchange.version, self._memory)
                self._lock.notify_all()
        if isinstance(verdict, Reply):
            if conn.pending:  # an answer is still due on this connection: keep the order
                return head + body
            self._record("reply", exchange, correlation)
            resp_cls = RESPONSES[exchange.key]
            self._send(conn, _encode(resp_cls, verdict.response, exchange.version, correlation))
            return None
        if isinstance(verdict, Forward):
            exchange.then = verdict.then
            request = verdict.request
        elif verdict is not None:
            request = verdict
        request._header = None
        again = bytes(request.encode(version=exchange.version))
        self.reencoded += 1
        if again != body:
            if verdict is None:
                self.reencode_differs += 1
            else:
                self._record("request", exchange, correlation)
        return head + again

    # ------------------------------------------------------------------ answers
    def _answer(self, exchange: _Exchange, correlation: int, frame: bytes) -> bytes | None:
        key, version = exchange.key, exchange.version
        if key not in ROUTING_KEYS and key not in self._touched:
            return frame
        cls = RESPONSES[key]
        try:
            response = cls.decode(frame, version=version, header=True)
        except Exception as exc:  # noqa: BLE001 - pass on what kafka-python cannot read
            self.errors.append(f"{API_NAMES[key]} answer v{version} undecodable: {exc!r}")
            return frame
        if key == MetadataResponse.API_KEY:
            for b in response.brokers:
                b.host, b.port = self.host, self.port
        elif key == FindCoordinatorResponse.API_KEY:
            if version < 4:
                response.host, response.port = self.host, self.port
            for c in response.coordinators or ():
                c.host, c.port = self.host, self.port
        else:
            try:
                verdict = self._verdict(exchange, response)
            except Exception as exc:  # noqa: BLE001 - a broken hook must not hang the connection
                self.errors.append(f"{API_NAMES[key]} answer: {exc!r}")
                return frame
            if verdict is DROP:
                self._record("drop", exchange, correlation)
                return None
            if verdict is not None:
                self._record("answer", exchange, correlation)
                return _encode(cls, verdict, version, correlation)
            self.reencoded += 1
            again = _encode(cls, response, version, correlation)
            if again != frame:
                self.reencode_differs += 1
            return again
        return _encode(cls, response, version, correlation)

    def _verdict(self, exchange: _Exchange, response: Any) -> Any:
        """What the mutant makes of an answer: None (unchanged), an answer, :data:`DROP`."""
        mutant = self.mutant
        verdict = None
        with self._lock:
            if exchange.then is not None:
                verdict = exchange.then(response, exchange.version)
            if verdict is None and mutant is not None and mutant.rewrite is not None:
                verdict = mutant.rewrite(response, exchange.version, self._memory)
            self._lock.notify_all()
        return verdict


def decode_request(cls: Any, frame: bytes, version: int) -> tuple[bytes, Any]:
    """A request frame (no size) as (its header bytes, the decoded body) at ``version``."""
    data = io.BytesIO(frame)
    RequestHeader.decode(data, flexible=cls.flexible_version_q(version))
    head = frame[: data.tell()]
    return head, cls.decode(frame[len(head) :], version=version)


def group_of(request: Any) -> str | None:
    """The group a group API's request names (the first, for OffsetFetch v8+ and DescribeGroups)."""
    group_id = getattr(request, "group_id", None)
    if isinstance(group_id, str):
        return group_id
    for g in getattr(request, "groups", None) or ():
        return g if isinstance(g, str) else getattr(g, "group_id", None)
    return None


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
