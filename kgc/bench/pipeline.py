"""``kgc bench pipeline``: re-check a large synthetic corpus on Spark; one JSON object on stdout.

What it measures (keys name their unit):

* a corpus of ``traces`` synthetic traces (1,000,000; ``--quick``: 2,000) is built from the model
  alone: ``distinct_histories`` of them are generated (``synthetic.py``: the engine driving the
  model; 1 % carry a planted divergence) and the rest are copies under new trace and group ids —
  every trace is still re-checked in full, on its own; copies only save generation time, which is
  not what is measured;
* ``recheck_s_local2``: the whole corpus re-checked at ``local[2]`` (every history folded through
  ``kgc.model.checker.check`` by ``recheck.facts``; the job ends in a verdict count), against the
  target ``recheck_target_s`` (600);
* ``throughput_traces_per_s_local1`` / ``_local2``: the same job on the first ``subset_traces``
  traces at ``local[1]`` and at ``local[2]``, and their ratio.

The machine may be shared: the 1-minute load average before and after the full re-check is
reported too (on 2 cores, a load above 2 means the job did not have both cores to itself). The
corpus lives in a temporary folder, removed at the end. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FULL = {"traces": 1_000_000, "distinct": 50_000, "subset": 100_000}
QUICK = {"traces": 2_000, "distinct": 2_000, "subset": 2_000}
STEPS = {"min_steps": 4, "max_steps": 12}
DIVERGENCE_RATE = 0.01
TARGET_S = 600.0


def _log(msg: str) -> None:
    print(f"bench pipeline: {msg}", file=sys.stderr, flush=True)


def _session(master: str) -> Any:
    from kgc.pipeline import spark as ks

    return ks.session(
        app_name=f"kgc-bench-pipeline-{master}",
        master=master,
        driver_memory="2g",
        extra={"spark.sql.execution.arrow.maxRecordsPerBatch": "500"},
    )


def replicate(spark: Any, pool_dir: str, n: int, distinct: int, out_dir: str) -> None:
    """Copies of the pool under new seeds ``seed + k * distinct`` until ``n`` traces."""
    from pyspark.sql import functions as F

    from kgc.pipeline.convert import read_traces
    from kgc.pipeline.schema import PARTITION_COLUMNS, TRACE

    copies = math.ceil(n / distinct)
    pool = read_traces(spark, pool_dir)
    new_seed = F.col("seed") + F.col("copy") * F.lit(distinct)

    old_gid = F.concat(F.lit('"group_id": "kgc-synthetic-'), F.col("seed"), F.lit('"'))
    new_gid = F.concat(F.lit('"group_id": "kgc-synthetic-'), new_seed, F.lit('"'))
    old_tid = F.concat(F.lit('"trace_id": "'), F.col("trace_id"), F.lit('"'))
    new_tid = F.concat(F.lit('"trace_id": "'), F.format_string("%016x", new_seed), F.lit('"'))
    old_seed = F.concat(F.lit('"seed": '), F.col("seed"), F.lit(","))
    new_seed_s = F.concat(F.lit('"seed": '), new_seed, F.lit(","))
    manifest = F.col("manifest_json")
    for old, new in ((old_gid, new_gid), (old_tid, new_tid), (old_seed, new_seed_s)):
        manifest = F.call_function("replace", manifest, old, new)
    out = (
        pool.crossJoin(spark.range(copies).withColumnRenamed("id", "copy"))
        .where(new_seed < n)
        .withColumn("manifest_json", manifest)
        .withColumn("trace_id", F.format_string("%016x", new_seed))
        .withColumn("group_id", F.concat(F.lit("kgc-synthetic-"), new_seed))
        .withColumn("source_file", F.concat(F.lit("synthetic:seed="), new_seed))
        .withColumn("seed", new_seed)
        .select(*TRACE.fieldNames())
    )
    out.write.mode("overwrite").partitionBy(*PARTITION_COLUMNS).parquet(
        str(Path(out_dir) / "traces")
    )


def recheck_job(
    spark: Any, corpus_dir: str, limit: int | None = None
) -> tuple[float, dict[str, int], int]:
    """(seconds, verdict counts, disagreements with the recorded verdict) for one re-check."""
    from pyspark.sql import functions as F

    from kgc.pipeline.convert import read_traces
    from kgc.pipeline.recheck import facts

    traces = read_traces(spark, corpus_dir)
    if limit is not None:
        traces = traces.where(F.col("seed") < limit)
    _log(f"{traces.rdd.getNumPartitions()} input partitions")
    t = time.monotonic()
    rows = facts(traces).groupBy("recheck_verdict", "agrees_with_recorded").count().collect()
    seconds = time.monotonic() - t
    counts: dict[str, int] = {}
    disagree = 0
    for r in rows:
        counts[str(r["recheck_verdict"])] = counts.get(str(r["recheck_verdict"]), 0) + r["count"]
        if r["agrees_with_recorded"] is False:
            disagree += r["count"]
    return seconds, counts, disagree


def run(args: argparse.Namespace) -> dict[str, Any]:
    from kgc.pipeline import spark as ks
    from kgc.pipeline import synthetic

    sizes = QUICK if getattr(args, "quick", False) else FULL
    n, distinct, subset = sizes["traces"], sizes["distinct"], sizes["subset"]
    work = Path(tempfile.mkdtemp(prefix="kgc-bench-pipeline-"))
    result: dict[str, Any] = {"traces": n, "distinct_histories": distinct, "subset_traces": subset}
    try:
        spark = _session("local[2]")
        _log(f"generating {distinct} distinct histories from the model")
        t = time.monotonic()
        synthetic.write_parquet(
            spark, distinct, str(work / "pool"), divergence_rate=DIVERGENCE_RATE, **STEPS
        )
        result["generate_s"] = round(time.monotonic() - t, 1)
        corpus = str(work / "pool")
        if n > distinct:
            _log(f"copying them up to {n} traces")
            t = time.monotonic()
            replicate(spark, corpus, n, distinct, str(work / "corpus"))
            result["replicate_s"] = round(time.monotonic() - t, 1)
            corpus = str(work / "corpus")
        stats = (
            spark.read.parquet(str(Path(corpus) / "traces"))
            .selectExpr("count(*) AS n", "avg(event_count) AS events")
            .first()
        )
        if stats["n"] != n:
            raise RuntimeError(f"corpus has {stats['n']} traces, expected {n}")
        result["events_per_trace_avg"] = round(stats["events"], 1)
        result["cpu_count"] = os.cpu_count()
        result["input_partitions"] = spark.read.parquet(
            str(Path(corpus) / "traces")
        ).rdd.getNumPartitions()
        result["corpus_bytes"] = sum(f.stat().st_size for f in Path(corpus).rglob("*.parquet"))

        _log(f"re-checking all {n} traces at local[2]")
        load_before = os.getloadavg()[0]
        seconds, counts, disagree = recheck_job(spark, corpus)
        # the machine is shared: the load around the run says how much of 2 cores it really had
        result["load_avg_1m_before_recheck"] = round(load_before, 2)
        result["load_avg_1m_after_recheck"] = round(os.getloadavg()[0], 2)
        result["recheck_s_local2"] = round(seconds, 1)
        result["recheck_traces_per_s_local2"] = round(n / seconds, 1)
        result["recheck_verdicts"] = counts
        result["recheck_disagreements"] = disagree
        result["recheck_target_s"] = TARGET_S
        result["recheck_within_target"] = seconds <= TARGET_S

        _log(f"throughput on {subset} traces at local[2]")
        s2, _, _ = recheck_job(spark, corpus, limit=subset)
        ks.stop(spark)
        spark = _session("local[1]")
        _log(f"throughput on {subset} traces at local[1]")
        s1, _, _ = recheck_job(spark, corpus, limit=subset)
        ks.stop(spark)
        result["throughput_traces_per_s_local1"] = round(subset / s1, 1)
        result["throughput_traces_per_s_local2"] = round(subset / s2, 1)
        result["speedup_local2_over_local1"] = round(s1 / s2, 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result
