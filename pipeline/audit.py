"""``kgc audit``: check a cluster's ``__consumer_offsets`` group history, group by group, on Spark.

Records of ``__consumer_offsets`` (the classic coordinator's log) are decoded with kafka-python's
message framework from Kafka's own JSON schemas — ``GroupMetadataKey``/``GroupMetadataValue``
and ``OffsetCommitKey``/``OffsetCommitValue`` in
``group-coordinator/src/main/resources/common/message/`` — loaded at run time from the genuine
``kafka-group-coordinator`` jar (Maven Central, the same cache the embedded broker uses). A record
is an int16 key version (the record type: 0/1 offset commit, 2 group metadata; higher ones belong
to KIP-848 groups and are only counted), the key, then an int16 value version and the value; a
null value is a tombstone.

Per group, in log order (a group's records all live in one partition), the fold checks:

* generations increase: a ``GroupMetadataValue`` never carries a generation below the previous one
  for that group. An *equal* generation is a violation too, except where Kafka legitimately
  rewrites the current generation: a static member re-joining replaces its old member id in place
  (4.x ``GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin``, 3.9
  ``GroupCoordinator.updateStaticMemberAndRebalance``) — same protocol, same group instance ids,
  only static members' ids changed. A tombstone (group deleted) starts the history afresh.
* the leader is a member: a record naming a leader lists that member id among its members;
* assignments are disjoint: for ``protocol_type`` ``consumer``, no topic-partition is assigned
  to two members (``ConsumerProtocolAssignment``, ``clients/src/main/resources/common/message``).
  Assignments that do not decode as one (opaque bytes) are counted, not judged.

Each violation names the group, the generation, and the record's partition and offset.

Sources: a running cluster, read by Spark tasks (one per ``__consumer_offsets`` partition) with
kafka-python's consumer; or a dump file (JSON lines ``{"partition", "offset", "timestamp", "key",
"value"}``, bytes base64, ``value`` null for tombstones), which ``--save-dump`` writes. Spark's own
Kafka source (``spark-sql-kafka-0-10``) is not used: its dependency
``spark-token-provider-kafka-0-10`` for our Spark version is not resolvable from Maven Central here.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

TOPIC = "__consumer_offsets"
SCHEMA_NAMES = ("GroupMetadataKey", "GroupMetadataValue", "OffsetCommitKey", "OffsetCommitValue")
GROUP_METADATA_KEY = 2
OFFSET_COMMIT_KEYS = (0, 1)
FETCH_BATCH = 2000


class AuditError(Exception):
    """Bad input for an audit (message names the fix)."""


# ------------------------------------------------------------------------------------ schemas


def schema_jar(kafka_version: str | None = None) -> str:
    """Path of the ``kafka-group-coordinator`` jar of ``kafka_version`` (resolved if needed)."""
    from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, resolve_kafka

    libs = resolve_kafka(kafka_version or DEFAULT_KAFKA_VERSION)
    jars = sorted(Path(libs).glob("kafka-group-coordinator-[0-9]*.jar"))
    if not jars:
        raise AuditError(
            f"no kafka-group-coordinator jar in {libs}; re-fetch with kgc broker fetch"
        )
    return str(jars[0])


_COMMENTS = re.compile(r"(?m)((?:^\s*//.*\n?)+)")
_STRUCTS: dict[tuple[str, str], Any] = {}
_FLEXIBLE: dict[int, tuple[int, int] | None] = {}  # id(struct) -> flexibleVersions


def load_schema(jar: str, name: str) -> Any:
    """kafka-python ``StructField`` for Kafka's ``common/message/<name>.json`` inside ``jar``."""
    key = (jar, name)
    if key not in _STRUCTS:
        from kafka.protocol.data_container import DataContainer
        from kafka.protocol.schemas import StructField
        from kafka.protocol.schemas.load_json import _resolve_common_structs

        with zipfile.ZipFile(jar) as z:
            text = z.read(f"common/message/{name}.json").decode("utf-8")
        spec = json.loads(_COMMENTS.sub("", text))  # the JSON specs carry // comments
        common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
        if common:
            _resolve_common_structs(spec.get("fields", []), common)
        struct = StructField(spec)
        struct.set_data_class(type(name, (DataContainer,), {"_struct": struct}))
        _FLEXIBLE[id(struct)] = _versions(spec.get("flexibleVersions", "none"))
        _STRUCTS[key] = struct
    return _STRUCTS[key]


def _versions(text: str) -> tuple[int, int] | None:
    if text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), 32767
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def _flexible(struct: Any, version: int) -> bool:
    versions = _FLEXIBLE[id(struct)]
    return versions is not None and versions[0] <= version <= versions[1]


def _decode(struct: Any, data: bytes, version: int) -> Any:
    flex = _flexible(struct, version)
    buf = io.BytesIO(data)
    out = struct.decode(buf, version=version, compact=flex, tagged=flex)
    if buf.tell() != len(data):
        raise ValueError(f"{len(data) - buf.tell()} bytes left over after {struct.name} v{version}")
    return out


def _encode(struct: Any, value: Any, version: int) -> bytes:
    flex = _flexible(struct, version)
    return bytes(struct.encode(value, version=version, compact=flex, tagged=flex))


def _int16(data: bytes) -> int:
    return int.from_bytes(data[:2], "big", signed=True)


def encode_group_metadata(
    jar: str,
    *,
    group: str,
    generation: int,
    protocol_type: str = "consumer",
    protocol: str | None = None,
    leader: str | None = None,
    members: Sequence[Mapping[str, Any]] = (),
    value_version: int = 3,
    current_state_timestamp: int = -1,
) -> tuple[bytes, bytes]:
    """(key, value) bytes of a group metadata record, as the coordinator writes them. Members:
    ``member_id``, optional ``group_instance_id``, ``client_id``, ``assignment`` (bytes)."""
    kstruct = load_schema(jar, "GroupMetadataKey")
    vstruct = load_schema(jar, "GroupMetadataValue")
    kcls, vcls = kstruct.data_class, vstruct.data_class
    key = GROUP_METADATA_KEY.to_bytes(2, "big") + _encode(kstruct, kcls(version=0, group=group), 0)
    member_cls = vcls.MemberMetadata
    ms = [
        member_cls(
            version=value_version,
            member_id=m["member_id"],
            group_instance_id=m.get("group_instance_id"),
            client_id=m.get("client_id", "kgc"),
            client_host=m.get("client_host", "/127.0.0.1"),
            rebalance_timeout=m.get("rebalance_timeout", 10000),
            session_timeout=m.get("session_timeout", 6000),
            subscription=m.get("subscription", b""),
            assignment=m.get("assignment", b""),
        )
        for m in members
    ]
    value = vcls(
        version=value_version,
        protocol_type=protocol_type,
        generation=generation,
        protocol=protocol,
        leader=leader,
        current_state_timestamp=current_state_timestamp,
        members=ms,
    )
    return key, value_version.to_bytes(2, "big") + _encode(vstruct, value, value_version)


def encode_consumer_assignment(partitions: Mapping[str, Sequence[int]], version: int = 0) -> bytes:
    """A ``ConsumerProtocolAssignment`` (kafka-python's class, generated from Kafka's spec)."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as A

    tps = [A.TopicPartition(topic=t, partitions=list(ps)) for t, ps in sorted(partitions.items())]
    return bytes(
        A(version=version, assigned_partitions=tps, user_data=None).encode(version=version)
    )


def decode_assignment(data: bytes | None) -> list[tuple[str, int]] | None:
    """Topic-partitions of a ``ConsumerProtocolAssignment``, or None when the bytes are not one."""
    if not data:
        return []
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as A

    try:
        buf = io.BytesIO(data)
        version = _int16(buf.read(2))
        if version < 0:
            return None
        flex = A.flexible_version_q(min(version, A.max_version))
        a = A._struct.decode(buf, version=min(version, A.max_version), compact=flex, tagged=flex)
        if version <= A.max_version and buf.tell() != len(data):
            return None
        return [(tp.topic, p) for tp in a.assigned_partitions for p in tp.partitions]
    except Exception:
        return None


def decode_record(jar: str, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """One ``__consumer_offsets`` record as a flat dict (``schema`` of DECODED below)."""
    out: dict[str, Any] = {
        "group": None,
        "record": "unknown",
        "key_version": None,
        "value_version": None,
        "tombstone": value is None,
        "generation": None,
        "protocol_type": None,
        "protocol": None,
        "leader": None,
        "members": None,
        "topic": None,
        "topic_partition": None,
        "committed_offset": None,
        "decode_error": None,
    }
    if not key or len(key) < 2:
        out["decode_error"] = "key shorter than its int16 version"
        return out
    kv = out["key_version"] = _int16(key)
    try:
        if kv == GROUP_METADATA_KEY:
            out["record"] = "group_metadata"
            k = _decode(load_schema(jar, "GroupMetadataKey"), key[2:], 0)
            out["group"] = k.group
            if value is not None:
                vv = out["value_version"] = _int16(value)
                v = _decode(load_schema(jar, "GroupMetadataValue"), value[2:], vv)
                out.update(
                    generation=v.generation,
                    protocol_type=v.protocol_type,
                    protocol=v.protocol,
                    leader=v.leader,
                    members=[
                        {
                            "member_id": m.member_id,
                            "group_instance_id": m.group_instance_id,
                            "client_id": m.client_id,
                            "assignment": (
                                None
                                if (tps := decode_assignment(m.assignment)) is None
                                else [{"topic": t, "partition": p} for t, p in tps]
                            ),
                            "assignment_bytes": len(m.assignment or b""),
                        }
                        for m in v.members
                    ],
                )
        elif kv in OFFSET_COMMIT_KEYS:
            out["record"] = "offset_commit"
            k = _decode(load_schema(jar, "OffsetCommitKey"), key[2:], 0)
            out.update(group=k.group, topic=k.topic, topic_partition=k.partition)
            if value is not None:
                vv = out["value_version"] = _int16(value)
                v = _decode(load_schema(jar, "OffsetCommitValue"), value[2:], vv)
                out["committed_offset"] = v.offset
        else:
            out["record"] = f"type {kv}"  # KIP-848 consumer/share/streams group records
    except Exception as exc:
        out["decode_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


# ---------------------------------------------------------------------------------- the fold


def _static_replacement(prev: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """Same generation rewritten because a static member re-joined with a new member id."""
    if prev.get("protocol") != cur.get("protocol"):
        return False
    pm, cm = prev.get("members") or [], cur.get("members") or []
    if len(pm) != len(cm):
        return False
    p_static = sorted(m["group_instance_id"] for m in pm if m["group_instance_id"] is not None)
    c_static = sorted(m["group_instance_id"] for m in cm if m["group_instance_id"] is not None)
    p_dynamic = sorted(m["member_id"] for m in pm if m["group_instance_id"] is None)
    c_dynamic = sorted(m["member_id"] for m in cm if m["group_instance_id"] is None)
    return bool(c_static) and p_static == c_static and p_dynamic == c_dynamic


def audit_group(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Fold one group's decoded records (any order; sorted here by partition, offset)."""
    recs = sorted(records, key=lambda r: (r["partition"], r["offset"]))
    group = recs[0]["group"] if recs else None
    violations: list[dict[str, Any]] = []
    prev: Mapping[str, Any] | None = None
    counts = {"group_metadata": 0, "offset_commit": 0, "tombstones": 0, "opaque_assignments": 0}
    generations: list[int] = []

    def flag(r: Mapping[str, Any], check: str, message: str) -> None:
        violations.append(
            {
                "group": group,
                "generation": r.get("generation"),
                "partition": r["partition"],
                "offset": r["offset"],
                "check": check,
                "message": message,
            }
        )

    for r in recs:
        if r["record"] == "offset_commit":
            counts["offset_commit"] += 1
            continue
        if r["record"] != "group_metadata":
            continue
        counts["group_metadata"] += 1
        if r["tombstone"]:
            counts["tombstones"] += 1
            prev = None
            continue
        if r.get("decode_error"):
            continue
        gen = r["generation"]
        generations.append(gen)
        if prev is not None:
            if gen < prev["generation"]:
                flag(
                    r,
                    "generation_order",
                    f"generation went backwards: {prev['generation']} "
                    f"(offset {prev['offset']}) then {gen}",
                )
            elif gen == prev["generation"] and not _static_replacement(prev, r):
                flag(
                    r,
                    "generation_order",
                    f"generation {gen} written again (offset "
                    f"{prev['offset']}) with a different group and no static member replaced",
                )
        members = r.get("members") or []
        ids = [m["member_id"] for m in members]
        leader = r.get("leader")
        if leader is not None and leader not in ids:
            flag(r, "leader_is_member", f"leader {leader!r} is not among the {len(ids)} member(s)")
        if members and leader is None:
            flag(r, "leader_is_member", f"{len(ids)} member(s) but no leader")
        if r.get("protocol_type") == "consumer":
            owner: dict[tuple[str, int], str] = {}
            for m in members:
                if m["assignment"] is None:
                    counts["opaque_assignments"] += 1
                    continue
                for tp in m["assignment"]:
                    key = (tp["topic"], tp["partition"])
                    if key in owner and owner[key] != m["member_id"]:
                        flag(
                            r,
                            "assignments_disjoint",
                            f"{key[0]}-{key[1]} assigned to both "
                            f"{owner[key]!r} and {m['member_id']!r}",
                        )
                    owner.setdefault(key, m["member_id"])
        prev = r
    return {
        "group": group,
        "partition": recs[0]["partition"] if recs else None,
        "records": len(recs),
        **counts,
        "first_generation": generations[0] if generations else None,
        "last_generation": generations[-1] if generations else None,
        "violations": violations,
    }


# --------------------------------------------------------------------------------------- Spark


def _schemas() -> dict[str, Any]:
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    raw = StructType(
        [
            StructField("partition", IntegerType(), False),
            StructField("offset", LongType(), False),
            StructField("timestamp", LongType(), True),
            StructField("key", BinaryType(), True),
            StructField("value", BinaryType(), True),
        ]
    )
    tp = StructType([StructField("topic", StringType()), StructField("partition", IntegerType())])
    member = StructType(
        [
            StructField("member_id", StringType()),
            StructField("group_instance_id", StringType()),
            StructField("client_id", StringType()),
            StructField("assignment", ArrayType(tp)),  # null: not a ConsumerProtocolAssignment
            StructField("assignment_bytes", IntegerType()),
        ]
    )
    decoded = StructType(
        [
            StructField("partition", IntegerType(), False),
            StructField("offset", LongType(), False),
            StructField("group", StringType()),
            StructField("record", StringType()),
            StructField("key_version", IntegerType()),
            StructField("value_version", IntegerType()),
            StructField("tombstone", BooleanType()),
            StructField("generation", IntegerType()),
            StructField("protocol_type", StringType()),
            StructField("protocol", StringType()),
            StructField("leader", StringType()),
            StructField("members", ArrayType(member)),
            StructField("topic", StringType()),
            StructField("topic_partition", IntegerType()),
            StructField("committed_offset", LongType()),
            StructField("decode_error", StringType()),
        ]
    )
    violation = StructType(
        [
            StructField("group", StringType()),
            StructField("generation", IntegerType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("check", StringType()),
            StructField("message", StringType()),
        ]
    )
    group = StructType(
        [
            StructField("group", StringType()),
            StructField("partition", IntegerType()),
            StructField("records", IntegerType()),
            StructField("group_metadata", IntegerType()),
            StructField("offset_commit", IntegerType()),
            StructField("tombstones", IntegerType()),
            StructField("opaque_assignments", IntegerType()),
            StructField("first_generation", IntegerType()),
            StructField("last_generation", IntegerType()),
            StructField("violations", ArrayType(violation)),
        ]
    )
    dump = StructType(
        [
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("timestamp", LongType()),
            StructField("key", StringType()),
            StructField("value", StringType()),
        ]
    )
    return {"raw": raw, "decoded": decoded, "group": group, "dump": dump}


def _fetch_partitions(bootstrap: str, topic: str) -> Any:
    """mapInArrow body: ``(partition, start, end)`` rows in, that range's records out."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from kafka import KafkaConsumer, TopicPartition
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(_schemas()["raw"])
        for batch in batches:
            for job in batch.to_pylist():
                tp = TopicPartition(topic, job["partition"])
                consumer = KafkaConsumer(
                    bootstrap_servers=bootstrap,
                    client_id="kgc-audit",
                    group_id=None,
                    enable_auto_commit=False,
                )
                try:
                    consumer.assign([tp])
                    consumer.seek(tp, job["start"])
                    rows: list[dict[str, Any]] = []
                    idle = 0
                    while consumer.position(tp) < job["end"]:
                        got = consumer.poll(timeout_ms=1000).get(tp, [])
                        idle = 0 if got else idle + 1
                        if idle > 30:
                            raise RuntimeError(
                                f"{topic}-{job['partition']}: no records for 30 s at offset "
                                f"{consumer.position(tp)} (end {job['end']})"
                            )
                        for rec in got:
                            if rec.offset >= job["end"]:
                                continue
                            rows.append(
                                {
                                    "partition": rec.partition,
                                    "offset": rec.offset,
                                    "timestamp": rec.timestamp,
                                    "key": rec.key,
                                    "value": rec.value,
                                }
                            )
                        if len(rows) >= FETCH_BATCH:
                            yield pa.RecordBatch.from_pylist(rows, schema=schema)
                            rows = []
                    if rows:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                finally:
                    consumer.close()

    return run


def read_cluster(spark: Any, bootstrap: str, topic: str = TOPIC) -> Any:
    """Records of ``topic`` from a running cluster: one Spark task per partition."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id="kgc-audit",
        group_id=None,
        enable_auto_commit=False,
        request_timeout_ms=30000,
    )
    try:
        parts = consumer.partitions_for_topic(topic)
        if not parts:
            raise AuditError(
                f"{bootstrap} has no {topic} topic (no group ever committed anything?)"
            )
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        start, end = consumer.beginning_offsets(tps), consumer.end_offsets(tps)
    finally:
        consumer.close()
    jobs = [(tp.partition, start[tp], end[tp]) for tp in tps if end[tp] > start[tp]]
    schemas = _schemas()
    if not jobs:
        return spark.createDataFrame([], schemas["raw"])
    ranges = spark.createDataFrame(jobs, "partition int, start long, end long").repartition(
        len(jobs)
    )
    return ranges.mapInArrow(_fetch_partitions(bootstrap, topic), schemas["raw"])


def read_dump(spark: Any, path: str) -> Any:
    from pyspark.sql import functions as F

    if not Path(path).exists():
        raise AuditError(f"no such dump file: {path}")
    d = spark.read.schema(_schemas()["dump"]).option("mode", "FAILFAST").json(path)
    return d.select(
        "partition",
        "offset",
        "timestamp",
        F.unbase64("key").alias("key"),
        F.unbase64("value").alias("value"),
    )


def write_dump(raw: Any, path: str) -> int:
    """Write the raw records as a dump file (atomically); returns how many."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for r in raw.orderBy("partition", "offset").toLocalIterator():
                f.write(
                    json.dumps(
                        dump_line(r["partition"], r["offset"], r["timestamp"], r["key"], r["value"])
                    )
                    + "\n"
                )
                n += 1
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def dump_line(
    partition: int, offset: int, timestamp: int | None, key: bytes | None, value: bytes | None
) -> dict[str, Any]:
    b64 = lambda b: None if b is None else base64.b64encode(bytes(b)).decode("ascii")  # noqa: E731
    return {
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp,
        "key": b64(key),
        "value": b64(value),
    }


def _decode_batches(jar: str) -> Any:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(_schemas()["decoded"])
        for batch in batches:
            rows = []
            for r in batch.to_pylist():
                d = decode_record(jar, r["key"], r["value"])
                d["partition"], d["offset"] = r["partition"], r["offset"]
                rows.append(d)
            yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run


def _fold_groups(table: Any) -> Any:
    """applyInArrow body: one group's decoded records in, one audit row out."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    result = audit_group(table.to_pylist())
    return pa.Table.from_pylist([result], schema=to_arrow_schema(_schemas()["group"]))


def audit(spark: Any, raw: Any, jar: str, *, group_prefix: str | None = None) -> dict[str, Any]:
    """Decode ``raw`` records and fold each group; returns the audit summary (JSON-able)."""
    from pyspark.sql import functions as F

    schemas = _schemas()
    decoded = raw.mapInArrow(_decode_batches(jar), schemas["decoded"]).persist()
    try:
        by_record = {r["record"]: r["count"] for r in decoded.groupBy("record").count().collect()}
        errors = [
            r.asDict()
            for r in decoded.where(F.col("decode_error").isNotNull())
            .select("partition", "offset", "group", "decode_error")
            .orderBy("partition", "offset")
            .limit(100)
            .collect()
        ]
        groups_df = decoded.where(F.col("group").isNotNull())
        if group_prefix:
            groups_df = groups_df.where(F.col("group").startswith(group_prefix))
        folded = groups_df.groupBy("group").applyInArrow(_fold_groups, schemas["group"])
        groups = [r.asDict(recursive=True) for r in folded.orderBy("group").collect()]
    finally:
        decoded.unpersist()
    violations = [v for g in groups for v in g["violations"]]
    return {
        "records": sum(by_record.values()),
        "records_by_type": by_record,
        "decode_errors": errors,
        "groups": len(groups),
        "group_metadata_records": sum(g["group_metadata"] for g in groups),
        "offset_commit_records": sum(g["offset_commit"] for g in groups),
        "opaque_assignments": sum(g["opaque_assignments"] for g in groups),
        "violations": sorted(violations, key=lambda v: (v["group"], v["partition"], v["offset"])),
        "group_summaries": groups,
        "checks": ["generation_order", "leader_is_member", "assignments_disjoint"],
    }


# ----------------------------------------------------------------------------------------- CLI


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--bootstrap-server", help="read __consumer_offsets from this running cluster")
    src.add_argument("--dump", help="read a dump file written earlier with --save-dump")
    p.add_argument("--save-dump", default=None, help="also write the records read to this file")
    p.add_argument("--group-prefix", default=None, help="audit only groups with this prefix")
    p.add_argument("--out", default=None, help="write audit.json into this folder")
    p.add_argument(
        "--schemas-from",
        default=None,
        metavar="KAFKA_VERSION",
        help="Kafka release whose record schemas to use (default: kgc's default)",
    )
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")


def run_args(args: argparse.Namespace) -> int:
    from kgc.pipeline import spark as ks

    if args.dump and not Path(args.dump).is_file():
        raise AuditError(f"no such dump file: {args.dump} (write one with --save-dump)")
    jar = schema_jar(args.schemas_from)
    spark = ks.session(app_name="kgc-audit", master=args.master)
    try:
        raw = (
            read_cluster(spark, args.bootstrap_server)
            if args.bootstrap_server
            else read_dump(spark, args.dump)
        )
        if args.save_dump:
            n = write_dump(raw, args.save_dump)
            print(f"kgc audit: wrote {n} records to {args.save_dump}", file=sys.stderr)
            raw = read_dump(spark, args.save_dump)  # audit exactly what was saved
        result = audit(spark, raw, jar, group_prefix=args.group_prefix)
    finally:
        ks.stop(spark)
    result["source"] = args.bootstrap_server or str(Path(args.dump).resolve())
    result["schemas_jar"] = jar
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "audit.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    for v in result["violations"]:
        print(
            f"VIOLATION  group {v['group']} generation {v['generation']} at {TOPIC}-"
            f"{v['partition']}@{v['offset']}: {v['check']}: {v['message']}"
        )
    for e in result["decode_errors"]:
        print(f"UNREADABLE {TOPIC}-{e['partition']}@{e['offset']}: {e['decode_error']}")
    print(
        f"{result['records']} records, {result['groups']} groups, "
        f"{result['group_metadata_records']} group metadata records, "
        f"{len(result['violations'])} violation(s), {len(result['decode_errors'])} unreadable"
    )
    return 1 if result["violations"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="audit.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_args(args)
    except AuditError as exc:
        print(f"audit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from kgc.pipeline import audit as _audit  # executors must see the package module, not __main__

    sys.exit(_audit.main())
