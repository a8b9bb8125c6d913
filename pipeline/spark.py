"""One place that creates the SparkSession for every pipeline job.

* Under ``spark-submit`` the launcher has already chosen the master and the resources; the job then
  only calls ``SparkSession.builder.getOrCreate()`` and changes nothing (``PYSPARK_GATEWAY_PORT`` in
  the environment tells us we were launched that way).
* Run directly (``kgc report``, ``kgc audit``, tests), the master is ``--master`` or ``local[*]``,
  with a modest driver (1 GiB by default: several engineers share a 2-core machine), the web UI
  off, the console progress bar off, and everything bound to 127.0.0.1.

Executors run the same Python as the driver (``PYSPARK_PYTHON``), so ``kgc`` is importable there.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "1g"


def launched_by_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def session(
    *,
    app_name: str = "kgc",
    master: str | None = None,
    driver_memory: str = DEFAULT_DRIVER_MEMORY,
    extra: dict[str, str] | None = None,
) -> Any:
    """The active SparkSession, creating one if needed (see module docstring)."""
    from pyspark.sql import SparkSession

    if launched_by_spark_submit() and master is None:
        spark = SparkSession.builder.appName(app_name).getOrCreate()
        spark.sparkContext.setLogLevel("WARN")
        return spark
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or DEFAULT_MASTER)
        .config("spark.driver.memory", driver_memory)
        .config("spark.executor.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.python.worker.reuse", "true")
        # one Arrow batch holds whole histories (nested events): keep batches small
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "1000")
    )
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def stop(spark: Any) -> None:
    """Stop a session this process created; leave one spark-submit owns alone."""
    if not launched_by_spark_submit():
        spark.stop()
