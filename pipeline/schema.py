"""Explicit Spark schemas for trace corpora stored as Parquet (trace format v1,
``engine/traces.py``).

A corpus converts to two datasets under one directory:

* ``traces/`` — one row per recorded history, i.e. per ``(trace_id, group_id)``, the unit every
  checker folds over (docs/design-notes.md, "Analysis is separate from execution"). The row
  carries the manifest (flattened), the recorded result, and the history itself as ``events``: an
  array of flat, typed event structs in recorded order, each keeping the event exactly as
  recorded in ``event_json`` (what the re-check decodes with
  :func:`kgc.model.history.event_from_json`). Partitioned by ``implementation`` and ``version``
  (the manifest's ``target``).
* ``problems.jsonl`` — one object per line that could not be used (bad JSON, not a valid event,
  an event outside any trace, a trace without a result line), with the file and 1-based line.

Reading always passes these schemas (never inference), so a version such as ``3.9`` stays a string.
Field names follow the trace format, which follows Kafka's own names (``member_id``,
``generation_id``, error names such as ``ILLEGAL_GENERATION``).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

FORMAT_VERSION = 1
"""The trace format version this pipeline reads (``manifest.format_version``)."""

PARTITION_COLUMNS = ("implementation", "version")

EVENT = StructType(
    [
        StructField(
            "index", IntegerType(), False
        ),  # position in the history, as the checker counts
        StructField("line", IntegerType(), True),  # 1-based line in the source file (JSONL only)
        StructField("kind", StringType(), False),  # invoke | receive | tick | quiet | fault
        StructField("step", IntegerType(), True),
        StructField("at_ms", DoubleType(), True),
        StructField("request_id", IntegerType(), True),
        StructField(
            "request_type", StringType(), True
        ),  # JoinGroup, SyncGroup, … (invoke, receive)
        StructField("client", StringType(), True),
        StructField("api_version", IntegerType(), True),
        StructField("member_id", StringType(), True),
        StructField("generation_id", IntegerType(), True),
        StructField("error", StringType(), True),  # receive: coverage.error_of(response)
        StructField("latency_ms", DoubleType(), True),  # receive: recorded, else receive - invoke
        StructField("group_state", StringType(), True),  # recorded group state before the step
        StructField("tick_ms", LongType(), True),
        StructField("fault_action", StringType(), True),
        StructField("fault_node", IntegerType(), True),
        StructField("event_json", StringType(), False),  # the event as recorded
    ]
)

TRACE = StructType(
    [
        StructField("trace_id", StringType(), False),
        StructField("group_id", StringType(), True),
        StructField("source_file", StringType(), False),
        StructField("first_line", IntegerType(), True),  # the manifest's line (JSONL)
        StructField("last_line", IntegerType(), True),
        StructField("scenario", StringType(), True),
        StructField("seed", LongType(), True),
        StructField("profile", StringType(), True),
        StructField("created_at", StringType(), True),
        StructField("kgc_version", StringType(), True),
        StructField("format_version", IntegerType(), True),
        StructField("mode", StringType(), True),
        StructField("nodes", IntegerType(), True),
        StructField("target_config_json", StringType(), True),
        StructField("model_profile", StringType(), True),
        StructField("model_config_json", StringType(), True),
        StructField("checker_early_ms", DoubleType(), True),
        StructField("checker_late_ms", DoubleType(), True),
        StructField("checker_latency_bound_ms", DoubleType(), True),
        StructField("manifest_json", StringType(), False),
        StructField("event_count", IntegerType(), False),
        StructField("corrupt_lines", IntegerType(), False),  # unusable lines inside this trace
        StructField("complete", BooleanType(), False),  # has a result line and no corrupt line
        StructField("verdict", StringType(), True),  # recorded: pass | divergence (null: none)
        StructField("result_events", IntegerType(), True),
        StructField("peak_states", IntegerType(), True),
        StructField("divergence_index", IntegerType(), True),
        StructField("divergence_step", IntegerType(), True),
        StructField("divergence_reason", StringType(), True),
        StructField("divergence_allowed", ArrayType(StringType()), True),
        StructField("divergence_observed_json", StringType(), True),
        StructField("events", ArrayType(EVENT, False), False),
        StructField("implementation", StringType(), False),
        StructField("version", StringType(), False),
    ]
)

PROBLEM = StructType(
    [
        StructField("source_file", StringType(), False),
        StructField(
            "line", IntegerType(), True
        ),  # 1-based; null when the problem is the whole file
        StructField("trace_id", StringType(), True),
        StructField("message", StringType(), False),
        StructField("excerpt", StringType(), True),  # the start of the offending line
    ]
)

PARSED = StructType([StructField("trace", TRACE, True), StructField("problem", PROBLEM, True)])
"""What the parse step emits: exactly one of ``trace`` / ``problem`` is set per row."""

REQUEST_FACT = StructType(
    [
        StructField("index", IntegerType(), False),  # the Invoke's position in the history
        StructField("request_id", IntegerType(), False),
        StructField("request_type", StringType(), True),
        StructField("states", ArrayType(StringType(), False), False),  # group state(s) before it
        StructField("error", StringType(), True),  # null: no response recorded
        StructField("latency_ms", DoubleType(), True),
        StructField("status", StringType(), False),  # agreed | diverged | unchecked
    ]
)

FACTS = StructType(
    [
        StructField("trace_id", StringType(), False),
        StructField("group_id", StringType(), True),
        StructField("implementation", StringType(), False),
        StructField("version", StringType(), False),
        StructField("source_file", StringType(), True),
        StructField("first_line", IntegerType(), True),
        StructField("event_count", IntegerType(), False),
        StructField("complete", BooleanType(), False),
        StructField("recorded_verdict", StringType(), True),
        # pass | divergence | not run (no model) | error (the model raised); null: not asked
        StructField("recheck_verdict", StringType(), True),
        StructField("recheck_error", StringType(), True),
        StructField("peak_states", IntegerType(), True),
        StructField("agrees_with_recorded", BooleanType(), True),
        # the verdict the report uses: the re-check's when it ran, else the recorded one;
        # incomplete when the trace has corrupt lines or no result
        StructField("verdict", StringType(), False),
        StructField("divergence_index", IntegerType(), True),
        StructField("divergence_kind", StringType(), True),  # receive | quiet | invoke | …
        StructField("divergence_request_id", IntegerType(), True),
        StructField("divergence_request_type", StringType(), True),
        StructField("divergence_reason", StringType(), True),
        StructField("divergence_allowed", ArrayType(StringType()), True),
        StructField("divergence_observed", StringType(), True),  # normalised outcome
        StructField("divergence_allowed_outcomes", ArrayType(StringType()), True),  # normalised
        StructField("signature", StringType(), True),
        StructField("state_source", StringType(), True),  # recorded | model | mixed | null
        StructField("requests", ArrayType(REQUEST_FACT, False), False),
    ]
)
