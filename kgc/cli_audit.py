"""``kgc audit``: check a cluster's ``__consumer_offsets`` group history (PySpark).

A thin front end over :mod:`kgc.pipeline.audit` (also runnable as ``spark-submit
pipeline/audit.py``). Exit status 1 when a violation is found, 0 for a clean cluster.
"""

from __future__ import annotations

import argparse

from kgc.cli import run_spark_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kgc.pipeline.audit import add_arguments as audit_arguments

    audit_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return run_spark_job("audit", "AuditError", args)
