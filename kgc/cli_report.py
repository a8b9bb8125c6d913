"""``kgc report CORPUS… --out DIR``: HTML + JSON conformance report from trace corpora (PySpark).

A thin front end over :mod:`kgc.pipeline.report`, which also runs unchanged under
``spark-submit pipeline/report.py``. Needs the ``spark`` extra (``pip install -e '.[spark]'``).
"""

from __future__ import annotations

import argparse

from kgc.cli import run_spark_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kgc.pipeline.report import add_arguments as report_arguments

    report_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return run_spark_job("report", "ReportError", args)
