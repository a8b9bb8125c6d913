"""The broker side of "one client interface, two implementations": a real Kafka as a ``Target``.

One group per target, one TCP connection per simulated client to the group's coordinator (a broker
mutes a connection while a request is pending, so a pending JoinGroup must not block other clients).
Commands are encoded with kafka-python's generated protocol classes
(``kgc.conformance.wire.encoding``); responses are decoded into the model's vocabulary with real
member ids replaced by symbolic ones.

Member-id mapping: a real id gets its symbolic name ``cK-n`` the first time it is revealed to client
``cK`` as its *own* id. A JoinGroup completion answers every member at once and the leader's answer
lists the others' ids, so arrivals are decoded in two passes: first every response's own id is
registered, then the responses are translated.

An id can also show up before its owner hears of it: DescribeGroups lists a member whose JoinGroup
(v3 and older, or static) is still pending. Apache Kafka builds member ids as
``clientId + "-" + UUID`` for dynamic members and ``groupInstanceId + "-" + UUID`` for static ones
(``GroupMetadataManager``/``GroupCoordinator``); each simulated client connects with client id
``kgc-cK`` and uses instance id ``cK-instance``, so such an id is attributed to ``cK`` by its
prefix. Another implementation may build ids differently (kfake renders the UUID without
dashes), so a DescribeGroups member listed with client id ``kgc-cK`` is attributed to ``cK`` as
well, by the answer's own word (:func:`~kgc.conformance.wire.encoding.attribute_by_client`). An id
attributed neither way waits up to ``defer_ms`` for its owner's answer and is then named
``unknown-…``, which no model state allows: the divergence is reported, not hidden.

Connections outlive a target (``reuse_connections``, the default): :meth:`BrokerTarget.close`
gives each idle member connection back to the :class:`~kgc.conformance.wire.client.Cluster`, and the
next target's client ``cK`` reuses it (same coordinator, same client id ``kgc-cK``, so member-id
attribution is unchanged). A connection with a request still pending is closed, never reused, so
no answer from one example can reach the next. The group's coordinator is still looked up for
every target (FindCoordinator, then DescribeGroups until it serves the group): a new group id may
map to another ``__consumer_offsets`` partition, and another coordinator.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass
from typing import Any

from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.client import (
    ClientError,
    Cluster,
    ConnectionClosedError,
    GroupClient,
    Handle,
)
from kgc.conformance.wire.requests import TO_TRANSACTION_COORDINATOR, transactional_id
from kgc.engine.target import Arrival, Target, TargetError
from kgc.model.commands import (
    ConnectionClosed,
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    OffsetCommit,
    OffsetFetch,
    Request,
    ShareGroupDescribe,
    ShareGroupHeartbeat,
)

# dynamic members: "kgc-cK-<uuid>" (clientId-UUID); static members: "cK-instance-<uuid>"
# (groupInstanceId-UUID, both versions' coordinators), the machine's instance ids being cK-instance
_KAFKA_MEMBER_ID = re.compile(
    r"^(?:kgc-(c\d+)|(c\d+)-instance)-"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
)


@dataclass(slots=True)
class _Pending:
    request_id: int
    command: Request
    handle: Handle


class BrokerTarget(Target):
    def __init__(
        self,
        cluster: Cluster,
        group_id: str,
        *,
        description: dict[str, Any],
        defer_ms: float = 250.0,
        reuse_connections: bool = True,
    ) -> None:
        self.group_id = group_id
        self._cluster = cluster
        self._group: GroupClient = cluster.group(group_id, reuse_connections=reuse_connections)
        self._ids = wire.MemberIds()
        self._pending: dict[str, _Pending] = {}
        self._deferred: list[tuple[_Pending, float]] = []
        # requests whose connection could not be opened or written: answered ConnectionClosed
        self._refused: list[Arrival] = []
        self._description = description
        self._defer_s = defer_ms / 1000.0
        self._t0 = time.monotonic()
        self._known_topic_ids: dict[str, Any] = {}
        self._txn_coordinators: dict[str, int] = {}  # real transactional id -> node id

    # --------------------------------------------------------------------- Target
    def now_ms(self) -> float:
        return (time.monotonic() - self._t0) * 1000.0

    def _ms(self, monotonic_s: float) -> float:
        return (monotonic_s - self._t0) * 1000.0

    def prepare(self, client: str) -> None:
        """Open (or reuse) ``client``'s connection before the engine stamps its next request: the
        ApiVersions handshake of a new connection reads whatever else arrives meanwhile, and the
        engine records that before the request (``Engine.execute``)."""
        with contextlib.suppress(ClientError):  # refused: ``send`` tries again and records it
            self._group.member(client)

    def _topic_ids(self, command: Request) -> dict[str, Any] | None:
        """Topic name -> id for the topics a KIP-848 or KIP-932 command or an OffsetCommit/
        OffsetFetch v10+ names (learned once, from Metadata): their answers name topics by id;
        None for the others, which name topics by name."""
        wanted: set[str] = set()
        if isinstance(command, OffsetCommit) and command.version >= 10:
            wanted = {o.topic for o in command.offsets}
        elif isinstance(command, OffsetFetch) and command.version >= 10:
            wanted = {tp.topic for tp in command.partitions}
        elif isinstance(command, ConsumerGroupHeartbeat):
            wanted = {tp.topic for tp in command.topic_partitions or ()}
            wanted |= set(command.subscribed_topic_names or ())
        elif isinstance(command, ShareGroupHeartbeat):
            wanted = set(command.subscribed_topic_names or ())
        elif not isinstance(command, ConsumerGroupDescribe | ShareGroupDescribe):
            return None
        missing = sorted(wanted - self._known_topic_ids.keys())
        if missing:
            self._known_topic_ids.update(self._cluster.topic_ids(missing))
        return self._known_topic_ids

    def _client_ports(self) -> dict[int, str]:
        """Each open client connection's local port -> its Kafka client id (``kgc-c1``)."""
        out: dict[int, str] = {}
        for conn in self._group.members.values():
            with contextlib.suppress(OSError, AttributeError):
                if not conn.closed:
                    out[conn.local_port] = conn.client_id
        return out

    def _decode(self, p: _Pending) -> Any:
        ids = self._topic_ids(p.command)
        ports = self._client_ports()

        def decoded() -> Any:
            return wire.decode(
                p.command,
                p.handle.response,
                self._ids,
                topic_ids=ids,
                group_id=self.group_id,
                client_ports=ports,
            )

        response = decoded()
        if ids is not None and "unknown-topic-" in repr(response):
            # a topic this target has not named yet (a describe before any join): every topic's id
            resp = self._cluster.metadata(None)
            self._known_topic_ids.update(
                {t.name: t.topic_id for t in resp.topics if t.error_code == 0}
            )
            response = decoded()
        return response

    # A connection closed on a request, or refused, is the request's answer (ConnectionClosed:
    # a divergence, since Kafka answers every request it offers). The fault target, whose nemesis
    # closes connections on purpose, turns this off and counts such requests as lost instead.
    closed_connection_is_an_answer = True

    def _connection(self, command: Request) -> Any:
        """The client's connection to the coordinator that answers ``command``: the group's, or
        for InitProducerId, AddOffsetsToTxn and EndTxn its transactional id's transaction
        coordinator (FindCoordinator key type 1, looked up once per transactional id)."""
        if command.type not in TO_TRANSACTION_COORDINATOR:
            return self._group.member(command.client)
        tid = transactional_id(command, self.group_id)
        node = self._txn_coordinators.get(tid)
        if node is None:
            node = self._txn_coordinators[tid] = self._cluster.await_transaction_coordinator(tid)
        return self._group.member_at(command.client, node)

    def send(self, request_id: int, command: Request) -> None:
        try:
            conn = self._connection(command)
            request, version = wire.encode(
                command, self.group_id, self._ids, topic_ids=self._topic_ids(command)
            )
            handle = conn.send(request, version)
        except ClientError as exc:
            if not self.closed_connection_is_an_answer:
                raise TargetError(f"{command.type} from {command.client}: {exc}") from exc
            reason = " ".join(str(exc).split())
            self._refused.append(
                Arrival(
                    request_id=request_id,
                    response=ConnectionClosed(reason=reason),
                    at_ms=self.now_ms(),
                )
            )
            return
        self._pending[command.client] = _Pending(request_id, command, handle)

    def in_flight(self, client: str) -> bool:
        return client in self._pending

    def poll(self, timeout_ms: float) -> list[Arrival]:
        if self._refused:
            out, self._refused = self._refused, []
            return out
        done = self._group.poller.poll(max(0.0, timeout_ms) / 1000.0)
        batch: list[_Pending] = [p for p, _ in self._deferred]
        self._deferred = []
        closed: list[Arrival] = []
        by_handle = {id(p.handle): p for p in self._pending.values()}
        # also whatever completed while someone else waited on the poller (belt and braces)
        done = list(done) + [p.handle for p in self._pending.values() if p.handle.done]
        for handle in done:
            p = by_handle.pop(id(handle), None)
            if p is None:
                continue
            del self._pending[p.command.client]
            if handle.error is not None:
                if not self.closed_connection_is_an_answer:
                    raise TargetError(
                        f"{p.command.type} from {p.command.client} failed: {handle.error}"
                    )
                closed.append(
                    Arrival(
                        request_id=p.request_id,
                        response=ConnectionClosed(reason=" ".join(handle.error.split())),
                        at_ms=self._ms(handle.received_at or time.monotonic()),
                    )
                )
                continue
            batch.append(p)
        # pass 1: learn every response's own member id, then ids attributable by client id
        for p in batch:
            wire.learn_own_id(p.command, p.handle.response, self._ids)
        for p in batch:
            for real in wire.member_ids_in(p.command, p.handle.response):
                match = _KAFKA_MEMBER_ID.match(real)
                if match and self._ids.symbolic(real) is None:
                    self._ids.symbolic(real, owner_client=match.group(1) or match.group(2))
            wire.attribute_by_client(p.command, p.handle.response, self._ids)
        # pass 2: translate, deferring answers that name members not yet heard from
        out: list[Arrival] = closed
        now = time.monotonic()
        for p in batch:
            assert p.handle.received_at is not None
            waited = now - p.handle.received_at
            if not wire.all_ids_known(p.command, p.handle.response, self._ids) and (
                waited < self._defer_s
            ):
                self._deferred.append((p, p.handle.received_at))
                continue
            response = self._decode(p)
            out.append(
                Arrival(
                    request_id=p.request_id,
                    response=response,
                    at_ms=self._ms(p.handle.received_at),
                    extras={
                        "latency_ms": round((p.handle.latency_s or 0.0) * 1000.0, 3),
                        "version": p.handle.version,
                    },
                )
            )
        out.sort(key=lambda a: a.at_ms)
        return out

    def describe(self) -> dict[str, Any]:
        return dict(self._description)

    def real_member_ids(self) -> dict[str, str]:
        return self._ids.as_dict()

    def discard_connections(self) -> None:
        self._group.reuse_connections = False

    def alter_acl(self, action: str) -> None:
        """Through the run's ``AclAdmin`` (``conformance/wire/acls.py``), for this example's
        group; a broker the run may not change ACLs on refuses."""
        admin = self._cluster.acl_admin
        if admin is None:
            raise TargetError(f"{action}: the run may not change ACLs on this broker")
        try:
            admin.perform(self.group_id, action)
        except ClientError as exc:
            raise TargetError(str(exc)) from None

    def close(self) -> None:
        admin = self._cluster.acl_admin
        if admin is not None:  # what this example denied is allowed again: the next starts clean
            with contextlib.suppress(ClientError):
                admin.clear()
        with contextlib.suppress(ConnectionClosedError):
            self._group.close()
