"""``kgc analyze TRACE…``: re-check recorded traces against the model, with no broker.

Each trace's recorded events are folded through the same checker the live suite uses, with the
model profile and tolerances its manifest names. Prints one verdict line per trace; exit status 0
when every trace passes or stops at a Kafka bug the model knows (``model/known_bugs.py``), 1 when
any diverges, 2 for a trace that cannot be read or whose manifest
names a model this kgc cannot build (one line naming the file and the field; nothing is written
in any case).
"""

from __future__ import annotations

import argparse
from typing import Any

from kgc.cli import UserError, load_traces


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", nargs="+", help="trace files (.json/.jsonl) or folders of them")
    p.add_argument(
        "--verbose", "-v", action="store_true", help="print each diverging trace's steps"
    )


def analyze_trace(trace, model=None) -> tuple[str, object]:  # noqa: ANN001
    """(verdict, divergence) for one loaded trace: ``pass``, ``divergence``, or ``known-bug``
    (only a Kafka bug the model knows explains it: ``model/known_bugs.py``; the second item is
    then the checker's ``KnownBugHit``); ``model`` is the one its manifest names (rebuilt here if
    not given)."""
    from kgc.engine.registry import model_from_manifest
    from kgc.model.checker import Checker, CheckerConfig

    if model is None:
        model = model_from_manifest(trace.manifest)
    checker = Checker(model, CheckerConfig.from_manifest(trace.manifest))
    divergence = checker.feed_all(trace.events)
    if divergence is None and checker.known_bug is not None:
        return "known-bug", checker.known_bug
    return ("pass" if divergence is None else "divergence"), divergence


def run(args: argparse.Namespace) -> int:
    from kgc.engine.traces import render, result_of_divergence

    loaded = load_traces(args.traces)
    from kgc.engine.registry import model_from_manifest

    models = []
    for path, trace in loaded:  # every manifest's model is rebuilt before any verdict is printed
        try:
            models.append(model_from_manifest(trace.manifest))
        except ValueError as exc:  # a bad `model` record names its field
            raise UserError(f"{path}: {exc}") from None
    from kgc.model.commands import NotModelled

    bad = 0
    for (path, trace), model in zip(loaded, models, strict=True):
        try:
            verdict, divergence = analyze_trace(trace, model)
        except NotModelled as exc:
            raise UserError(f"{path}: a request its model does not judge: {exc}") from None
        recorded = (trace.result or {}).get("verdict", "unrecorded")
        note = "as recorded" if verdict == recorded else f"recorded: {recorded}"
        if verdict == "known-bug":
            hit: Any = divergence
            bug = hit.world.bug
            print(
                f"KNOWN BUG   {path}  from event {hit.since} "
                f"on: {bug.key}, a bug of Kafka {bug.releases} (proof: {bug.proof}; {note})"
            )
        elif divergence is None:
            print(f"PASS        {path}  ({len(trace.events)} events; {note})")
        else:
            bad += 1
            print(
                f"DIVERGENCE  {path}  at event {divergence.index} (step {divergence.event.step}): "
                f"{divergence.reason} ({note})"
            )
            if args.verbose:
                trace.result = result_of_divergence(trace, divergence)
                print(render(trace))
    print(f"{len(loaded) - bad} passed, {bad} failed")
    return 1 if bad else 0
