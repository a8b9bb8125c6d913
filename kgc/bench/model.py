"""``kgc bench model``: checker + model throughput on a 10-member classic group, and beside it on
a 4-member KIP-848 consumer group.

A seeded random client policy drives ten clients against the model (joins with the KIP-394
handshake, the leader's and followers' SyncGroups, heartbeats, commits, fetches, describes,
occasional rejoins with new metadata and leaves, pauses that let sessions expire now and then);
``kgc.model.classic.generate`` turns the command list into the history a conforming broker would
produce; then the timed part feeds that history through ``Checker`` (default tolerance windows, so
timers near a deadline branch) on one core. A *step* is one history event folded by the checker.

Keys: ``steps_per_s`` (events per CPU second of the checker on one core), ``steps_per_wall_s``,
``steps``, ``commands``, ``check_cpu_s``, ``check_wall_s``, ``states_max`` / ``states_mean``
(size of the checker's state set after each event), ``profile``, ``seed``,
``target_steps_per_s``, ``load_avg_1m`` and ``cpus`` (how busy the machine was: on a shared
2-core box under load the same code runs several times slower). The consumer group's figures carry
the prefix ``consumer_`` (``consumer_steps_per_s`` …): four consumers on one 4-partition topic
joining, heartbeating with what they own, leaving, describing and pausing past their sessions;
its uniform assignor keeps every target the assignor may choose, so its state sets are larger.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Any

from kgc.model import KAFKA_4_X, ClassicGroupModel, GroupConfig, GroupState
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.classic.generate import generate
from kgc.model.commands import (
    Assignment,
    Command,
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    SyncGroup,
    Tick,
    TopicPartition,
    TopicPartitionOffset,
)

TARGET_STEPS_PER_S = 50_000
MEMBERS = 10


def _policy_commands(model: ClassicGroupModel, n_steps: int, rng: random.Random) -> list[Command]:
    """A plausible command mix, decided against a shadow run of the model (first outcome)."""
    clients = [f"c{i}" for i in range(1, MEMBERS + 1)]
    own: dict[str, str] = {}  # client -> member id it knows
    state: GroupState = model.initial()
    t = 0.0
    rid = 0
    out: list[Command] = []
    metadata = {c: "m" for c in clients}

    def run(cmd: Command) -> None:
        nonlocal state, t, rid
        out.append(cmd)
        if isinstance(cmd, Tick):
            t += cmd.ms
            state = model.advance(state, must_until=t, may_until=t)[0]
            return
        rid += 1
        state = model.invoke(state, request_id=rid, command=cmd, at_ms=t)[0]
        t += 1
        state = model.advance(state, must_until=t, may_until=t)[0]
        for r, (resp, _) in model.outbox(state).items():
            if r == rid and isinstance(cmd, JoinGroup) and resp.member_id:  # type: ignore[union-attr]
                own[cmd.client] = resp.member_id  # type: ignore[union-attr]
            state = model.deliver(state, r)

    def join(c: str) -> JoinGroup:
        return JoinGroup(
            client=c,
            member_id=own.get(c, "")
            if state.member(own.get(c, ""))
            or own.get(c, "") in {p.member_id for p in state.pending_members}
            else "",
            session_timeout_ms=rng.choice([3_000, 6_000, 10_000]),
            rebalance_timeout_ms=5_000,
            protocols=(Protocol(name="range", metadata=metadata[c]),),
            version=rng.choice([4, 5, 7, 9]),
        )

    while len(out) < n_steps:
        c = rng.choice(clients)
        mid = own.get(c, "")
        member = state.member(mid) if mid else None
        roll = rng.random()
        if member is None or state.state == "PreparingRebalance" and member.awaiting_join is None:
            run(join(c))
        elif state.state == "CompletingRebalance" and member.awaiting_sync is None and roll < 0.8:
            assignments = ()
            if state.leader_id == mid:
                assignments = tuple(
                    Assignment(member_id=m.member_id, assignment=f"p{i}")
                    for i, m in enumerate(state.members)
                )
            run(
                SyncGroup(
                    client=c,
                    member_id=mid,
                    generation_id=state.generation_id,
                    assignments=assignments,
                    version=3,
                )
            )
        elif roll < 0.55:
            run(Heartbeat(client=c, member_id=mid, generation_id=state.generation_id, version=3))
        elif roll < 0.70:
            offsets = (
                TopicPartitionOffset(
                    topic="t", partition=rng.randrange(10), offset=rng.randrange(1000)
                ),
            )
            run(
                OffsetCommit(
                    client=c,
                    member_id=mid,
                    generation_id=state.generation_id,
                    offsets=offsets,
                    version=8,
                )
            )
        elif roll < 0.76:
            run(
                OffsetFetch(
                    client=c,
                    partitions=(TopicPartition(topic="t", partition=rng.randrange(10)),),
                    version=6,
                )
            )
        elif roll < 0.80:
            run(DescribeGroups(client=c, version=5))
        elif roll < 0.82:
            metadata[c] = f"m{rng.randrange(3)}"  # new subscription: rebalance
            run(join(c))
        elif roll < 0.83:
            run(LeaveGroup(client=c, members=(MemberIdentity(member_id=mid),), version=3))
            own.pop(c, None)
        elif roll < 0.995:
            run(Tick(ms=rng.choice([5, 20, 100, 400])))
        else:
            run(Tick(ms=rng.choice([4_000, 8_000])))  # long pause: some sessions expire
    return out


CONSUMERS = 4
CONSUMER_PARTITIONS = 4


def _consumer_commands(model: Any, n_steps: int, rng: random.Random) -> list[Command]:
    """A consumer-protocol command mix, decided against a shadow run of the model."""
    from kgc.model.commands import ConsumerGroupDescribe, ConsumerGroupHeartbeat

    clients = [f"c{i}" for i in range(1, CONSUMERS + 1)]
    epoch = dict.fromkeys(clients, 0)
    owned: dict[str, tuple[TopicPartition, ...]] = dict.fromkeys(clients, ())
    state = model.initial()
    t = 0.0
    rid = 0
    out: list[Command] = []

    def run(cmd: Command) -> None:
        nonlocal state, t, rid
        out.append(cmd)
        if isinstance(cmd, Tick):
            t += cmd.ms
            state = model.advance(state, must_until=t, may_until=t)[0]
            return
        rid += 1
        state = model.invoke(state, request_id=rid, command=cmd, at_ms=t)[0]
        t += 1
        state = model.advance(state, must_until=t, may_until=t)[0]
        for r, (resp, _) in model.outbox(state).items():
            if r == rid and isinstance(cmd, ConsumerGroupHeartbeat):
                if resp.error != "NONE" or cmd.member_epoch < 0:
                    epoch[cmd.client], owned[cmd.client] = 0, ()
                else:
                    epoch[cmd.client] = resp.member_epoch
                    if resp.assignment is not None:
                        owned[cmd.client] = resp.assignment
            state = model.deliver(state, r)

    while len(out) < n_steps:
        c = rng.choice(clients)
        roll = rng.random()
        if epoch[c] == 0:
            run(
                ConsumerGroupHeartbeat(
                    client=c,
                    member_id=f"{c}-1",
                    member_epoch=0,
                    rebalance_timeout_ms=5_000,
                    subscribed_topic_names=("t",),
                    topic_partitions=(),
                    version=1,
                )
            )
        elif roll < 0.80:
            run(
                ConsumerGroupHeartbeat(
                    client=c,
                    member_id=f"{c}-1",
                    member_epoch=epoch[c],
                    topic_partitions=owned[c],
                    version=1,
                )
            )
        elif roll < 0.85:
            run(ConsumerGroupDescribe(client=c, version=1))
        elif roll < 0.87:
            run(ConsumerGroupHeartbeat(client=c, member_id=f"{c}-1", member_epoch=-1, version=1))
        elif roll < 0.995:
            run(Tick(ms=rng.choice([5, 20, 100, 400])))
        else:
            run(Tick(ms=rng.choice([4_000, 8_000])))  # long pause: sessions expire
    return out


def _check(model: Any, history: list[Any]) -> tuple[float, float, list[int]]:
    checker = Checker(model, CheckerConfig())
    sizes: list[int] = []
    start = time.perf_counter()
    cpu_start = time.process_time()
    for event in history:
        if checker.feed(event) is not None:
            raise RuntimeError(f"the model diverged from its own history: {checker.divergence}")
        sizes.append(len(checker.states))
    return time.process_time() - cpu_start, time.perf_counter() - start, sizes


def _consumer(quick: bool, seed: int) -> dict[str, Any]:
    from kgc.model.consumer.group import ConsumerGroupConfig, ConsumerGroupModel

    model = ConsumerGroupModel(
        ConsumerGroupConfig(
            topics=(("t", CONSUMER_PARTITIONS),),
            session_timeout_ms=3_000,
            heartbeat_interval_ms=500,
        )
    )
    n_commands = 1_000 if quick else 5_000
    commands = _consumer_commands(model, n_commands, random.Random(seed))
    history = generate(model, commands).events  # type: ignore[arg-type]
    print(f"bench model: checking {len(history)} consumer-group events", file=sys.stderr)
    cpu, wall, sizes = _check(model, history)
    return {
        "consumer_members": CONSUMERS,
        "consumer_commands": len(commands),
        "consumer_steps": len(history),
        "consumer_check_cpu_s": round(cpu, 3),
        "consumer_steps_per_s": round(len(history) / cpu, 1),
        "consumer_states_max": max(sizes),
        "consumer_states_mean": round(sum(sizes) / len(sizes), 3),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    quick = bool(getattr(args, "quick", False))
    n_commands = 3_000 if quick else 20_000
    seed = 20251121
    rng = random.Random(seed)
    config = GroupConfig(
        profile=KAFKA_4_X,
        group_min_session_timeout_ms=500,
        group_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=1,
    )
    model = ClassicGroupModel(config)
    print(f"bench model: generating {n_commands} commands for {MEMBERS} clients", file=sys.stderr)
    commands = _policy_commands(model, n_commands, rng)
    history = generate(model, commands).events
    print(f"bench model: checking {len(history)} events", file=sys.stderr)
    cpu, elapsed, sizes = _check(model, history)
    consumer = _consumer(quick, seed)
    return {
        "profile": config.profile.name,
        "seed": seed,
        "members": MEMBERS,
        "commands": len(commands),
        "steps": len(history),
        "check_wall_s": round(elapsed, 3),
        "check_cpu_s": round(cpu, 3),
        # one core: the checker is single-threaded, so CPU time is its time on one core; wall
        # time also counts waiting for the core on a shared machine.
        "steps_per_s": round(len(history) / cpu, 1),
        "steps_per_wall_s": round(len(history) / elapsed, 1),
        "states_max": max(sizes),
        "states_mean": round(sum(sizes) / len(sizes), 3),
        "target_steps_per_s": TARGET_STEPS_PER_S,
        # the machine is shared: the 1-minute load average says how contended the run was
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        **consumer,
    }
