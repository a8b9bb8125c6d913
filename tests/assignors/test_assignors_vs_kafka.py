"""The model's client assignors against Kafka's own (kafka-clients jar, run by
``KafkaAssignorHarness.java``) on seeded random inputs: subscriptions (some empty), owned
partitions, generations and double claims.

Kafka iterates ``HashMap``s whose order the model replaces by sorted order; member ids
``m0``..``m5`` and topics ``t0``..``t2`` hash to consecutive buckets, so Kafka's iteration order
*is* sorted here and the results must be equal, partition for partition (or both fail: where
Kafka throws, the model raises ``AssignorError``). Needs Java and Kafka's jars (the ones the
embedded broker uses, resolved by ``kgc.conformance.artifacts.maven``), hence the ``broker`` marker.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from kgc.model.assignors import ASSIGNORS, AssignorError, Subscription, TopicPartition

pytestmark = pytest.mark.broker

HARNESS = Path(__file__).with_name("KafkaAssignorHarness.java")
CASES_PER_ASSIGNOR = 300
CLIENT_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")


def random_case(
    rng: random.Random, stateful: bool
) -> tuple[dict[str, int], dict[str, Subscription]]:
    topics = [f"t{i}" for i in range(rng.randint(1, 3))]
    counts = {t: rng.randint(1, 6) for t in topics}
    members = [f"m{i}" for i in range(rng.randint(1, 6))]
    chosen = {
        m: tuple(t for t in topics if rng.random() < 0.6) if rng.random() < 0.9 else ()
        for m in members
    }
    if rng.random() < 0.5:  # often everyone subscribes alike (the constrained builder)
        same = tuple(topics)
        chosen = {m: same for m in members}
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    if stateful:
        for t, n in counts.items():
            for p in range(n):
                if rng.random() < 0.7:
                    owned[rng.choice(members)].append(TopicPartition(t, p))
        if rng.random() < 0.2 and len(members) > 1:  # a double claim
            a, b = rng.sample(members, 2)
            if owned[a]:
                owned[b].append(owned[a][0])
    generations = {m: (rng.choice((1, 1, 1, 2)) if owned[m] else None) for m in members}
    subs = {
        m: Subscription(
            topics=chosen[m],
            owned_partitions=tuple(sorted(set(owned[m]))),
            generation_id=generations[m],
        )
        for m in members
    }
    return counts, subs


def to_line(name: str, counts: dict[str, int], subs: dict[str, Subscription]) -> str:
    fields = [name, ",".join(f"{t}:{n}" for t, n in counts.items())]
    for m, s in subs.items():
        owned = ";".join(str(tp) for tp in s.owned_partitions)
        gen = "" if s.generation_id is None else str(s.generation_id)
        fields.append(f"{m}:{';'.join(s.topics)}:{owned}:{gen}")
    return "|".join(fields)


def model_line(name: str, counts: dict[str, int], subs: dict[str, Subscription]) -> str:
    try:
        result = ASSIGNORS[name].function(counts, subs)
    except AssignorError:
        return "ERROR"
    return "|".join(f"{m}={','.join(sorted(str(tp) for tp in result[m]))}" for m in sorted(result))


def test_model_client_assignors_equal_kafkas() -> None:
    from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, find_java, resolve_kafka

    libs = resolve_kafka(DEFAULT_KAFKA_VERSION)
    rng = random.Random(20261121)
    cases = []
    for name in CLIENT_ASSIGNORS:
        for _ in range(CASES_PER_ASSIGNOR):
            counts, subs = random_case(rng, stateful=name in ("sticky", "cooperative-sticky"))
            cases.append((name, counts, subs))
    stdin = "".join(to_line(*c) + "\n" for c in cases)
    run = subprocess.run(
        [find_java(), "-cp", f"{libs}/*", str(HARNESS)],
        input=stdin, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    # Kafka's own log lines may share stdout: results are the lines marked RESULT.
    kafka = [
        "ERROR" if line.startswith("RESULT ERROR") else line[7:]
        for line in run.stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    assert len(kafka) == len(cases), run.stderr[-2000:]
    mismatches = [
        f"{to_line(*c)}\n  kafka: {k}\n  model: {model_line(*c)}"
        for c, k in zip(cases, kafka, strict=True)
        if k != model_line(*c)
    ]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ:\n" + "\n".join(
        mismatches[:5]
    )
