"""kgc.pipeline: trace analytics on Spark (needs the ``spark`` extra).

* ``schema.py``    — the explicit Parquet schema of a converted corpus (``traces/`` by
  implementation and version, ``problems.jsonl``) and of the per-history facts.
* ``convert.py``   — JSONL/JSON traces to Parquet; unusable lines counted with file and line.
* ``recheck.py``   — the model's checker (``kgc.model.checker.check``) folded over every history.
* ``report.py``    — ``kgc report``: matrix, divergence signatures, coverage, latency, plots.
* ``audit.py``     — ``kgc audit``: ``__consumer_offsets`` group records checked group by group.
* ``synthetic.py`` — corpora generated from the model alone, at any size.
* ``spark.py``     — the one place a SparkSession is made (local[*], --master, spark-submit).

PySpark is imported by ``schema.py`` (and so by ``convert.py``) and inside job functions; the CLI
front ends parse their arguments without it. Its benchmark is ``kgc bench pipeline``
(``kgc/bench/pipeline.py``). Jobs run unchanged under
``spark-submit pipeline/<job>.py``.
"""
