"""``kgc matrix``: the suite on several implementations side by side, and their report card.

For each target (``apache-kafka:VERSION`` embedded, or an implementation kgc launches: ``tansu``,
``kfake``, ``librdkafka-mock``) ``kgc matrix`` starts it on loopback and:

1. reads the group request versions it advertises (ApiVersions) and runs the differential suite
   (``--seeds`` seeds of ``--profile``), recording every example into ``OUT/corpus``;
2. proves each divergence it saved: the trace is replayed on a **fresh** instance; ``STILL
   FAILING`` makes it a confirmed deviation, anything else an unconfirmed one (never a finding);
3. replays the implementation's baselines, ``traces/known/<implementation>/*.json``, each on a
   fresh instance: one that still fails is expected, one that replays clean is news (``FIXED``);
4. groups deviations by signature (the request type and the answer that no model state allowed)
   and names each baseline a new deviation matches; a confirmed deviation that matches none is
   ``NEW``.

It then writes ``OUT/card.json`` and ``OUT/card.md`` (one row per implementation and version) and
builds the HTML report over the corpus with the Spark pipeline (``OUT/report/report.html``, as
``kgc report`` does). Exit status 1 when an Apache Kafka release diverged or another
implementation showed a NEW deviation; ``FIXED`` baselines are reported, not failed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from kgc.cli import UserError

DEFAULT_TARGETS = (
    "apache-kafka:4.3.1,apache-kafka:3.9.2,apache-kafka:1.0.2,tansu,kfake,librdkafka-mock"
)
KNOWN = Path("traces") / "known"  # the clone's baselines, as `kgc replay traces/known/…` uses


def known_root() -> Path:
    """The baselines folder: the working directory's ``traces/known`` (a clone's root), else the
    one of the clone kgc runs from (an editable install), else the relative path as it is."""
    if KNOWN.is_dir():
        return KNOWN
    beside = Path(__file__).resolve().parents[1] / KNOWN
    return beside if beside.is_dir() else KNOWN


# Where Kafka decides what each request type answers (RULES.md has the rule-by-rule table).
SOURCES = {
    "JoinGroup": "GroupMetadataManager.classicGroupJoin* (4.x) / GroupCoordinator.handleJoinGroup",
    "SyncGroup": "GroupMetadataManager.classicGroupSync* (4.x) / GroupCoordinator.handleSyncGroup",
    "Heartbeat": "GroupMetadataManager.classicGroupHeartbeat* / GroupCoordinator.handleHeartbeat",
    "LeaveGroup": "GroupMetadataManager.classicGroupLeave* / GroupCoordinator.handleLeaveGroup",
    "OffsetCommit": "OffsetMetadataManager.commitOffset / GroupCoordinator.handleCommitOffsets",
    "OffsetFetch": "OffsetMetadataManager.fetchOffsets / GroupCoordinator.handleFetchOffsets",
    "DescribeGroups": "GroupMetadataManager.describeGroups / GroupCoordinator.handleDescribeGroup",
    "FindCoordinator": "KafkaApis.handleFindCoordinatorRequest",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--implementations",
        default=DEFAULT_TARGETS,
        help="comma-separated targets: apache-kafka:VERSION, tansu, kfake, librdkafka-mock "
        f"(default {DEFAULT_TARGETS})",
    )
    p.add_argument("--out", required=True, help="folder for the corpus, traces, card and report")
    p.add_argument("--seeds", type=int, default=1, help="seeds 1..N per target (default 1)")
    p.add_argument("--profile", default="ci", help="search profile (default ci)")
    p.add_argument("--known", default=str(known_root()), help="baselines folder (traces/known)")
    p.add_argument("--no-report", action="store_true", help="skip the Spark HTML report")


def _targets(spec: str) -> list[tuple[str, str | None]]:
    from kgc.conformance.brokers.implementations import LAUNCHED_OTHERS

    out: list[tuple[str, str | None]] = []
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        name, _, version = item.partition(":")
        if name == "apache-kafka":
            if not version:
                raise UserError("apache-kafka needs a version: apache-kafka:4.3.1")
            from kgc.conformance.artifacts.maven import check_version

            check_version(version)
            out.append((name, version))
        elif name in LAUNCHED_OTHERS:
            out.append((name, None))
        else:
            raise UserError(
                f"unknown implementation {name!r}; use apache-kafka:VERSION or one of "
                f"{', '.join(LAUNCHED_OTHERS)}"
            )
    if not out:
        raise UserError("--implementations names no target")
    return out


def _open(name: str, version: str | None) -> Any:
    """A fresh instance of the target (``open_broker`` starts Apache Kafka or launches the
    implementation, and stops it after)."""
    from kgc.conformance.brokers.session import open_broker

    return open_broker(kafka_version=version, implementation=name)


def _advertised(bootstrap: str) -> dict[str, list[int]]:
    from kgc.conformance.wire import probe
    from kgc.conformance.wire.client import parse_bootstrap
    from kgc.conformance.wire.negotiate import API_KEYS

    host, port = parse_bootstrap(bootstrap)[0]
    keys = probe.api_versions(host, port, 5.0).api_keys
    return {api: list(keys[k]) for api, k in API_KEYS.items() if k in keys}


def _replay(broker: Any, trace: Any) -> str:
    from kgc.conformance.drivers.suite import replay_with_own_client

    try:
        return str(replay_with_own_client(broker, trace, client_id="kgc-matrix").verdict)
    except Exception as exc:  # noqa: BLE001 - a replay that cannot finish is "unconfirmed"
        return f"REPLAY ERROR ({' '.join(str(exc).split())[:200]})"


def signature(trace: Any) -> dict[str, str] | None:
    """What a divergence is about: the request type of the first diverging request and the
    answer no model state allowed (its type and error), or a request left unanswered."""
    div = (trace.result or {}).get("divergence") or {}
    observed = div.get("observed") or {}
    invoke = _invoke_of(trace, _request_id(div))
    if invoke is None:
        return None
    request = invoke.command
    response = observed.get("response") or {}
    answer = f"{response.get('type', 'no answer')} {response.get('error', '')}".strip()
    return {"request": type(request).__name__, "answer": answer}


def _invoke_of(trace: Any, request_id: int | None) -> Any:
    """The ``Invoke`` event that sent ``request_id``; None if the trace has none."""
    return next(
        (
            e
            for e in trace.events
            if getattr(e, "request_id", None) == request_id and hasattr(e, "command")
        ),
        None,
    )


def _request_id(div: dict[str, Any]) -> int | None:
    """The request a divergence is about: the one answered, or, when an answer every model state
    owed never came, the first request the checker names as owed."""
    observed = div.get("observed") or {}
    if observed.get("request_id") is not None:
        return int(observed["request_id"])
    if observed.get("kind") != "quiet":
        return None
    owed = [int(m.group(1)) for line in div.get("allowed") or [] if (m := _OWED.match(str(line)))]
    return min(owed, default=None)


def known_matches(implementation: str, trace: Any, root: Path | None = None) -> list[Path]:
    """The baselines of ``implementation`` (``root/<implementation>/*.json``) whose divergence has
    ``trace``'s signature: the same request type and the same disallowed answer. Nothing is
    replayed here (``kgc matrix`` does that); a baseline that does not load is passed over."""
    from kgc.engine.traces import TraceError, load

    sig = signature(trace)
    if sig is None:
        return []
    out = []
    for path in sorted(((root or known_root()) / implementation).glob("*.json")):
        try:
            if signature(load(path)) == sig:
                out.append(path)
        except (TraceError, OSError):
            continue
    return out


_OWED = re.compile(r"request (\d+): (.*) \(emitted at \d+ ms\)$")
_EXPECTED_ERROR = re.compile(r"error: '[A-Z_]+' ≠ '([A-Z_]+)'")
_EXPECTED_FIELD = re.compile(r"request \d+: ([a-z_\[\]0-9]+): [^;]*? ≠ ('[^']*'|[^ ;()]+)")


def sentence(trace: Any) -> str:
    """The deviation in one sentence: the request (type and version), what the broker answered,
    and what Kafka's rules answer there instead (from the checker's "model allowed" lines)."""
    sig = signature(trace) or {}
    div = (trace.result or {}).get("divergence") or {}
    request_id = _request_id(div)
    invoke = _invoke_of(trace, request_id)
    version = getattr(invoke.command, "version", None) if invoke is not None else None
    expected: list[str] = []
    for line in div.get("allowed") or []:
        text = str(line)
        found = _EXPECTED_ERROR.search(text) or _EXPECTED_FIELD.search(text)
        if found and found.re is _EXPECTED_ERROR:
            what = found.group(1)
        elif found:
            what = f"{found.group(1)} {found.group(2)}"
        elif text.endswith("no response yet"):
            what = "no answer yet (the request waits)"
        else:
            what = "another answer (see the trace)"
        if what not in expected:
            expected.append(what)
    where = f"{sig.get('request', 'a request')}" + (f" v{version}" if version is not None else "")
    if sig.get("answer") == "no answer":
        owed = [
            m.group(2)
            for line in div.get("allowed") or []
            if (m := _OWED.match(str(line))) and int(m.group(1)) == request_id
        ]
        kafka = " or ".join(dict.fromkeys(owed)) or "an answer"
        quiet = (div.get("observed") or {}).get("at_ms")
        after = (
            f" in {quiet - invoke.at_ms:.0f} ms" if quiet is not None and invoke is not None else ""
        )
        return f"{where}: the broker never answered it{after}, where Kafka's rules answer {kafka}"
    kafka = " or ".join(expected) or "something else"
    answer = sig.get("answer", "nothing")
    return f"{where}: the broker answered {answer}, where Kafka's rules allow only {kafka}"


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.session import description_of
    from kgc.conformance.drivers.suite import (
        SEARCH_PROFILES,
        Output,
        Search,
        prepare_record_dir,
        run_seeds,
    )
    from kgc.engine.coverage import summarise
    from kgc.engine.traces import load

    if args.profile not in SEARCH_PROFILES:
        raise UserError(
            f"unknown profile {args.profile!r}; choose one of {', '.join(SEARCH_PROFILES)}"
        )
    if args.seeds < 1:
        raise UserError(f"--seeds must be at least 1, got {args.seeds}")
    targets = _targets(args.implementations)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty; kgc matrix never overwrites a card")
    corpus = prepare_record_dir(out / "corpus")
    known_root = Path(args.known)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for name, version in targets:
        t0 = time.monotonic()
        label = f"{name}-{version}" if version else name
        print(f"kgc matrix: {label}", file=sys.stderr, flush=True)
        row: dict[str, Any] = {"implementation": name, "label": label}
        with _open(name, version) as broker:
            description = description_of(broker)
            row["version"] = description.get("version")
            row["mode"] = description.get("mode")
            row["advertised"] = _advertised(broker.bootstrap_servers)
            runs = run_seeds(
                broker,
                description,
                seeds=args.seeds,
                search=Search(profile=args.profile, shrink_budget_s=90.0),
                output=Output(traces_dir=out / "traces" / label, record_dir=corpus),
            )
        saved = [p for r in runs.results for p in r.saved]
        for result in runs.results:
            row["used"] = result.target.get("request_versions")
            row["rules"] = result.target.get("model_profile")
            if result.failure == "connection" and not result.saved:
                row.setdefault("notes", []).append(result.message.splitlines()[0])
        reached, unsupported, requests = runs.reached, runs.unsupported, runs.requests
        last = runs.results[-1].target if runs.results else None
        cov = summarise(reached, unsupported, target=last)
        row["requests"] = requests
        row["cells"] = {"reached": cov["reached"], "of": cov["cells"]}
        row["unsupported"] = sorted(unsupported)
        baselines = _baselines(name, version, known_root, load)
        row["baselines"] = baselines
        row["deviations"] = _deviations(name, version, saved, baselines, load)
        row["wall_s"] = round(time.monotonic() - t0, 1)
        rows.append(row)
        _print_row(row)
    card = {"targets": rows, "wall_s": round(time.monotonic() - started, 1)}
    (out / "card.json").write_text(json.dumps(card, indent=1, default=str) + "\n")
    (out / "card.md").write_text(render_markdown(card))
    print(f"kgc matrix: card {out / 'card.md'}", file=sys.stderr)
    if not args.no_report:
        _report(corpus, out / "report")
    return 1 if any(_fails(r) for r in rows) else 0


def _baselines(name: str, version: str | None, root: Path, load: Any) -> list[dict[str, Any]]:
    if name == "apache-kafka":
        return []
    out = []
    for path in sorted((root / name).glob("*.json")):
        trace = load(path)
        with _open(name, version) as fresh:
            verdict = _replay(fresh, trace)
        out.append(
            {
                "trace": str(path),
                "signature": signature(trace),
                "replay": verdict,
                "status": "known" if verdict == "STILL FAILING" else "FIXED",
            }
        )
    return out


def _deviations(
    name: str, version: str | None, saved: list[Path], baselines: list[dict[str, Any]], load: Any
) -> list[dict[str, Any]]:
    out = []
    for path in saved:
        trace = load(path)
        with _open(name, version) as fresh:
            verdict = _replay(fresh, trace)
        sig = signature(trace)
        matches = [b["trace"] for b in baselines if sig is not None and b["signature"] == sig]
        confirmed = verdict == "STILL FAILING"
        out.append(
            {
                "trace": str(path),
                "signature": sig,
                "sentence": sentence(trace),
                "detail": str(((trace.result or {}).get("divergence") or {}).get("reason", "")),
                "source": SOURCES.get((sig or {}).get("request", ""), "model/RULES.md"),
                "replay_command": f"kgc replay {path} "
                + (f"--kafka-version {version}" if version else f"--implementation {name}"),
                "replay_on_fresh_instance": verdict,
                "status": ("known" if matches else "NEW") if confirmed else "unconfirmed",
                "matches": matches,
            }
        )
    return out


def _fails(row: dict[str, Any]) -> bool:
    confirmed = [d for d in row["deviations"] if d["status"] != "unconfirmed"]
    if row["implementation"] == "apache-kafka":
        return bool(confirmed)
    return any(d["status"] == "NEW" for d in confirmed)


def _print_row(row: dict[str, Any]) -> None:
    devs = row["deviations"]
    fixed = [b for b in row["baselines"] if b["status"] == "FIXED"]
    print(
        f"  {row['label']:<22} {row.get('version')!s:<10} requests {row['requests']:>5}  "
        f"cells {row['cells']['reached']}/{row['cells']['of']}  deviations "
        f"{sum(d['status'] != 'unconfirmed' for d in devs)} confirmed "
        f"({sum(d['status'] == 'NEW' for d in devs)} new), "
        f"{sum(d['status'] == 'unconfirmed' for d in devs)} unconfirmed; baselines "
        f"{len(row['baselines']) - len(fixed)} still failing, {len(fixed)} FIXED  "
        f"{row['wall_s']:.0f} s",
        flush=True,
    )


def render_markdown(card: dict[str, Any]) -> str:
    lines = [
        "# kgc report card",
        "",
        "| implementation | version | mode | rules | requests | cells | confirmed deviations "
        "(new) | unconfirmed | baselines still failing | FIXED |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in card["targets"]:
        devs = r["deviations"]
        fixed = sum(b["status"] == "FIXED" for b in r["baselines"])
        lines.append(
            f"| {r['implementation']} | {r.get('version')} | {r.get('mode')} | {r.get('rules')} "
            f"| {r['requests']} | {r['cells']['reached']}/{r['cells']['of']} "
            f"| {sum(d['status'] != 'unconfirmed' for d in devs)} "
            f"({sum(d['status'] == 'NEW' for d in devs)}) "
            f"| {sum(d['status'] == 'unconfirmed' for d in devs)} "
            f"| {len(r['baselines']) - fixed} | {fixed} |"
        )
    for r in card["targets"]:
        lines += ["", f"## {r['label']} ({r.get('version')})", ""]
        adv = ", ".join(f"{k} v{a}-{b}" for k, (a, b) in sorted(r.get("advertised", {}).items()))
        used = ", ".join(
            f"{k} v{'/'.join(map(str, v))}" for k, v in sorted((r.get("used") or {}).items())
        )
        lines += [f"- advertises: {adv or 'no group API'}", f"- the suite used: {used or '-'}"]
        if r["unsupported"]:
            lines.append(f"- cannot be sent: {', '.join(r['unsupported'])}")
        for note in r.get("notes", []):
            lines.append(f"- note: {note}")
        for d in r["deviations"]:
            sig = d["signature"] or {}
            lines += [
                f"- **{d['status']}** {sig.get('request', '?')} → {sig.get('answer', '?')}: "
                f"{d['sentence']}",
                f"  - Kafka's source: {d['source']}",
                f"  - replay on a fresh instance: {d['replay_on_fresh_instance']}; "
                f"`{d['replay_command']}`",
            ]
        for b in r["baselines"]:
            lines.append(f"- baseline `{Path(b['trace']).name}`: {b['status']} ({b['replay']})")
    return "\n".join(lines) + "\n"


def _report(corpus: Path, out: Path) -> None:
    import subprocess

    cmd = [sys.executable, "-m", "kgc.cli", "report", str(corpus), "--out", str(out)]
    cmd += ["--title", "kgc report card: the suite on each implementation"]
    proc = subprocess.run(cmd, check=False)
    if proc.returncode != 0:
        raise UserError(f"the Spark report over {corpus} failed (exit {proc.returncode})")
