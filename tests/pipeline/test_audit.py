"""``kgc audit``: group records of ``__consumer_offsets`` decoded with Kafka's own schemas (from the
genuine kafka-group-coordinator jar) and checked group by group.

One test per anomaly on small hand-built record sequences, a Spark run over a dump file, and a
real broker: a clean cluster passes, and a record planted with a generation going backwards is
found with its group, generation, partition and offset.
"""

from __future__ import annotations

import json
import time

import pytest
from kgc.pipeline import audit

PLANTED = "audit-planted"  # every group this file plants a bad record for carries this in its name


@pytest.fixture(scope="module")
def jar():
    return audit.schema_jar()


def _rec(jar, offset, *, group="kgc-g", partition=3, tombstone=False, **value):
    key, val = (
        audit.encode_group_metadata(jar, group=group, **value)
        if not tombstone
        else (audit.encode_group_metadata(jar, group=group, generation=0)[0], None)
    )
    d = audit.decode_record(jar, key, val)
    d.update(partition=partition, offset=offset)
    return d


def _member(member_id, partitions=None, instance=None):
    m = {"member_id": member_id, "group_instance_id": instance}
    if partitions is not None:
        m["assignment"] = audit.encode_consumer_assignment(partitions)
    return m


def _checks(result):
    return [(v["check"], v["generation"], v["offset"]) for v in result["violations"]]


def test_records_round_trip_through_kafkas_schemas(jar):
    key, value = audit.encode_group_metadata(
        jar,
        group="kgc-x",
        generation=4,
        protocol="range",
        leader="m1",
        members=[_member("m1", {"t": [0, 2]}, instance="i1")],
        value_version=4,
    )
    d = audit.decode_record(jar, key, value)
    assert (d["record"], d["group"], d["generation"], d["leader"], d["value_version"]) == (
        "group_metadata",
        "kgc-x",
        4,
        "m1",
        4,
    )
    assert d["members"][0]["group_instance_id"] == "i1"
    assert d["members"][0]["assignment"] == [
        {"topic": "t", "partition": 0},
        {"topic": "t", "partition": 2},
    ]
    assert audit.decode_record(jar, key, value[:-3])["decode_error"]  # truncated: reported


def test_a_clean_history_has_no_violation(jar):
    recs = [
        _rec(jar, 10, generation=0, protocol_type=""),  # created empty
        _rec(
            jar,
            12,
            generation=1,
            protocol="range",
            leader="a",
            members=[_member("a", {"t": [0, 1]}), _member("b", {"t": [2]})],
        ),
        _rec(jar, 15, generation=2, protocol="range"),  # everyone left: empty
    ]
    result = audit.audit_group(recs)
    assert result["violations"] == []
    assert (result["first_generation"], result["last_generation"]) == (0, 2)


def test_generation_going_backwards_is_reported_at_its_offset(jar):
    # generation 5 then 4: the coordinator never hands out an older generation
    result = audit.audit_group([_rec(jar, 7, generation=5), _rec(jar, 9, generation=4)])
    assert _checks(result) == [("generation_order", 4, 9)]


def test_the_same_generation_written_twice_is_reported(jar):
    a = [_member("a", {"t": [0]})]
    result = audit.audit_group(
        [
            _rec(jar, 1, generation=3, leader="a", members=a),
            _rec(jar, 2, generation=3, leader="b", members=[_member("b")]),
        ]
    )
    assert _checks(result) == [("generation_order", 3, 2)]


def test_a_static_member_replacing_itself_keeps_the_generation(jar):
    # updateStaticMemberThenRebalanceOrCompleteJoin: same generation, new member id, same instance
    old = [_member("s-1", {"t": [0]}, instance="i1")]
    new = [_member("s-2", {"t": [0]}, instance="i1")]
    result = audit.audit_group(
        [
            _rec(jar, 1, generation=3, protocol="range", leader="s-1", members=old),
            _rec(jar, 2, generation=3, protocol="range", leader="s-2", members=new),
        ]
    )
    assert result["violations"] == []


def test_a_tombstone_starts_the_group_afresh(jar):
    result = audit.audit_group(
        [_rec(jar, 1, generation=7), _rec(jar, 2, tombstone=True), _rec(jar, 3, generation=0)]
    )
    assert result["violations"] == [] and result["tombstones"] == 1


def test_a_leader_that_is_not_a_member_is_reported(jar):
    result = audit.audit_group([_rec(jar, 4, generation=2, leader="ghost", members=[_member("a")])])
    assert _checks(result) == [("leader_is_member", 2, 4)]


def test_overlapping_assignments_are_reported(jar):
    members = [_member("a", {"t": [0, 1]}), _member("b", {"t": [1, 2]})]
    result = audit.audit_group([_rec(jar, 6, generation=1, leader="a", members=members)])
    assert _checks(result) == [("assignments_disjoint", 1, 6)]
    assert "t-1" in result["violations"][0]["message"]


def test_opaque_assignments_are_counted_not_judged(jar):
    members = [{"member_id": "a", "assignment": b"t-0"}, {"member_id": "b", "assignment": b"t-0"}]
    result = audit.audit_group([_rec(jar, 6, generation=1, leader="a", members=members)])
    assert result["violations"] == [] and result["opaque_assignments"] == 2


@pytest.mark.spark
def test_audit_of_a_dump_file_in_spark(spark, jar, tmp_path):
    lines = []

    def add(partition, offset, key, value):
        lines.append(json.dumps(audit.dump_line(partition, offset, 0, key, value)))

    for offset, gen in ((0, 0), (1, 1), (2, 2)):  # a clean group in partition 0
        add(0, offset, *audit.encode_group_metadata(jar, group="kgc-clean", generation=gen))
    for offset, gen in ((0, 3), (1, 2)):  # planted: backwards, partition 1
        add(1, offset, *audit.encode_group_metadata(jar, group=f"kgc-{PLANTED}", generation=gen))
    add(1, 2, b"\x00\x09junk", b"")  # a record type this audit does not know: counted only
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(lines) + "\n")
    result = audit.audit(spark, audit.read_dump(spark, str(dump)), jar)
    assert result["records"] == 6 and result["groups"] == 2
    assert result["records_by_type"] == {"group_metadata": 5, "type 9": 1}
    assert [
        (v["group"], v["generation"], v["partition"], v["offset"]) for v in result["violations"]
    ] == [(f"kgc-{PLANTED}", 2, 1, 1)]


# ------------------------------------------------------------------------------- real broker


def _form_group(bootstrap, group_id, topic):
    """A real consumer joins, gets its partitions, and leaves: the coordinator writes the group's
    records (created, generation with the assignment, empty again)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group_id,
        client_id=group_id,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        enable_auto_commit=False,
    )
    try:
        deadline = time.monotonic() + 60
        # the leader assigns only partitions it has metadata for: learn the new topic first
        while not consumer.partitions_for_topic(topic):
            assert time.monotonic() < deadline, f"no metadata for {topic}"
            time.sleep(0.2)
        consumer.subscribe([topic])
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the consumer never got an assignment"
            consumer.poll(timeout_ms=200)
    finally:
        consumer.close()


def _plant(client, group_id, key, value):
    """Produce one record into __consumer_offsets as Kafka's admin client id (KafkaApis lets
    ``__admin_client`` write internal topics); returns (partition, offset)."""
    from kafka.protocol.producer.produce import ProduceRequest
    from kafka.record import MemoryRecordsBuilder
    from kgc.model.coordinator import partition_for

    leaders = client.partition_leaders("__consumer_offsets")
    partition = partition_for(group_id, len(leaders))
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.append(timestamp=int(time.time() * 1000), key=key, value=value, headers=[])
    builder.close()
    topic = ProduceRequest.TopicProduceData
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=10000,
        topic_data=[
            topic(
                name="__consumer_offsets",
                partition_data=[
                    topic.PartitionProduceData(index=partition, records=builder.buffer())
                ],
            )
        ],
    )
    conn = client.open(leaders[partition], "__admin_client")
    try:
        resp = conn.request(request, 9)
    finally:
        conn.close()
    (pr,) = resp.responses[0].partition_responses
    assert pr.error_code == 0, f"the broker refused the planted record: error {pr.error_code}"
    return partition, pr.base_offset


@pytest.mark.spark
@pytest.mark.broker
def test_a_real_clean_cluster_passes(spark, jar, kgc_broker, kgc_client, kgc_group_id, kgc_topic):
    kgc_client.create_topic(kgc_topic, 3)
    _form_group(kgc_broker.bootstrap_servers, kgc_group_id, kgc_topic)
    result = audit.audit(spark, audit.read_cluster(spark, kgc_broker.bootstrap_servers), jar)
    (ours,) = [g for g in result["group_summaries"] if g["group"] == kgc_group_id]
    assert ours["group_metadata"] >= 2 and ours["first_generation"] < ours["last_generation"]
    # the planting test writes into a broker of its own, so the session broker has no violation
    assert result["violations"] == []
    assert result["decode_errors"] == []


@pytest.fixture
def own_broker(kgc_broker):
    """A broker of the planting test's own, of the session broker's version and mode.

    A record written straight into ``__consumer_offsets`` puts the coordinator's state machine
    one offset behind its log. Kafka 4.x's ``CoordinatorRuntime`` notices at the partition's next
    write ("The state machine of the coordinator … is out of sync with the underlying log") and
    reloads the partition, answering COORDINATOR_LOAD_IN_PROGRESS meanwhile to every group on it.
    On the shared session broker that reached unrelated tests minutes later (three CI runs, a
    different test each time), so the planted record goes into a cluster nothing else uses."""
    from kgc.conformance.brokers.embedded import EmbeddedKafka
    from kgc.conformance.wire.client import Cluster

    d = kgc_broker.describe()
    with EmbeddedKafka(version=d["version"], mode=d["mode"]) as broker:
        client = Cluster(broker.bootstrap_servers, client_id="kgc-test")
        try:
            yield broker, client
        finally:
            client.close()
            client.poller.close()


@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.faults  # writes into the cluster's __consumer_offsets: only on a broker kgc started
def test_a_planted_generation_going_backwards_is_found(spark, jar, own_broker, kgc_topic):
    broker, client = own_broker
    group_id = f"{kgc_topic}-{PLANTED}"
    client.create_topic(kgc_topic, 3)
    _form_group(broker.bootstrap_servers, group_id, kgc_topic)
    before = audit.audit(
        spark, audit.read_cluster(spark, broker.bootstrap_servers), jar, group_prefix=group_id
    )
    (g,) = before["group_summaries"]
    assert g["violations"] == []
    stale = g["last_generation"] - 1
    key, value = audit.encode_group_metadata(
        jar,
        group=group_id,
        generation=stale,
        protocol="range",
        leader="m-1",
        members=[_member("m-1", {kgc_topic: [0, 1, 2]})],
    )
    partition, offset = _plant(client, group_id, key, value)
    after = audit.audit(
        spark, audit.read_cluster(spark, broker.bootstrap_servers), jar, group_prefix=group_id
    )
    assert [
        (v["group"], v["generation"], v["partition"], v["offset"], v["check"])
        for v in after["violations"]
    ] == [(group_id, stale, partition, offset, "generation_order")]
