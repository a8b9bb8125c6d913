"""Witnesses: for every cell the coverage universe counts, a trace recorded against a real broker.

``engine/coverage.py`` says which group-state × request × error cells Kafka can give; a cell is
only *known* to be reachable when some broker gave it. The same holds for its input cells
(request × version × field class): a trace that sent one witnesses it. ``build`` takes traces
recorded with ``kgc check --record DIR`` (any number of runs), keeps only passing ones, and picks
a small set that together reach every cell they can, of both kinds: greedily, the trace that adds
the most cells not yet witnessed, each cut right after the answer that reached its last new cell
(a prefix of a
recorded history is a recorded history). ``check`` re-reads such a set: every trace must still
pass the model it names, no witnessed cell may be one the universe excludes, and every cell the
universe counts for the traces' broker (``coverage.unreachable_on``) must be witnessed; of the
input cells, none witnessed may be excluded, and those never witnessed are listed
(``input_missing``) for the test to bound.

``tests/engine/witnesses/`` holds the set for the embedded Apache Kafka; rebuild it with
``python -m kgc.conformance.drivers.witness build DIR… --out tests/engine/witnesses``
(CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.engine.coverage import (
    Cell,
    InputCell,
    cells_of,
    excluded,
    excluded_for,
    input_cells_of,
    input_universe,
    inputs_reached,
    reached,
    universe,
    unreachable_on,
)
from kgc.engine.traces import Trace, TraceError, expand, load, save


@dataclass(frozen=True, slots=True)
class Report:
    traces: int
    witnessed: frozenset[Cell]
    missing: tuple[Cell, ...]  # counted for the broker, never witnessed
    excluded: tuple[Cell, ...]  # witnessed, yet the universe says impossible
    failing: tuple[str, ...]  # traces the model no longer passes (name: reason)
    inputs_witnessed: frozenset[InputCell] = frozenset()
    inputs_missing: tuple[InputCell, ...] = ()  # counted for the traces' broker, never sent
    inputs_excluded: tuple[InputCell, ...] = ()  # sent, yet the universe says impossible

    @property
    def ok(self) -> bool:
        return not (self.missing or self.excluded or self.failing or self.inputs_excluded)


def first_reached(trace: Trace) -> dict[Cell, int]:
    """Each cell ``trace`` reaches, with the index of the answer that reached it first."""
    out: dict[Cell, int] = {}
    for i, cell in reached(trace.events, trace.extras):
        out.setdefault(cell, i)
    return out


def first_sent(trace: Trace) -> dict[InputCell, int]:
    """Each input cell ``trace`` reaches, with the index of an answer at or after its request:
    the request's own, else the next one read (a witness ends at an answer); a request with no
    answer after it witnesses nothing."""
    receives = [i for i, e in enumerate(trace.events) if type(e).__name__ == "Receive"]
    answered = {trace.events[i].request_id: i for i in receives}  # type: ignore[attr-defined]
    out: dict[InputCell, int] = {}
    for i, cell in inputs_reached(trace.events, trace.extras):
        rid = trace.events[i].request_id  # type: ignore[attr-defined]
        end = answered.get(rid, next((r for r in receives if r > i), None))
        if end is not None:
            out.setdefault(cell, end)
    return out


def _prefix(trace: Trace, end: int) -> Trace:
    return Trace(
        manifest={**trace.manifest, "witness_of": trace.manifest.get("trace_id")},
        events=trace.events[: end + 1],
        extras=trace.extras[: end + 1],
        result={"verdict": "pass"},
    )


def select(traces: Sequence[Trace]) -> list[Trace]:
    """The greedy cover described in the module docstring (passing traces only)."""
    known: set[Any] = set(universe())
    passing = [t for t in traces if (t.result or {}).get("verdict") == "pass"]
    firsts: list[dict[Any, int]] = []
    for t in passing:
        counted = set(input_universe(t.manifest.get("target") or {}))
        firsts.append(
            {
                **{("state", c): i for c, i in first_reached(t).items() if c in known},
                **{("input", c): i for c, i in first_sent(t).items() if c in counted},
            }
        )
    chosen: list[Trace] = []
    witnessed: set[Any] = set()
    while True:
        gains = [len(set(r) - witnessed) for r in firsts]
        if not gains or max(gains) == 0:
            return chosen
        best = max(range(len(gains)), key=lambda k: (gains[k], -len(passing[k].events)))
        new = set(firsts[best]) - witnessed
        chosen.append(_prefix(passing[best], max(firsts[best][c] for c in new)))
        witnessed |= new


def check(traces: Sequence[tuple[str, Trace]]) -> Report:
    """Re-check a witness set (module docstring)."""
    from kgc.engine.registry import model_from_manifest
    from kgc.model.checker import CheckerConfig
    from kgc.model.checker import check as run_checker

    gone = excluded()
    witnessed: set[Cell] = set()
    failing: list[str] = []
    counted: set[Cell] = set(universe())
    sent: set[InputCell] = set()
    inputs_counted: set[InputCell] | None = None
    inputs_gone: set[InputCell] = set()
    for name, t in traces:
        divergence = run_checker(
            model_from_manifest(t.manifest), t.events, CheckerConfig.from_manifest(t.manifest)
        )
        if divergence is not None:
            failing.append(f"{name}: {divergence.reason}")
        witnessed |= set(cells_of(t.events, t.extras))
        target = t.manifest.get("target") or {}
        counted -= set(unreachable_on(target))
        here = set(input_cells_of(t.events, t.extras))
        if here:  # a trace recorded before input cells were counted counts none
            sent |= here
            inputs_counted = (inputs_counted or set()) | set(input_universe(target))
            inputs_gone |= set(excluded_for(target))
    return Report(
        traces=len(traces),
        witnessed=frozenset(witnessed & set(universe())),
        missing=tuple(sorted(counted - witnessed)),
        excluded=tuple(sorted(witnessed & set(gone))),
        failing=tuple(failing),
        inputs_witnessed=frozenset(sent & (inputs_counted or set())),
        inputs_missing=tuple(sorted((inputs_counted or set()) - sent)),
        inputs_excluded=tuple(sorted(sent & inputs_gone)),
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m kgc.conformance.drivers.witness", description=__doc__
    )
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="pick witnesses from recorded traces")
    b.add_argument("recorded", nargs="+", help="trace files or directories (kgc check --record)")
    b.add_argument("--out", required=True, help="directory for the witness traces (must be new)")
    c = sub.add_parser("check", help="re-check a witness set")
    c.add_argument("witnesses", nargs="+", help="trace files or directories")
    args = p.parse_args(argv)
    try:
        paths = expand(args.recorded if args.command == "build" else args.witnesses)
        loaded = [(str(path), load(path)) for path in paths]
    except TraceError as exc:
        print(f"witness: error: {exc}", file=sys.stderr)
        return 2
    if args.command == "build":
        out = Path(args.out)
        if out.exists() and any(out.iterdir()):
            print(f"witness: error: {out} is not empty; give a new directory", file=sys.stderr)
            return 2
        out.mkdir(parents=True, exist_ok=True)
        chosen = select([t for _, t in loaded])
        for k, t in enumerate(chosen, start=1):
            save(t, out / f"witness-{k:02d}.jsonl")
        report = check([(str(k), t) for k, t in enumerate(chosen, start=1)])
        print(f"{len(chosen)} witness traces of {len(loaded)} recorded into {out}")
    else:
        report = check(loaded)
    print(f"{len(report.witnessed)} cells witnessed by {report.traces} traces")
    print(
        f"{len(report.inputs_witnessed)} input cells witnessed, "
        f"{len(report.inputs_missing)} counted but never sent"
    )
    for input_cell in report.inputs_missing:
        print(f"  input never witnessed: {' × '.join(map(str, input_cell))}")
    for input_cell in report.inputs_excluded:
        print(f"  input witnessed but excluded: {' × '.join(map(str, input_cell))}")
    for cell in report.missing:
        print(f"  never witnessed: {' × '.join(cell)}")
    for cell in report.excluded:
        print(f"  witnessed but excluded: {' × '.join(cell)}")
    for line in report.failing:
        print(f"  no longer passes: {line}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
