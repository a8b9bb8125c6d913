"""Drive a group's members across a coordinator failover and record what they saw.

Role: the client side of the coordinator-failover scenarios (``tests/faults``). The differential
engine's ``BrokerTarget`` keeps each client on one coordinator connection and treats a broken
connection as an error; a failover needs what a real consumer does instead (Kafka's
``AbstractCoordinator``): when the coordinator stops answering or answers ``NOT_COORDINATOR`` /
``COORDINATOR_LOAD_IN_PROGRESS``, find the coordinator again and retry. This driver does that,
one connection per simulated client, and records every request and answer as
:class:`~kgc.model.history.Invoke` / :class:`~kgc.model.history.Receive` events, and every nemesis
action as a :class:`~kgc.model.history.Fault` event, in one history the checker folds with
:class:`kgc.model.failover.FailoverModel`.

What is recorded, honestly:

* a request that could not even be written (connection refused by a dead node) was never sent, so
  it is not in the history;
* a request that was written but got no answer before the timeout (a paused node, a dead one after
  the write) is an ``Invoke`` without ``Receive``: the model allows a lost request only where a
  fault explains it;
* every answer is decoded into the model's vocabulary (``kgc.conformance.wire``) with symbolic
  member ids.

Setting up the Stable group (join, sync) happens before recording starts; the model starts from
the group the broker reported (:meth:`GroupDriver.form_group` returns it as a
:class:`~kgc.model.failover.GroupRecord`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgc.conformance import wire
from kgc.conformance.client import (
    ClientError,
    Cluster,
    Connection,
    create_topics,
    error_name,
    find_coordinator_result,
)
from kgc.conformance.nemesis import Nemesis
from kgc.model import commands as m
from kgc.model.failover import GroupRecord, PersistedMember
from kgc.model.history import Event, Fault, Invoke, Receive

ROUTING_ERRORS = frozenset(
    {"NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE"}
)

# versions every Kafka from 3.9 to 4.x accepts (see kgc.properties.machine.DEFAULT_VERSIONS)
VERSIONS = {
    "JoinGroup": 5,
    "SyncGroup": 4,
    "Heartbeat": 4,
    "OffsetCommit": 8,
    "OffsetFetch": 7,
    "DescribeGroups": 5,
    "FindCoordinator": 3,
}


class ScenarioError(AssertionError):
    """The scenario could not reach the state it needs (the message says which and why)."""


@dataclass(slots=True)
class _Client:
    name: str
    node: int | None = None
    conn: Connection | None = None


@dataclass(slots=True)
class GroupDriver:
    """Members of ``group_id`` on the cluster at ``bootstrap``; see the module docstring."""

    bootstrap: str
    group_id: str
    nemesis: Nemesis | None = None
    request_timeout_s: float = 3.0
    events: list[Event] = field(default_factory=list)
    ids: wire.MemberIds = field(default_factory=wire.MemberIds)
    recording: bool = False
    log: Callable[[str], None] | None = None
    #: client -> (symbolic) member id of the group :meth:`form_group` formed last
    member_ids: dict[str, str] = field(default_factory=dict)
    _t0: float = field(default_factory=time.monotonic)
    _step: int = 0
    _rid: int = 0
    _clients: dict[str, _Client] = field(default_factory=dict)
    _admin: Cluster | None = None

    # ------------------------------------------------------------------ plumbing
    def now_ms(self) -> float:
        return (time.monotonic() - self._t0) * 1000.0

    def _say(self, text: str) -> None:
        if self.log is not None:
            self.log(f"[{self.now_ms() / 1000:7.2f}s] {text}")

    @property
    def admin(self) -> Cluster:
        if self._admin is None:
            self._admin = Cluster(self.bootstrap, client_id="kgc-failover", timeout_s=3.0)
        return self._admin

    def close(self) -> None:
        for c in self._clients.values():
            if c.conn is not None:
                c.conn.close()
        if self._admin is not None:
            self._admin.close()
            self._admin.poller.close()

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 3) -> None:
        """CreateTopics through the controller (a ZooKeeper-mode broker answers NOT_CONTROLLER;
        KRaft brokers forward), then wait until every partition has a leader."""
        admin = self.admin
        admin.refresh_metadata()
        conn = admin.connection(admin.controller_id)
        handle = create_topics(conn, [(name, partitions, replication_factor)])
        admin.poller.wait([handle], 30.0)
        resp = handle.result()
        for t in resp.topics:
            err = error_name(t.error_code)
            if err not in ("NONE", "TOPIC_ALREADY_EXISTS"):
                raise ScenarioError(f"CreateTopics {name!r}: {err}")
        end = time.monotonic() + 30
        while True:
            try:
                leaders = admin.partition_leaders(name)
                if len(leaders) == partitions and all(n >= 0 for n in leaders.values()):
                    return
            except ClientError:
                pass
            if time.monotonic() > end:
                raise ScenarioError(f"topic {name!r} has no leaders after 30 s")
            time.sleep(0.1)

    def coordinator_of(self, client: str) -> int | None:
        c = self._clients.get(client)
        return c.node if c else None

    def _client(self, name: str) -> _Client:
        return self._clients.setdefault(name, _Client(name=name))

    def _next_step(self) -> int:
        step = self._step
        self._step += 1
        return step

    def _connect(self, c: _Client, node: int) -> Connection | None:
        if c.conn is not None and not c.conn.closed and c.node == node:
            return c.conn
        if c.conn is not None:
            c.conn.close()
        c.node = node
        c.conn = None
        try:
            host, port = self.admin.brokers[node]
        except KeyError:
            return None
        try:
            c.conn = Connection(
                host,
                port,
                f"kgc-{c.name}",
                poller=self.admin.poller,
                timeout_s=self.request_timeout_s,
                node_id=node,
            )
        except ClientError as exc:
            self._say(f"{c.name}: cannot connect to node {node}: {exc}")
            return None
        return c.conn

    # ------------------------------------------------------------------ requests
    def call(self, command: m.Request, *, node: int | None = None) -> m.Response | None:
        """Send ``command`` from its client and wait up to the request timeout. Group requests go
        to ``node`` (default: the client's coordinator) on the client's own connection;
        FindCoordinator goes to ``node`` (default: any running broker) on an admin connection,
        and a named coordinator becomes the client's. Returns the decoded answer, or None if
        there was none."""
        c = self._client(command.client)
        if isinstance(command, m.FindCoordinator):
            target = node if node is not None else self._any_running()
            try:
                conn: Connection | None = self.admin.connection(target)
            except ClientError as exc:
                self._say(f"admin: cannot connect to node {target}: {exc}")
                conn = None
        else:
            target = node if node is not None else c.node
            if target is None:
                raise ScenarioError(f"{command.client} has no coordinator; call discover() first")
            conn = self._connect(c, target)
        if conn is None:
            return None  # never sent: not in the history
        request, version = wire.encode(command, self.group_id, self.ids)
        rid = self._rid
        self._rid += 1
        step = self._next_step()
        at = self.now_ms()
        try:
            handle = conn.send(request, version)
        except ClientError as exc:
            self._say(f"{command.client}: send failed: {exc}")
            return None
        if self.recording:
            self.events.append(Invoke(step=step, at_ms=at, request_id=rid, command=command))
        conn.poller.wait([handle], self.request_timeout_s)
        if not handle.done or handle.error is not None:
            reason = handle.error or "timeout"
            self._say(f"{command.client}: {command.type} to node {target}: no answer ({reason})")
            conn.close()
            return None
        wire.learn_own_id(command, handle.response, self.ids)
        response = wire.decode(command, handle.response, self.ids)
        if self.recording:
            assert handle.received_at is not None
            self.events.append(
                Receive(
                    step=step,
                    at_ms=(handle.received_at - self._t0) * 1000.0,
                    request_id=rid,
                    response=response,
                )
            )
        self._say(f"{command.client}: {command.type} -> node {target}: {_short(response)}")
        if isinstance(response, m.FindCoordinatorResponse) and response.error == "NONE":
            raw = find_coordinator_result(handle.response, version)
            self.admin.brokers[raw.node_id] = (raw.host, raw.port)
            if c.node != raw.node_id and c.conn is not None:
                c.conn.close()
                c.conn = None
            c.node = raw.node_id
        return response

    def _any_running(self) -> int:
        stopped = self.nemesis.stopped if self.nemesis is not None else set()
        for node in sorted(self.admin.brokers):
            if node not in stopped:
                return node
        raise ScenarioError("no running broker to ask")

    def discover(self, client: str, *, deadline_s: float = 30.0) -> int:
        """FindCoordinator (through each running broker in turn) until one names a coordinator."""
        end = time.monotonic() + deadline_s
        stopped = self.nemesis.stopped if self.nemesis is not None else set()
        while True:
            for node in sorted(set(self.admin.brokers) - stopped):
                resp = self.call(
                    m.FindCoordinator(client=client, version=VERSIONS["FindCoordinator"]),
                    node=node,
                )
                if isinstance(resp, m.FindCoordinatorResponse) and resp.error == "NONE":
                    return resp.node_id
                if time.monotonic() > end:
                    raise ScenarioError(f"{client}: no coordinator found in {deadline_s} s")
            time.sleep(0.2)

    def until_answered(
        self, make: Callable[[], m.Request], *, deadline_s: float = 60.0
    ) -> m.Response:
        """Send, and on silence or a routing error rediscover and resend, like a consumer does;
        returns the first answer that is not a routing error."""
        end = time.monotonic() + deadline_s
        backoff = 0.1
        while True:
            command = make()
            if self.coordinator_of(command.client) is None:
                self.discover(command.client, deadline_s=max(1.0, end - time.monotonic()))
            resp = self.call(command)
            error = getattr(resp, "error", None)
            if isinstance(resp, m.OffsetCommitResponse) and resp.partitions:
                error = resp.partitions[0].error
            if resp is not None and error not in ROUTING_ERRORS:
                return resp
            if time.monotonic() > end:
                raise ScenarioError(
                    f"{command.client}: {command.type} got no usable answer in {deadline_s} s "
                    f"(last: {resp})"
                )
            time.sleep(backoff)
            backoff = min(1.0, backoff * 2)
            self.discover(command.client, deadline_s=max(1.0, end - time.monotonic()))

    def fault(self, action: str, node: int) -> Fault:
        """A nemesis action as the next step of the history."""
        if self.nemesis is None:
            raise ScenarioError("this driver has no nemesis")
        self._say(f"nemesis: {action} node {node}")
        fault = self.nemesis.act(action, node, step=self._next_step())
        fault = Fault(step=fault.step, at_ms=self.now_ms(), action=action, node=node)
        if self.recording:
            self.events.append(fault)
        return fault

    # ------------------------------------------------------------------ group setup
    def form_group(
        self,
        clients: Sequence[str],
        *,
        session_timeout_ms: int = 30_000,
        protocol: str = "range",
        attempts: int = 20,
    ) -> GroupRecord:
        """Join ``clients`` into one Stable generation (JoinGroup with the KIP-394 member-id
        handshake, then SyncGroup with an assignment from the leader) and return the group as the
        coordinator persisted it on the leader's SyncGroup."""
        member: dict[str, str] = {c: m.UNKNOWN_MEMBER_ID for c in clients}
        for _attempt in range(attempts):
            # a fresh __consumer_offsets partition may still be loading: find it (again)
            coordinator = self.discover(clients[0])
            for c in clients:
                self._client(c).node = coordinator
            joined = self._join_all(clients, member, session_timeout_ms, protocol)
            if joined is None:
                continue
            generation, leader, protocol_name = joined
            assignments = {member[c]: f"assignment-of-{member[c]}" for c in clients}
            if self._sync_all(clients, member, generation, leader, assignments):
                # not always "<client>-1": a retried handshake gives the client a new member id
                self.member_ids = dict(member)
                return GroupRecord(
                    generation_id=generation,
                    protocol_type="consumer",
                    protocol_name=protocol_name,
                    leader=leader,
                    members=tuple(
                        PersistedMember(
                            member_id=member[c],
                            assignment=assignments[member[c]],
                            session_timeout_ms=session_timeout_ms,
                            rebalance_timeout_ms=session_timeout_ms,
                        )
                        for c in sorted(clients, key=lambda c: member[c])
                    ),
                )
        raise ScenarioError(f"could not form a Stable group of {list(clients)} in {attempts} tries")

    def _send_all(self, commands: Sequence[m.Request]) -> dict[str, Any]:
        """Send concurrently (a JoinGroup waits for the others), return raw answers by client."""
        handles = {}
        for command in commands:
            c = self._client(command.client)
            assert c.node is not None
            conn = self._connect(c, c.node)
            if conn is None:
                raise ScenarioError(f"{command.client}: cannot reach coordinator {c.node}")
            request, version = wire.encode(command, self.group_id, self.ids)
            handles[command.client] = (command, conn.send(request, version))
        # longer than the 30 s rebalance timeout form_group uses, so a join that completes at the
        # timeout (a member counted late on a loaded machine) is still seen
        self.admin.poller.wait([h for _, h in handles.values()], 45.0)
        out = {}
        for client, (command, h) in handles.items():
            if not h.done or h.error is not None:
                raise ScenarioError(f"{client}: {command.type} got no answer: {h.error}")
            wire.learn_own_id(command, h.response, self.ids)
            out[client] = (command, h.response)
        return {c: wire.decode(cmd, raw, self.ids) for c, (cmd, raw) in out.items()}

    def _join_all(
        self, clients: Sequence[str], member: dict[str, str], session_ms: int, protocol: str
    ) -> tuple[int, str, str | None] | None:
        def join(c: str) -> m.JoinGroup:
            return m.JoinGroup(
                client=c,
                member_id=member[c],
                session_timeout_ms=session_ms,
                rebalance_timeout_ms=session_ms,
                # a real consumer subscription: "consumer" metadata that does not parse makes
                # Kafka's join completion fail silently (tests/findings/test_consumer_metadata.py)
                protocols=(m.Protocol(name=protocol, metadata='{"topics": []}'),),
                version=VERSIONS["JoinGroup"],
            )

        answers = self._send_all([join(c) for c in clients if member[c] == m.UNKNOWN_MEMBER_ID])
        for c, r in answers.items():
            assert isinstance(r, m.JoinGroupResponse)
            if r.error in ROUTING_ERRORS:
                self._say(f"{c}: JoinGroup answered {r.error}; retrying")
                time.sleep(0.5)
                return None
            if r.error not in ("MEMBER_ID_REQUIRED", "NONE"):
                raise ScenarioError(f"{c}: JoinGroup answered {r.error}")
            member[c] = r.member_id
        answers = self._send_all([join(c) for c in clients])
        generations = set()
        leader = ""
        protocol_name: str | None = None
        for c, r in answers.items():
            assert isinstance(r, m.JoinGroupResponse)
            if r.error != "NONE":
                self._say(f"{c}: JoinGroup answered {r.error}; retrying")
                if r.error == "UNKNOWN_MEMBER_ID":
                    # the coordinator dropped the member (e.g. its pending join outlived the
                    # session): retrying with the same id can only be refused again, so every
                    # client starts over with the member-id handshake
                    for k in clients:
                        member[k] = m.UNKNOWN_MEMBER_ID
                time.sleep(0.5)
                return None
            generations.add(r.generation_id)
            leader = r.leader
            protocol_name = r.protocol_name
        if len(generations) != 1:
            return None
        return generations.pop(), leader, protocol_name

    def _sync_all(
        self,
        clients: Sequence[str],
        member: dict[str, str],
        generation: int,
        leader: str,
        assignments: dict[str, str],
    ) -> bool:
        commands = [
            m.SyncGroup(
                client=c,
                member_id=member[c],
                generation_id=generation,
                assignments=tuple(
                    m.Assignment(member_id=mid, assignment=a)
                    for mid, a in sorted(assignments.items())
                )
                if member[c] == leader
                else (),
                version=VERSIONS["SyncGroup"],
            )
            for c in clients
        ]
        answers = self._send_all(commands)
        return all(getattr(r, "error", None) == "NONE" for r in answers.values())

    # ------------------------------------------------------------------ replay
    def replay(self, events: Sequence[Event]) -> list[Event]:
        """Re-send a recorded history's requests and re-inject its faults, each at its recorded
        step, so the new history has the same faults at the same steps. Clients start on the
        group's current coordinator (asked without recording); answers are whatever the cluster
        says now."""
        self.events = []
        self.recording = True
        start = self.admin.find_coordinator(self.group_id).node_id
        for e in events:
            if isinstance(e, Invoke):
                c = self._client(e.command.client)
                c.node = c.node if c.node is not None else start
        for e in events:
            if isinstance(e, Fault | Invoke):
                self._step = max(self._step, e.step)
            if isinstance(e, Fault):
                self.fault(e.action, e.node)
            elif isinstance(e, Invoke):
                self.call(e.command)
        return self.events


def _short(response: m.Response) -> str:
    text = repr(response)
    return text if len(text) <= 160 else text[:157] + "..."
