"""The ``kgc`` command line: one thin front end per subcommand over the shared engine.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
they are imported only when chosen, so ``kgc --help`` stays fast and needs no optional extra.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "broker": ("kgc.cli_broker", "start, inspect and stop an embedded Apache Kafka"),
    "check": ("kgc.cli_check", "run the differential conformance suite against a broker"),
    "matrix": ("kgc.cli_matrix", "run the suite on several implementations; build the report card"),
    "lines": ("kgc.cli_lines", "list Apache Kafka release lines; --sweep runs the suite on each"),
    "replay": ("kgc.cli_replay", "re-run saved traces against the model and a broker"),
    "analyze": ("kgc.cli_analyze", "re-check recorded traces against the model, no broker"),
    "report": ("kgc.cli_report", "build a conformance report from trace corpora (PySpark)"),
    "audit": ("kgc.cli_audit", "audit a cluster's __consumer_offsets group history (PySpark)"),
    "bench": ("kgc.bench", "run a benchmark and print one JSON object"),
}


from kgc.conformance.errors import KgcError  # noqa: E402  (light: no third-party imports)


class UserError(KgcError):
    """Bad input from the user: printed as one line naming the fix, exit status 2."""


def load_traces(paths: list[str]) -> list[tuple[Path, Any]]:
    """The traces in ``paths`` (files or folders), or a :class:`UserError` saying why not."""
    from kgc.engine.traces import TraceError, load_many

    try:
        loaded = load_many(paths)
    except TraceError as exc:
        raise UserError(str(exc)) from None
    if not loaded:
        raise UserError("no trace files found in " + ", ".join(paths))
    return loaded


def add_command_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--command-config",
        metavar="FILE",
        default=None,
        help="client.properties for --bootstrap-server, as Kafka's own tools take it: "
        "security.protocol (SSL, SASL_PLAINTEXT, SASL_SSL), sasl.mechanism (PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512, OAUTHBEARER), sasl.jaas.config, ssl.truststore.* and ssl.keystore.* "
        "(docs/security.md)",
    )


def client_security_from(args: argparse.Namespace) -> Any:
    """The ``--command-config`` file's settings (a one-line error if they cannot work), or None:
    PLAINTEXT, or an embedded secured broker's own limited principal."""
    if args.command_config is None:
        return None
    if args.bootstrap_server is None:
        raise UserError(
            "--command-config is for a broker you run: give --bootstrap-server too (an embedded "
            "broker started with --security writes its own client.properties)"
        )
    from kgc.conformance.wire.security import load_command_config

    return load_command_config(args.command_config)


def run_spark_job(job: str, error: str, args: argparse.Namespace) -> int:
    """Run ``kgc.pipeline.<job>.run_args``; the job's own ``error`` class and a missing PySpark
    are one line each."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UserError("PySpark is not installed: pip install -e '.[spark]'") from None
    module = importlib.import_module(f"kgc.pipeline.{job}")
    try:
        return int(module.run_args(args))
    except getattr(module, error) as exc:
        raise UserError(str(exc)) from None


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgc", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the Python traceback of an unexpected failure (also KGC_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if name == chosen:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(SUBCOMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except KgcError as exc:
        print(f"kgc {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"kgc {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a traceback never reaches a user unasked
        if args.debug or os.environ.get("KGC_DEBUG") == "1":
            raise
        print(f"kgc {args.command}: error: {_explain(exc)}", file=sys.stderr)
        return 2


def _explain(exc: BaseException) -> str:
    """One line for a failure no subcommand turned into a ``KgcError``: what happened, and what
    to try. A broker that closes a connection, answers what does not decode or lacks an API ends
    here as a client error from ``kgc.conformance.wire.client``."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if type(exc).__module__.startswith("kgc.conformance"):
        return (
            f"the broker did something kgc cannot go on from: {text}; if it lacks what kgc "
            "needs, --broker-config KEY=VALUE or --rules may help (rerun with --debug for the "
            "traceback)"
        )
    return (
        f"unexpected {type(exc).__name__}: {text} (a kgc bug: rerun with --debug and report "
        "the traceback)"
    )


if __name__ == "__main__":
    sys.exit(main())
