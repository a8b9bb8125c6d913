"""A raw Kafka group-protocol client: one TCP connection per simulated member, one poller for all.

Role: the broker side of the differential engine sends JoinGroup, SyncGroup, Heartbeat, ... exactly
as a consumer would, but with no consumer logic in between, so every response the broker gives is
observed as is. Wire encoding uses kafka-python's generated protocol classes (built from Kafka's
JSON message specs, ``clients/src/main/resources/common/message/*.json``); only the 4-byte length
framing is done here (Kafka's ``NetworkReceive``/``NetworkSend``).

Rules this client follows (Kafka's ``SocketServer``/``KafkaChannel``, ``NetworkClient``):

* A broker *mutes* a connection while one of its requests is being processed, and a JoinGroup stays
  pending until the join phase completes. So each simulated member gets its own
  :class:`Connection`, and a connection allows **at most one request in flight**:
  :meth:`Connection.send` raises :class:`RequestInFlightError` otherwise (no hidden queue, so the
  caller always knows which request a response answers).
* Sending never blocks: :meth:`Connection.send` returns a :class:`Handle` at once. A single-threaded
  :class:`Poller` (``selectors``) reads every connection registered with it; ``Poller.poll``
  collects whatever arrived, ``Poller.wait`` waits for given handles up to a deadline. Nothing
  blocks forever: every wait takes a timeout.
* Each response is matched to its request by correlation id (per connection, from 1). A response
  with the wrong correlation id, a closed connection or an undecodable frame fails the pending
  handle with an error and closes the connection.
* Versions: ApiVersions once per connection (``ApiVersionsRequest`` v3, retried at the broker's
  advertised maximum on ``UNSUPPORTED_VERSION``), then per API the highest version both sides know
  (``min(class max, broker max)``) unless the caller pins one. Negotiated versions are recorded in
  :attr:`Connection.versions` (``{"JoinGroup": 9, ...}``). A broker whose minimum for an API is
  above what the classes can encode is a clear :class:`UnsupportedVersionError`.
* Errors are reported by Kafka's own names (``Errors.java``): :func:`error_name`.

Discovery (:class:`Cluster`): bootstrap -> Metadata -> FindCoordinator for a group, retrying
``COORDINATOR_NOT_AVAILABLE`` / ``COORDINATOR_LOAD_IN_PROGRESS`` / ``NOT_COORDINATOR`` with bounded
backoff (the first FindCoordinator on a fresh cluster answers COORDINATOR_NOT_AVAILABLE while
``__consumer_offsets`` is created) -> :class:`GroupClient` opens member connections to the
coordinator.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import selectors
import ssl
import struct
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeQuorumRequest
from kafka.protocol.admin.groups import DeleteGroupsRequest, DescribeGroupsRequest
from kafka.protocol.admin.topics import CreateTopicsRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest
from kafka.protocol.metadata.metadata import MetadataRequest
from kgc.conformance.errors import BrokerConfigError
from kgc.conformance.wire.security import PLAINTEXT, ClientSecurity, open_socket
from kgc.model.apis import KEYS
from kgc.model.commands import client_id_of
from kgc.model.errors import NAMES, NONE, ROUTING_ERRORS, TOPIC_ALREADY_EXISTS, UNSUPPORTED_VERSION

__all__ = [
    "ClientError",
    "Cluster",
    "Connection",
    "ConnectionClosedError",
    "CoordinatorNotFoundError",
    "GroupClient",
    "Handle",
    "Poller",
    "RequestInFlightError",
    "RequestTimeoutError",
    "UnsupportedVersionError",
    "api_name",
    "create_topics",
    "describe_cluster",
    "describe_groups",
    "describe_quorum",
    "error_name",
    "find_coordinator",
    "find_coordinator_result",
    "heartbeat",
    "join_group",
    "leave_group",
    "metadata",
    "offset_commit",
    "offset_fetch",
    "parse_bootstrap",
    "sync_group",
]

CLIENT_SOFTWARE_NAME = "kgc"
CLIENT_SOFTWARE_VERSION = "0.1.0"
DEFAULT_TIMEOUT_S = 30.0
_MAX_FRAME_BYTES = 100 * 1024 * 1024

# ------------------------------------------------------------------------------------ error names


def error_name(code: int) -> str:
    """Kafka's name for a protocol error code: ``0`` -> ``"NONE"``, 22 -> ``"ILLEGAL_GENERATION"``.

    From ``kgc.model.errors.NAMES`` (Kafka's ``Errors.java``) first, else from kafka-python's
    table (its classes carry Kafka's names in ``message``). Codes nobody knows come back as
    ``"UNKNOWN_ERROR_CODE_<code>"`` rather than being folded into ``UNKNOWN_SERVER_ERROR``, so a
    new broker error stays visible in traces.
    """
    if code in NAMES:
        return NAMES[code]
    import kafka.errors

    cls = kafka.errors.kafka_errors.get(code)
    name = getattr(cls, "message", None)
    if not isinstance(name, str):
        return f"UNKNOWN_ERROR_CODE_{code}"
    return name


def api_name(message_class: Any) -> str:
    """Kafka's API name of a request or response class: ``JoinGroupRequest`` -> ``"JoinGroup"``."""
    name: str = message_class.name
    for suffix in ("Request", "Response"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# ----------------------------------------------------------------------------------------- errors


class ClientError(Exception):
    """Base class of this client's errors."""


class ConnectionClosedError(ClientError):
    """The connection is closed (by the broker, by a protocol error, or by :meth:`close`)."""


class RequestInFlightError(ClientError):
    """A second request was sent on a connection that still has one in flight."""


class RequestTimeoutError(ClientError):
    """A synchronous request got no response within its timeout."""


class UnsupportedVersionError(ClientError):
    """No version of an API is both encodable by kafka-python and accepted by the broker."""


class CoordinatorNotFoundError(ClientError):
    """FindCoordinator kept failing until the discovery deadline."""


# ----------------------------------------------------------------------------------------- handle


@dataclass(slots=True, eq=False)
class Handle:
    """One request on one connection and, once it completes, its response or its error.

    Mutable on purpose: the poller fills in ``received_at`` and ``response`` (or ``error``) when
    the answer arrives. ``sent_at``/``received_at`` are ``time.monotonic()`` seconds;
    ``received_at`` is when the poller saw the bytes, the closest this client gets to the
    broker's send time.
    """

    connection: Connection
    correlation_id: int
    api_key: int
    api_name: str
    version: int
    request: Any
    sent_at: float
    deadline: float | None = None
    received_at: float | None = None
    response: Any = None
    error: str | None = None
    _callbacks: list[Any] = field(default_factory=list, repr=False)

    @property
    def done(self) -> bool:
        return self.received_at is not None

    @property
    def ok(self) -> bool:
        return self.done and self.error is None

    @property
    def latency_s(self) -> float | None:
        return None if self.received_at is None else self.received_at - self.sent_at

    def result(self) -> Any:
        """The decoded response; raises if the request failed or is still pending."""
        if self.received_at is None:
            raise RequestTimeoutError(
                f"{self.api_name} v{self.version} on {self.connection} is still pending"
            )
        if self.error is not None:
            raise ConnectionClosedError(f"{self.api_name} v{self.version}: {self.error}")
        return self.response

    def _complete(self, now: float, response: Any = None, error: str | None = None) -> None:
        self.received_at = now
        self.response = response
        self.error = error


# ----------------------------------------------------------------------------------------- poller


class Poller:
    """Single-threaded readiness loop over many connections (``selectors.DefaultSelector``).

    Not thread-safe: use one poller from one thread. Connections register themselves when created
    with ``poller=`` and unregister when closed.
    """

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._connections: set[Connection] = set()
        self._completed: list[Handle] = []

    # registration --------------------------------------------------------------------------
    def _register(self, conn: Connection) -> None:
        self._connections.add(conn)
        self._selector.register(conn._sock, selectors.EVENT_READ, conn)

    def _unregister(self, conn: Connection) -> None:
        self._connections.discard(conn)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn._sock)

    def _want_write(self, conn: Connection, want: bool) -> None:
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.modify(conn._sock, events, conn)

    @property
    def connections(self) -> frozenset[Connection]:
        return frozenset(self._connections)

    # polling -------------------------------------------------------------------------------
    def poll(self, timeout_s: float = 0.0) -> list[Handle]:
        """Wait up to ``timeout_s`` for I/O once; return every handle that completed since the
        last ``poll`` and was not already returned by a :meth:`wait` for it.

        Returns early as soon as something was read. Per-request deadlines (``send(timeout_s=)``)
        are enforced here: an expired request fails with an error and its connection closes.
        """
        self._io(timeout_s)
        done, self._completed = self._completed, []
        return done

    def _io(self, timeout_s: float) -> None:
        """One round of I/O; completions are queued in ``_completed`` (nothing is drained)."""
        if self._connections:
            timeout_s = self._bounded_by_deadlines(timeout_s)
            events = self._selector.select(max(0.0, timeout_s))
            now = time.monotonic()
            for key, mask in events:
                conn: Connection = key.data
                if mask & selectors.EVENT_WRITE:
                    conn._flush(now)
                if mask & selectors.EVENT_READ:
                    conn._read(now)
            self._expire(time.monotonic())
        elif timeout_s > 0:
            time.sleep(timeout_s)

    def wait(
        self, handles: Iterable[Handle], timeout_s: float, *, until: str = "all"
    ) -> list[Handle]:
        """Poll until every handle (``until="all"``) or any handle (``until="any"``) completes, or
        ``timeout_s`` passes. Returns the handles among ``handles`` that are complete; handles still
        pending stay pending (their connection stays busy) so a later answer is not lost.

        Each completion is reported once: the handles returned here are not returned again by
        :meth:`poll`, while completions of *other* handles that arrive during the wait (e.g. while
        a new connection's ApiVersions handshake waits) stay queued for the next :meth:`poll`.
        """
        if until not in ("all", "any"):
            raise ValueError(f"until must be 'all' or 'any', not {until!r}")
        handles = list(handles)
        for h in handles:
            if h.connection._poller is not self:
                raise ValueError(f"{h.api_name} handle belongs to another poller")
        deadline = time.monotonic() + timeout_s
        while True:
            complete = [h for h in handles if h.done]
            remaining = deadline - time.monotonic()
            if len(complete) == len(handles) or (until == "any" and complete) or remaining <= 0:
                reported = {id(h) for h in complete}
                self._completed = [h for h in self._completed if id(h) not in reported]
                return complete
            self._io(remaining)

    def _bounded_by_deadlines(self, timeout_s: float) -> float:
        deadlines = [
            c._in_flight.deadline
            for c in self._connections
            if c._in_flight is not None and c._in_flight.deadline is not None
        ]
        if deadlines:
            timeout_s = min(timeout_s, min(deadlines) - time.monotonic())
        return timeout_s

    def _expire(self, now: float) -> None:
        for conn in list(self._connections):
            h = conn._in_flight
            if h is not None and h.deadline is not None and now >= h.deadline:
                conn._fail(now, f"timeout after {h.deadline - h.sent_at:.3f} s")

    def _record(self, handle: Handle) -> None:
        self._completed.append(handle)

    def close(self) -> None:
        for conn in list(self._connections):
            conn.close()
        self._selector.close()


# ------------------------------------------------------------------------------------- connection


class Connection:
    """One TCP connection to one broker, with at most one request in flight.

    Opening connects (blocking, bounded by ``timeout_s``) and negotiates versions with ApiVersions
    through the poller, so other connections keep being read meanwhile.
    """

    _ids = itertools.count(1)

    def __init__(
        self,
        host: str,
        port: int,
        client_id: str = "kgc",
        *,
        poller: Poller | None = None,
        timeout_s: float = 10.0,
        node_id: int | None = None,
        security: ClientSecurity | None = None,
    ) -> None:
        self.host = host
        self.security = security or PLAINTEXT
        self.port = port
        self.client_id = client_id
        self.node_id = node_id
        self.serial = next(self._ids)
        self._poller = poller if poller is not None else Poller()
        self._correlation = itertools.count(1)
        self._in_flight: Handle | None = None
        self._out = bytearray()
        self._in = bytearray()
        self.closed_reason: str | None = None
        #: broker's advertised ``api_key -> (min_version, max_version)``
        self.broker_versions: dict[int, tuple[int, int]] = {}
        #: negotiated version per API name, filled as APIs are used (``{"JoinGroup": 9}``)
        self.versions: dict[str, int] = {}
        try:  # TLS and SASL, if any, are done blocking before the poller takes the socket
            self._sock = open_socket(host, port, timeout_s, self.security)
        except OSError as exc:
            raise ConnectionClosedError(f"cannot connect to {host}:{port}: {exc}") from None
        self._sock.setblocking(False)
        self._poller._register(self)
        try:
            self._negotiate(timeout_s)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        node = "" if self.node_id is None else f" node {self.node_id}"
        return f"<Connection #{self.serial} {self.client_id}@{self.host}:{self.port}{node}>"

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def poller(self) -> Poller:
        return self._poller

    @property
    def closed(self) -> bool:
        return self.closed_reason is not None

    @property
    def local_port(self) -> int:
        """This end's port."""
        return int(self._sock.getsockname()[1])

    @property
    def local_address(self) -> str:
        """This end's IP address, as the broker sees this connection's peer (no NAT here)."""
        return str(self._sock.getsockname()[0])

    @property
    def in_flight(self) -> Handle | None:
        return self._in_flight

    @property
    def reusable(self) -> bool:
        """Open, nothing in flight, nothing unsent or unread: safe to hand to another user."""
        return not self.closed and self._in_flight is None and not self._out and not self._in

    # versions ------------------------------------------------------------------------------
    def _negotiate(self, timeout_s: float) -> None:
        """ApiVersions at v3; on ``UNSUPPORTED_VERSION`` at the newest version the answer names,
        else one lower (``_unsupported_api_versions``: an answer in a layout this version cannot
        decode is that error too)."""
        version, tried = 3, []
        while version >= 0:
            req = ApiVersionsRequest(
                client_software_name=CLIENT_SOFTWARE_NAME,
                client_software_version=CLIENT_SOFTWARE_VERSION,
            )
            handle = self._send(req, version, timeout_s=timeout_s)
            self._poller.wait([handle], timeout_s + 1.0)
            resp = handle.result()
            tried.append(version)
            ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
            if resp.error_code == 0:
                self.broker_versions = ranges
                self.versions["ApiVersions"] = version
                return
            if error_name(resp.error_code) != UNSUPPORTED_VERSION:
                raise ClientError(f"ApiVersions v{version} failed: {error_name(resp.error_code)}")
            named = ranges.get(KEYS["ApiVersions"], (0, version - 1))[1]
            version = min(ApiVersionsResponse.max_version, named, version - 1)
        tried_text = ", ".join(f"v{v}" for v in tried)
        raise UnsupportedVersionError(f"{self}: broker rejected ApiVersions {tried_text}")

    def version_for(self, request_class: Any, pinned: int | None = None) -> int:
        """The version to send ``request_class`` with: ``pinned`` if given (must be encodable by
        the class; it is sent even if the broker does not advertise it, so a test can observe the
        broker's answer to an unsupported version), else ``min(class max, broker max)``."""
        name = api_name(request_class)
        class_max: int = request_class.max_version
        if pinned is not None:
            if not 0 <= pinned <= class_max:
                raise UnsupportedVersionError(
                    f"{name} v{pinned}: kafka-python encodes only v0-v{class_max}"
                )
            return pinned
        broker = self.broker_versions.get(request_class.API_KEY)
        if broker is None:
            raise UnsupportedVersionError(
                f"{self}: broker does not advertise {name} (api key {request_class.API_KEY})"
            )
        lo, hi = broker
        if lo > class_max:
            raise UnsupportedVersionError(
                f"{name}: broker accepts v{lo}-v{hi}, kafka-python encodes only v0-v{class_max}; "
                "upgrade kafka-python or pin an older broker"
            )
        version = min(class_max, hi)
        self.versions[name] = version
        return version

    # sending -------------------------------------------------------------------------------
    def send(
        self, request: Any, version: int | None = None, *, timeout_s: float | None = None
    ) -> Handle:
        """Encode and start writing ``request``; return its :class:`Handle` at once.

        ``version=None`` negotiates; an explicit version is sent as is (see :meth:`version_for`).
        ``timeout_s``: if given, the poller fails the handle after that long and closes the
        connection (as Kafka's own clients do on request timeout); if not, the request stays
        pending until answered or the connection closes, and callers bound their waits instead.
        Raises :class:`RequestInFlightError` if this connection already has a request in flight.
        """
        return self._send(request, self.version_for(type(request), version), timeout_s=timeout_s)

    def _send(self, request: Any, version: int, *, timeout_s: float | None) -> Handle:
        if self.closed:
            raise ConnectionClosedError(f"{self} is closed: {self.closed_reason}")
        if self._in_flight is not None:
            h = self._in_flight
            raise RequestInFlightError(
                f"{self} already has {h.api_name} v{h.version} in flight (correlation id "
                f"{h.correlation_id}); wait for it before sending {api_name(type(request))}, "
                "or open another connection"
            )
        request.API_VERSION = version
        correlation_id = next(self._correlation)
        request.with_header(correlation_id=correlation_id, client_id=self.client_id)
        data = request.encode(header=True, framed=True)
        now = time.monotonic()
        handle = Handle(
            connection=self,
            correlation_id=correlation_id,
            api_key=request.API_KEY,
            api_name=api_name(type(request)),
            version=version,
            request=request,
            sent_at=now,
            deadline=None if timeout_s is None else now + timeout_s,
        )
        self._in_flight = handle
        self._out += data
        self._flush(now)
        return handle

    def request(
        self, request: Any, version: int | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> Any:
        """Send and wait (through the poller) for the decoded response; raises on timeout/close."""
        handle = self.send(request, version)
        self._poller.wait([handle], timeout_s)
        if not handle.done:
            self._fail(time.monotonic(), f"timeout after {timeout_s:.3f} s")
            raise RequestTimeoutError(
                f"{handle.api_name} v{handle.version} on {self}: no answer in {timeout_s} s"
            )
        return handle.result()

    # I/O callbacks from the poller ---------------------------------------------------------
    def _flush(self, now: float) -> None:
        while self._out:
            try:
                n = self._sock.send(self._out)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                break
            except OSError as exc:
                self._fail(now, f"send failed: {exc}")
                return
            del self._out[:n]
        if not self.closed:
            self._poller._want_write(self, bool(self._out))

    def _read(self, now: float) -> None:
        while True:
            try:
                chunk = self._sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    break
                self._fail(now, f"connection reset: {exc}")
                return
            if not chunk:
                self._fail(now, "connection closed by broker")
                return
            self._in += chunk
        while len(self._in) >= 4:
            (size,) = struct.unpack_from(">i", self._in, 0)
            if size < 0 or size > _MAX_FRAME_BYTES:
                self._fail(now, f"bad frame size {size}")
                return
            if len(self._in) < 4 + size:
                break
            payload = bytes(self._in[4 : 4 + size])
            del self._in[: 4 + size]
            self._deliver(now, payload)
            if self.closed:
                return

    def _deliver(self, now: float, payload: bytes) -> None:
        handle = self._in_flight
        (correlation_id,) = struct.unpack_from(">i", payload, 0)
        if handle is None or correlation_id != handle.correlation_id:
            expected = None if handle is None else handle.correlation_id
            self._fail(now, f"unexpected correlation id {correlation_id} (expected {expected})")
            return
        response_class = handle.request.header.get_response_class()
        try:
            response = response_class.decode(payload, version=handle.version, header=True)
        except Exception as exc:  # noqa: BLE001 - any decode failure is a protocol error
            response = _unsupported_api_versions(handle, payload)
            if response is None:
                self._fail(
                    now, f"cannot decode {handle.api_name} v{handle.version} response: {exc!r}"
                )
                return
        self._in_flight = None
        handle._complete(now, response=response)
        self._poller._record(handle)

    def _fail(self, now: float, reason: str) -> None:
        handle = self._in_flight
        self._in_flight = None
        if handle is not None and not handle.done:
            handle._complete(now, error=reason)
            self._poller._record(handle)
        self._close(reason)

    def _close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed_reason = reason
        self._poller._unregister(self)
        with contextlib.suppress(OSError):
            self._sock.close()

    def close(self) -> None:
        """Close the socket; a request still in flight fails with ``"closed by client"``."""
        if self._in_flight is not None:
            self._fail(time.monotonic(), "closed by client")
        self._close("closed by client")


# ----------------------------------------------------------------------- request builders + send

GROUP_KEY_TYPE = 0  # FindCoordinator key type GROUP (CoordinatorType.GROUP)
TRANSACTION_KEY_TYPE = 1  # FindCoordinator key type TRANSACTION (CoordinatorType.TRANSACTION)


def find_coordinator_request(key: str, *, version: int, key_type: int = GROUP_KEY_TYPE) -> Any:
    """FindCoordinator for a GROUP (or TRANSACTION) key; v0-3 carry ``key``, v4+ the batched
    ``coordinator_keys``; v0 knows only GROUP keys."""
    if version >= 4:
        return FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
    if version >= 1:
        return FindCoordinatorRequest(key=key, key_type=key_type)
    if key_type != GROUP_KEY_TYPE:
        raise ValueError("FindCoordinator v0 finds group coordinators only")
    return FindCoordinatorRequest(key=key)


def find_coordinator(
    conn: Connection, key: str, *, version: int | None = None, key_type: int = GROUP_KEY_TYPE
) -> Handle:
    v = conn.version_for(FindCoordinatorRequest, version)
    return conn.send(find_coordinator_request(key, version=v, key_type=key_type), v)


@dataclass(frozen=True, slots=True, kw_only=True)
class CoordinatorResult:
    """FindCoordinator's answer for one key, the same for every version."""

    error: str
    node_id: int
    host: str
    port: int


def find_coordinator_result(response: Any, version: int) -> CoordinatorResult:
    """Normalise a FindCoordinator response (v0-3: top-level fields; v4+: one ``coordinators``
    entry)."""
    if version >= 4:
        if len(response.coordinators) != 1:
            raise ClientError(
                f"FindCoordinator v{version}: expected 1 coordinator, got {response!r}"
            )
        c = response.coordinators[0]
        return CoordinatorResult(
            error=error_name(c.error_code), node_id=c.node_id, host=c.host, port=c.port
        )
    return CoordinatorResult(
        error=error_name(response.error_code),
        node_id=response.node_id,
        host=response.host,
        port=response.port,
    )


# One request builder per group API: the only place a group request's kafka-python object is
# put together, with its version-dependent layout. ``kgc.conformance.wire.encoding.encode`` calls
# these for a model command (real member ids, metadata and assignments as bytes); the
# ``conn``-taking wrappers send one at the connection's negotiated version, for tests and probes.


def join_group_request(
    group_id: str,
    *,
    member_id: str = "",
    session_timeout_ms: int,
    rebalance_timeout_ms: int,
    protocols: Sequence[tuple[str, bytes]],
    protocol_type: str = "consumer",
    group_instance_id: str | None = None,
    reason: str | None = None,
) -> Any:
    """JoinGroup (fields absent from the version it is sent at are simply not encoded)."""
    return JoinGroupRequest(
        group_id=group_id,
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout_ms,
        member_id=member_id,
        group_instance_id=group_instance_id,
        protocol_type=protocol_type,
        protocols=[
            JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols
        ],
        reason=reason,
    )


def join_group(
    conn: Connection, group_id: str, *, version: int | None = None, **fields: Any
) -> Handle:
    """JoinGroup: :func:`join_group_request`'s ``fields``, sent at ``version`` (or the newest)."""
    return conn.send(join_group_request(group_id, **fields), version)


def sync_group_request(
    group_id: str,
    *,
    member_id: str,
    generation_id: int,
    assignments: Sequence[tuple[str, bytes]] = (),
    group_instance_id: str | None = None,
    protocol_type: str | None = None,
    protocol_name: str | None = None,
) -> Any:
    return SyncGroupRequest(
        group_id=group_id,
        generation_id=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        protocol_type=protocol_type,
        protocol_name=protocol_name,
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
            for m, a in assignments
        ],
    )


def sync_group(
    conn: Connection, group_id: str, *, version: int | None = None, **fields: Any
) -> Handle:
    return conn.send(sync_group_request(group_id, **fields), version)


def heartbeat_request(
    group_id: str, *, member_id: str, generation_id: int, group_instance_id: str | None = None
) -> Any:
    return HeartbeatRequest(
        group_id=group_id,
        generation_id=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
    )


def heartbeat(
    conn: Connection, group_id: str, *, version: int | None = None, **fields: Any
) -> Handle:
    return conn.send(heartbeat_request(group_id, **fields), version)


def leave_group_request(
    group_id: str,
    members: Sequence[tuple[str, str | None]],
    *,
    version: int,
    reason: str | None = None,
) -> Any:
    """LeaveGroup: v0-2 carry a single ``member_id`` (exactly one member required), v3+ a batch of
    ``(member_id, group_instance_id)``."""
    if version < 3:
        if len(members) != 1:
            raise ValueError(
                f"LeaveGroup v{version} carries exactly one member_id, got {len(members)} "
                "members; use v3+ for a batch"
            )
        return LeaveGroupRequest(group_id=group_id, member_id=members[0][0])
    return LeaveGroupRequest(
        group_id=group_id,
        members=[
            LeaveGroupRequest.MemberIdentity(member_id=m, group_instance_id=g, reason=reason)
            for m, g in members
        ],
    )


def leave_group(
    conn: Connection,
    group_id: str,
    members: Sequence[tuple[str, str | None]],
    *,
    reason: str | None = None,
    version: int | None = None,
) -> Handle:
    v = conn.version_for(LeaveGroupRequest, version)
    return conn.send(leave_group_request(group_id, members, version=v, reason=reason), v)


def _topic_ref(
    api: str, version: int, topic: str, topic_ids: Mapping[str, Any] | None
) -> dict[str, Any]:
    """How a v10+ OffsetCommit/OffsetFetch names a topic (by id), else by name."""
    if version < 10:
        return {"name": topic}
    if topic_ids is None or topic not in topic_ids:
        raise ValueError(f"{api} v{version} names topics by id: pass topic_ids with {topic!r}")
    return {"topic_id": topic_ids[topic]}


def offset_commit_request(
    group_id: str,
    *,
    member_id: str,
    generation_id: int,
    offsets: Sequence[tuple[str, int, int, str | None]],
    leader_epochs: Sequence[int] | None = None,
    group_instance_id: str | None = None,
    topic_ids: Mapping[str, Any] | None = None,
    version: int,
) -> Any:
    """OffsetCommit of ``(topic, partition, offset, metadata)``; v10+ name topics by id, so
    ``topic_ids`` (topic name -> ``uuid.UUID``, from Metadata) is required there.
    ``leader_epochs``, one per offset, is each partition's ``CommittedLeaderEpoch`` (v6+; -1, the
    spec's default, when not given)."""
    topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
    epochs = list(leader_epochs) if leader_epochs is not None else [-1] * len(offsets)
    if len(epochs) != len(offsets):
        raise ValueError("leader_epochs: one per offset")
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition, offset, meta), epoch in zip(offsets, epochs, strict=True):
        by_topic.setdefault(topic, []).append(
            topic_cls.OffsetCommitRequestPartition(
                partition_index=partition,
                committed_offset=offset,
                committed_leader_epoch=epoch,
                committed_metadata=meta,
            )
        )
    return OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        topics=[
            topic_cls(partitions=parts, **_topic_ref("OffsetCommit", version, t, topic_ids))
            for t, parts in by_topic.items()
        ],
    )


def offset_commit(
    conn: Connection, group_id: str, *, version: int | None = None, **fields: Any
) -> Handle:
    v = conn.version_for(OffsetCommitRequest, version)
    return conn.send(offset_commit_request(group_id, version=v, **fields), v)


def offset_fetch_request(
    group_id: str,
    partitions: Sequence[tuple[str, int]] | None,
    *,
    topic_ids: Mapping[str, Any] | None = None,
    require_stable: bool = False,
    member_id: str | None = None,
    member_epoch: int = -1,
    version: int,
) -> Any:
    """OffsetFetch of ``(topic, partition)`` pairs (``None`` = all committed partitions, v2+).
    v8+ use the batched ``groups`` layout; v10+ name topics by id (``topic_ids`` required);
    v9+ carry a consumer-group member's id and epoch (``None``/-1: none)."""
    if (member_id is not None or member_epoch != -1) and version < 9:
        raise ValueError(f"OffsetFetch v{version} has no member id or epoch (v9+)")
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions or ():
        by_topic.setdefault(topic, []).append(partition)
    if version >= 8:
        group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
        topic_cls = group_cls.OffsetFetchRequestTopics
        topics = None
        if partitions is not None:
            topics = [
                topic_cls(partition_indexes=idx, **_topic_ref("OffsetFetch", version, t, topic_ids))
                for t, idx in by_topic.items()
            ]
        group = group_cls(group_id=group_id, topics=topics)
        if version >= 9:
            group.member_id = member_id
            group.member_epoch = member_epoch
        return OffsetFetchRequest(groups=[group], require_stable=require_stable)
    old_cls = OffsetFetchRequest.OffsetFetchRequestTopic
    topics_v = (
        None
        if partitions is None
        else [old_cls(name=t, partition_indexes=idx) for t, idx in by_topic.items()]
    )
    if topics_v is None and version < 2:
        raise ValueError(f"OffsetFetch v{version} cannot fetch all partitions: list them")
    return OffsetFetchRequest(group_id=group_id, topics=topics_v, require_stable=require_stable)


def offset_fetch(
    conn: Connection,
    group_id: str,
    partitions: Sequence[tuple[str, int]] | None,
    *,
    version: int | None = None,
    **fields: Any,
) -> Handle:
    v = conn.version_for(OffsetFetchRequest, version)
    return conn.send(offset_fetch_request(group_id, partitions, version=v, **fields), v)


def describe_groups_request(group_ids: Sequence[str]) -> Any:
    return DescribeGroupsRequest(groups=list(group_ids), include_authorized_operations=False)


def describe_groups(
    conn: Connection, group_ids: Sequence[str], *, version: int | None = None
) -> Handle:
    return conn.send(describe_groups_request(group_ids), version)


def delete_groups(
    conn: Connection, group_ids: Sequence[str], *, version: int | None = None
) -> Handle:
    """DeleteGroups of ``group_ids`` (``DeleteGroupsRequest.json``; one result per group, in no
    particular order)."""
    return conn.send(DeleteGroupsRequest(groups_names=list(group_ids)), version)


def consumer_group_heartbeat_request(
    group_id: str,
    member_id: str,
    member_epoch: int,
    *,
    instance_id: str | None = None,
    rebalance_timeout_ms: int = -1,
    subscribed_topic_names: Sequence[str] | None = None,
    subscribed_topic_regex: str | None = None,
    server_assignor: str | None = None,
    topic_partitions: Sequence[tuple[Any, Sequence[int]]] | None = None,
    version: int,
) -> Any:
    """KIP-848 ConsumerGroupHeartbeat (``conformance/wire/message_specs.py`` builds the class from
    Kafka's spec). ``topic_partitions``: owned partitions as (topic id, partitions), or ``None``
    for "unchanged"."""
    from kgc.conformance.wire.message_specs import message_classes

    request_cls, _ = message_classes("ConsumerGroupHeartbeat")
    tp_cls = request_cls[version].TopicPartitions
    return request_cls[version](
        group_id=group_id,
        member_id=member_id,
        member_epoch=member_epoch,
        instance_id=instance_id,
        rack_id=None,
        rebalance_timeout_ms=rebalance_timeout_ms,
        subscribed_topic_names=None
        if subscribed_topic_names is None
        else list(subscribed_topic_names),
        subscribed_topic_regex=subscribed_topic_regex,
        server_assignor=server_assignor,
        topic_partitions=None
        if topic_partitions is None
        else [tp_cls(topic_id=tid, partitions=list(ps)) for tid, ps in topic_partitions],
    )


def consumer_group_describe_request(group_ids: Sequence[str], *, version: int) -> Any:
    from kgc.conformance.wire.message_specs import message_classes

    request_cls, _ = message_classes("ConsumerGroupDescribe")
    return request_cls[version](group_ids=list(group_ids), include_authorized_operations=False)


def consumer_group_heartbeat(
    conn: Connection,
    group_id: str,
    member_id: str,
    member_epoch: int,
    *,
    version: int | None = None,
    **fields: Any,
) -> Handle:
    from kgc.conformance.wire.message_specs import message_classes

    v = conn.version_for(message_classes("ConsumerGroupHeartbeat")[0], version)
    return conn.send(
        consumer_group_heartbeat_request(group_id, member_id, member_epoch, version=v, **fields),
        v,
    )


def consumer_group_describe(
    conn: Connection, group_ids: Sequence[str], *, version: int | None = None
) -> Handle:
    from kgc.conformance.wire.message_specs import message_classes

    v = conn.version_for(message_classes("ConsumerGroupDescribe")[0], version)
    return conn.send(consumer_group_describe_request(group_ids, version=v), v)


def share_group_heartbeat_request(
    group_id: str,
    member_id: str,
    member_epoch: int,
    *,
    rack_id: str | None = None,
    subscribed_topic_names: Sequence[str] | None = None,
    version: int,
) -> Any:
    """KIP-932 ShareGroupHeartbeat (``ShareGroupHeartbeatRequest.json``, v1; the class is built
    from Kafka's spec, ``message_specs.py``). The client chooses ``member_id`` (1-36 characters,
    ``KafkaApis.scala`` l.3055-3058); ``member_epoch`` 0 joins, -1 leaves. ``rack_id`` and
    ``subscribed_topic_names`` are sent null when ``None``: "unchanged since the last
    heartbeat"."""
    from kgc.conformance.wire.message_specs import message_classes

    request_cls, _ = message_classes("ShareGroupHeartbeat")
    return request_cls[version](
        group_id=group_id,
        member_id=member_id,
        member_epoch=member_epoch,
        rack_id=rack_id,
        subscribed_topic_names=None
        if subscribed_topic_names is None
        else list(subscribed_topic_names),
    )


def share_group_describe_request(group_ids: Sequence[str], *, version: int) -> Any:
    """KIP-932 ShareGroupDescribe (``ShareGroupDescribeRequest.json``, v1), without the
    authorized operations."""
    from kgc.conformance.wire.message_specs import message_classes

    request_cls, _ = message_classes("ShareGroupDescribe")
    return request_cls[version](group_ids=list(group_ids), include_authorized_operations=False)


def share_group_heartbeat(
    conn: Connection,
    group_id: str,
    member_id: str,
    member_epoch: int,
    *,
    rack_id: str | None = None,
    subscribed_topic_names: Sequence[str] | None = None,
    version: int | None = None,
) -> Handle:
    from kgc.conformance.wire.message_specs import message_classes

    v = conn.version_for(message_classes("ShareGroupHeartbeat")[0], version)
    return conn.send(
        share_group_heartbeat_request(
            group_id,
            member_id,
            member_epoch,
            rack_id=rack_id,
            subscribed_topic_names=subscribed_topic_names,
            version=v,
        ),
        v,
    )


def share_group_describe(
    conn: Connection, group_ids: Sequence[str], *, version: int | None = None
) -> Handle:
    from kgc.conformance.wire.message_specs import message_classes

    v = conn.version_for(message_classes("ShareGroupDescribe")[0], version)
    return conn.send(share_group_describe_request(group_ids, version=v), v)


def metadata(
    conn: Connection,
    topics: Sequence[str] | None = None,
    *,
    allow_auto_topic_creation: bool = False,
    version: int | None = None,
) -> Handle:
    """Metadata for ``topics`` (``None`` = all topics, v1+). ``__consumer_offsets`` is listed only
    when asked for by name."""
    topic_list = (
        None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
    )
    req = MetadataRequest(
        topics=topic_list,
        allow_auto_topic_creation=allow_auto_topic_creation,
        include_topic_authorized_operations=False,
    )
    return conn.send(req, version)


def describe_cluster(conn: Connection, *, version: int | None = None) -> Handle:
    req = DescribeClusterRequest(include_cluster_authorized_operations=False)
    return conn.send(req, version)


def describe_quorum(conn: Connection, *, version: int | None = None) -> Handle:
    """DescribeQuorum of the KRaft metadata log (``__cluster_metadata`` partition 0)."""
    topic_cls = DescribeQuorumRequest.TopicData
    req = DescribeQuorumRequest(
        topics=[
            topic_cls(
                topic_name="__cluster_metadata",
                partitions=[topic_cls.PartitionData(partition_index=0)],
            )
        ]
    )
    return conn.send(req, version)


def create_topics(
    conn: Connection,
    topics: Sequence[tuple[str, int, int]],
    *,
    timeout_ms: int = 30000,
    version: int | None = None,
) -> Handle:
    """CreateTopics of ``(name, num_partitions, replication_factor)``; send it to the controller
    (or any broker on KRaft, which forwards)."""
    topic_cls = CreateTopicsRequest.CreatableTopic
    req = CreateTopicsRequest(
        topics=[
            topic_cls(name=n, num_partitions=p, replication_factor=r, assignments=[], configs=[])
            for n, p, r in topics
        ],
        timeout_ms=timeout_ms,
        validate_only=False,
    )
    return conn.send(req, version)


# ---------------------------------------------------------------------------------- cluster view


def _unsupported_api_versions(handle: Handle, payload: bytes) -> Any:
    """An ApiVersions answer that does not decode at the version asked but carries
    ``UNSUPPORTED_VERSION`` (the error code follows the correlation id in every layout): Kafka
    answers a version it does not speak in the v0 layout, librdkafka's mock cluster in a short form
    of its own. Read as "ask lower"; anything else is ``None``."""
    if handle.api_name != "ApiVersions" or len(payload) < 6:
        return None
    (code,) = struct.unpack_from(">h", payload, 4)
    if error_name(code) != UNSUPPORTED_VERSION:
        return None
    return ApiVersionsResponse(error_code=code, api_keys=[], throttle_time_ms=0)


def parse_bootstrap(bootstrap_servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9093"`` (or a list of ``host:port``) -> ``[("h1", 9092), ("h2", 9093)]``;
    raises :class:`BrokerConfigError` (a ``ValueError``) naming the malformed item."""
    items = (
        bootstrap_servers.split(",")
        if isinstance(bootstrap_servers, str)
        else list(bootstrap_servers)
    )
    out = []
    for item in (s.strip() for s in items):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise BrokerConfigError(
                f"bad bootstrap server {item!r}; use HOST:PORT[,HOST:PORT...], e.g. localhost:9092"
            )
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise BrokerConfigError("empty --bootstrap-server; use HOST:PORT, e.g. localhost:9092")
    return out


class Cluster:
    """A view of a Kafka cluster for tests and the engine: admin connections (one per node, shared
    poller), Metadata, coordinator discovery and topic creation.

    All requests here are synchronous with a timeout; member traffic goes through
    :class:`GroupClient`, whose connections share this cluster's poller.
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        client_id: str = "kgc-admin",
        poller: Poller | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        security: ClientSecurity | None = None,
    ) -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.client_id = client_id
        #: how every connection of this cluster view connects (TLS, SASL); PLAINTEXT by default
        self.security = security or PLAINTEXT
        #: who carries out the search's ACL actions on the run's principal (``acls.AclAdmin``),
        #: when the run may take them: a secured broker kgc started (``suite.configure``)
        self.acl_admin: Any = None
        self.poller = poller if poller is not None else Poller()
        self.timeout_s = timeout_s
        self.brokers: dict[int, tuple[str, int]] = {}
        self.controller_id: int = -1
        self.cluster_id: str | None = None
        self._admin: dict[int, Connection] = {}
        self._bootstrap_conn: Connection | None = None
        # idle member connections kept for reuse: (node id, host, port, client id) -> connections
        self._spare: dict[tuple[int, str, int, str], list[Connection]] = {}
        self.refresh_metadata()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # connections ---------------------------------------------------------------------------
    def _any_connection(self) -> Connection:
        for conn in self._admin.values():
            if not conn.closed:
                return conn
        if self._bootstrap_conn is not None and not self._bootstrap_conn.closed:
            return self._bootstrap_conn
        errors = []
        candidates = list(self.brokers.values()) + self.bootstrap
        for host, port in candidates:
            try:
                self._bootstrap_conn = Connection(
                    host,
                    port,
                    self.client_id,
                    poller=self.poller,
                    timeout_s=self.timeout_s,
                    security=self.security,
                )
                return self._bootstrap_conn
            except ClientError as exc:
                errors.append(str(exc))
        raise ConnectionClosedError("no broker reachable: " + "; ".join(errors))

    def connection(self, node_id: int) -> Connection:
        """The admin connection to broker ``node_id`` (opened on first use, reopened if closed)."""
        conn = self._admin.get(node_id)
        if conn is None or conn.closed:
            if node_id not in self.brokers:
                self.refresh_metadata()
            if node_id not in self.brokers:
                raise ClientError(
                    f"node {node_id} is not in the cluster metadata {sorted(self.brokers)}"
                )
            host, port = self.brokers[node_id]
            conn = Connection(
                host,
                port,
                self.client_id,
                poller=self.poller,
                timeout_s=self.timeout_s,
                node_id=node_id,
                security=self.security,
            )
            self._admin[node_id] = conn
        return conn

    def open(self, node_id: int, client_id: str, *, reuse: bool = False) -> Connection:
        """A dedicated connection to ``node_id`` (e.g. one per simulated member): a new one, or
        with ``reuse`` an idle one given back by :meth:`release` for the same node, address and
        client id (so the broker sees the same ``client_id`` in every request header)."""
        if node_id not in self.brokers:
            self.refresh_metadata()
        host, port = self.brokers[node_id]
        if reuse:
            spares = self._spare.get((node_id, host, port, client_id), [])
            while spares:
                conn = spares.pop()
                if conn.reusable:
                    return conn
                conn.close()
        return Connection(
            host,
            port,
            client_id,
            poller=self.poller,
            timeout_s=self.timeout_s,
            node_id=node_id,
            security=self.security,
        )

    def release(self, conn: Connection) -> None:
        """Give back a connection from :meth:`open` for reuse. Kept only if it is open, has no
        request in flight and no unread or unsent bytes (so nothing from one use can reach the
        next); otherwise closed. :meth:`close` closes the spares."""
        if not conn.reusable or conn.node_id is None or conn.poller is not self.poller:
            conn.close()
            return
        key = (conn.node_id, conn.host, conn.port, conn.client_id)
        self._spare.setdefault(key, []).append(conn)

    @property
    def spare_connections(self) -> int:
        """How many idle connections :meth:`release` holds for reuse."""
        return sum(len(v) for v in self._spare.values())

    def _request(self, conn: Connection, handle: Handle) -> Any:
        self.poller.wait([handle], self.timeout_s)
        if not handle.done:
            conn._fail(time.monotonic(), f"timeout after {self.timeout_s} s")
        return handle.result()

    # metadata ------------------------------------------------------------------------------
    def metadata(self, topics: Sequence[str] | None = None) -> Any:
        """A Metadata response (raw kafka-python object); also refreshes :attr:`brokers`."""
        conn = self._any_connection()
        resp = self._request(conn, metadata(conn, topics))
        self.brokers = {b.node_id: (b.host, b.port) for b in resp.brokers}
        self.controller_id = resp.controller_id
        self.cluster_id = resp.cluster_id
        return resp

    def refresh_metadata(self) -> None:
        self.metadata([])

    def partition_leaders(self, topic: str) -> dict[int, int]:
        """``partition -> leader node id`` for ``topic`` (error if the topic has an error)."""
        resp = self.metadata([topic])
        listed = [t for t in resp.topics if t.name == topic]
        if len(listed) != 1:
            raise ClientError(f"Metadata for {topic!r}: listed {len(listed)} times, not once")
        (t,) = listed
        if t.error_code != 0:
            raise ClientError(f"Metadata for {topic!r}: {error_name(t.error_code)}")
        return {p.partition_index: p.leader_id for p in t.partitions}

    def topic_ids(self, topics: Sequence[str]) -> dict[str, Any]:
        """Topic name -> topic id (``uuid.UUID``), for OffsetCommit/OffsetFetch v10+."""
        resp = self.metadata(list(topics))
        return {t.name: t.topic_id for t in resp.topics if t.error_code == 0}

    def describe_cluster(self) -> Any:
        conn = self._any_connection()
        return self._request(conn, describe_cluster(conn))

    def describe_quorum(self) -> Any:
        conn = self._any_connection()
        return self._request(conn, describe_quorum(conn))

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        """Create a topic (``TOPIC_ALREADY_EXISTS`` is fine) and wait until every partition has a
        leader in Metadata."""
        conn = self._any_connection()
        if KEYS["CreateTopics"] in (conn.broker_versions or {}):
            handle = create_topics(conn, [(name, partitions, replication_factor)])
            for t in self._request(conn, handle).topics:
                err = error_name(t.error_code)
                if err not in (NONE, TOPIC_ALREADY_EXISTS):
                    raise ClientError(
                        f"CreateTopics {name!r}: {err} {t.error_message or ''}".rstrip()
                    )
        else:  # no CreateTopics (librdkafka's mock cluster): ask Metadata to create it
            self._request(conn, metadata(conn, [name], allow_auto_topic_creation=True))
            partitions = 0  # as many partitions as the broker gives an auto-created topic
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                leaders = self.partition_leaders(name)
                enough = len(leaders) == partitions or (partitions == 0 and leaders)
                if enough and all(lid >= 0 for lid in leaders.values()):
                    return
            except ClientError:
                pass
            if time.monotonic() > deadline:
                raise ClientError(f"topic {name!r} has no leaders after {self.timeout_s} s")
            time.sleep(0.05)

    def elect_preferred_leaders(self, topic: str) -> None:
        """A preferred-replica leader election for every partition of ``topic`` (ElectLeaders,
        election type 0): each partition's leader goes back to the first replica listed for it
        where that replica is in sync (the cluster has ``auto.leader.rebalance.enable=false`` in
        the fault scenarios, so a restarted node leads nothing until asked). Per-partition errors
        (``ELECTION_NOT_NEEDED``, a preferred replica out of sync) are not errors here."""
        from kafka.protocol.admin import ElectLeadersRequest

        resp = self.metadata([topic])
        (t,) = [t for t in resp.topics if t.name == topic]
        parts = [p.partition_index for p in t.partitions]
        conn = self._any_connection()
        req = ElectLeadersRequest(
            election_type=0,
            topic_partitions=[ElectLeadersRequest.TopicPartitions(topic=topic, partitions=parts)],
            timeout_ms=int(self.timeout_s * 1000),
        )
        answer = self._request(conn, conn.send(req))
        err = error_name(getattr(answer, "error_code", 0))
        if err != NONE:
            raise ClientError(f"ElectLeaders {topic!r}: {err}")

    # coordinators --------------------------------------------------------------------------
    def find_coordinator(
        self,
        group_id: str,
        *,
        timeout_s: float | None = None,
        version: int | None = None,
        key_type: int = GROUP_KEY_TYPE,
    ) -> CoordinatorResult:
        """FindCoordinator(GROUP, or ``key_type``) with bounded retries of the retriable
        coordinator errors (backoff 50 ms doubling to 1 s). Raises
        :class:`CoordinatorNotFoundError` at the deadline."""
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        backoff = 0.05
        last = ""
        while True:
            conn = self._any_connection()
            handle = find_coordinator(conn, group_id, version=version, key_type=key_type)
            result = find_coordinator_result(self._request(conn, handle), handle.version)
            if result.error == NONE:
                if result.node_id not in self.brokers:
                    self.brokers[result.node_id] = (result.host, result.port)
                return result
            if result.error not in ROUTING_ERRORS:
                raise CoordinatorNotFoundError(f"FindCoordinator({group_id!r}): {result.error}")
            last = result.error
            if time.monotonic() + backoff > deadline:
                raise CoordinatorNotFoundError(
                    f"FindCoordinator({group_id!r}) still {last} after "
                    f"{self.timeout_s if timeout_s is None else timeout_s} s"
                )
            time.sleep(backoff)
            backoff = min(1.0, backoff * 2)

    def await_coordinator(self, group_id: str, *, timeout_s: float | None = None) -> int:
        """Node id of ``group_id``'s coordinator once it serves the group.

        FindCoordinator names the leader of the group's ``__consumer_offsets`` partition even while
        that broker is still loading the partition; group requests then fail with
        COORDINATOR_LOAD_IN_PROGRESS. So this also sends DescribeGroups (which creates nothing)
        to the coordinator and retries, finding the coordinator again, until it answers without a
        retriable coordinator error.
        """
        budget = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + budget
        backoff = 0.05
        while True:
            remaining = max(0.1, deadline - time.monotonic())
            node_id = self.find_coordinator(group_id, timeout_s=remaining).node_id
            conn = self.connection(node_id)
            if KEYS["DescribeGroups"] not in (conn.broker_versions or {}):
                return node_id  # no DescribeGroups to ask with: FindCoordinator's word it is
            resp = self._request(conn, describe_groups(conn, [group_id]))
            error = error_name(resp.groups[0].error_code)
            if error not in ROUTING_ERRORS:
                return node_id
            if time.monotonic() + backoff > deadline:
                raise CoordinatorNotFoundError(
                    f"coordinator {node_id} of {group_id!r} still answers {error} after {budget} s"
                )
            time.sleep(backoff)
            backoff = min(1.0, backoff * 2)

    def await_transaction_coordinator(
        self, transactional_id: str, *, timeout_s: float | None = None
    ) -> int:
        """Node id of ``transactional_id``'s transaction coordinator once it serves it.

        FindCoordinator(TRANSACTION) creates ``__transaction_state`` on first use and answers
        COORDINATOR_NOT_AVAILABLE until it exists; the coordinator then answers
        COORDINATOR_LOAD_IN_PROGRESS while it loads the partition. So this finds the coordinator
        and sends it an InitProducerId for a throwaway transactional id (``<id>-ready``, under the
        suite's prefix) until it answers without a routing error."""
        from kafka.protocol.producer import InitProducerIdRequest

        budget = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + budget
        backoff = 0.05
        while True:
            remaining = max(0.1, deadline - time.monotonic())
            node_id = self.find_coordinator(
                transactional_id, timeout_s=remaining, key_type=TRANSACTION_KEY_TYPE
            ).node_id
            conn = self.connection(node_id)
            probe = InitProducerIdRequest(
                transactional_id=f"{transactional_id}-ready", transaction_timeout_ms=60000
            )
            error = error_name(self._request(conn, conn.send(probe)).error_code)
            if error not in ROUTING_ERRORS:
                return node_id
            if time.monotonic() + backoff > deadline:
                raise CoordinatorNotFoundError(
                    f"transaction coordinator {node_id} of {transactional_id!r} still answers "
                    f"{error} after {budget} s"
                )
            time.sleep(backoff)
            backoff = min(1.0, backoff * 2)

    def group(
        self, group_id: str, *, timeout_s: float | None = None, reuse_connections: bool = False
    ) -> GroupClient:
        """Wait for ``group_id``'s coordinator (:meth:`await_coordinator`) and return a
        :class:`GroupClient` for it (``reuse_connections``: see :class:`GroupClient`)."""
        return GroupClient(
            self,
            group_id,
            self.await_coordinator(group_id, timeout_s=timeout_s),
            reuse_connections=reuse_connections,
        )

    def close(self) -> None:
        if self.acl_admin is not None:
            self.acl_admin.close()
            self.acl_admin = None
        for conn in list(self._admin.values()):
            conn.close()
        if self._bootstrap_conn is not None:
            self._bootstrap_conn.close()
        self._admin.clear()
        for spares in self._spare.values():
            for conn in spares:
                conn.close()
        self._spare.clear()


class GroupClient:
    """Member connections for one group on its coordinator: ``member("c1")`` is simulated client
    ``c1``'s own connection (opened on first use, client id ``kgc-<name>``).

    With ``reuse_connections`` a member connection comes from the cluster's spares when one is
    idle (same coordinator, same client id), and :meth:`close` gives idle ones back instead of
    closing them: a group is not tied to a connection in the classic protocol (membership is by
    member id; the connection only carries the client id, which stays the same), so the next
    group's client ``c1`` can use the previous group's ``c1`` connection without the TCP connect
    and ApiVersions handshake. A connection with a request still in flight is always closed."""

    def __init__(
        self,
        cluster: Cluster,
        group_id: str,
        coordinator_id: int,
        *,
        reuse_connections: bool = False,
    ) -> None:
        self.cluster = cluster
        self.group_id = group_id
        self.coordinator_id = coordinator_id
        self.reuse_connections = reuse_connections
        self.members: dict[str, Connection] = {}
        # connections to other nodes (a transaction coordinator), by ``client@node``
        self.elsewhere: dict[str, Connection] = {}

    @property
    def poller(self) -> Poller:
        return self.cluster.poller

    def member(self, name: str) -> Connection:
        conn = self.members.get(name)
        if conn is None or conn.closed:
            conn = self.cluster.open(
                self.coordinator_id, client_id_of(name), reuse=self.reuse_connections
            )
            self.members[name] = conn
        return conn

    def member_at(self, name: str, node_id: int) -> Connection:
        """Simulated client ``name``'s connection to node ``node_id`` (its transaction
        coordinator): its group connection when that is the node, else one of its own (the client
        still has at most one request in flight, over either)."""
        if node_id == self.coordinator_id:
            return self.member(name)
        key = f"{name}@{node_id}"
        conn = self.elsewhere.get(key)
        if conn is None or conn.closed:
            conn = self.cluster.open(node_id, client_id_of(name), reuse=self.reuse_connections)
            self.elsewhere[key] = conn
        return conn

    def close(self) -> None:
        for conn in [*self.members.values(), *self.elsewhere.values()]:
            if self.reuse_connections:
                self.cluster.release(conn)
            else:
                conn.close()
        self.members.clear()
        self.elsewhere.clear()

    def __enter__(self) -> GroupClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
