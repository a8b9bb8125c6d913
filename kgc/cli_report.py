"""``kgc report CORPUS… --out DIR``: HTML + JSON conformance report from trace corpora (PySpark).

A thin front end over :mod:`kgc.pipeline.report`, which also runs unchanged under
``spark-submit pipeline/report.py``. Needs the ``spark`` extra (``pip install -e '.[spark]'``).
"""

from __future__ import annotations

import argparse

from kgc.cli import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kgc.pipeline.report import add_arguments as report_arguments

    report_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UserError("PySpark is not installed: pip install -e '.[spark]'") from None
    from kgc.pipeline.report import ReportError, run_args

    try:
        return run_args(args)
    except ReportError as exc:
        raise UserError(str(exc)) from None
