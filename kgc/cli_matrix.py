"""``kgc matrix``: the suite on several implementations side by side, and their report card.

For each target (``apache-kafka:VERSION`` embedded, or an implementation kgc launches: ``tansu``,
``kfake``, ``librdkafka-mock``) ``kgc matrix`` starts it on loopback and:

1. reads the group request versions it advertises (ApiVersions) and runs the differential suite
   (``--seeds`` seeds of ``--profile``), recording every example into ``OUT/corpus``;
2. proves each divergence it saved: the trace is replayed on a **fresh** instance; ``STILL
   FAILING`` makes it a confirmed deviation, anything else an unconfirmed one (never a finding);
3. replays the implementation's baselines, ``traces/known/<implementation>/*.json``, each on a
   fresh instance (:func:`baseline_status`): one that fails again at the event it recorded (the
   same step, request and kind of divergence) is ``known``; one that fails at another event
   ``fails differently`` (both events are shown); one that replays clean is news (``FIXED``); one
   whose replay cannot finish is ``unconfirmed``;
4. names, for each confirmed deviation, the ``known`` baselines that record **the same
   deviation** (:mod:`kgc.engine.deviations`: the same request with every field, the same whole
   answer and the same set of answers the model allowed there, all in symbolic form). A baseline
   that is not ``known`` names nothing. A confirmed deviation that matches none is ``NEW``, also
   when a baseline has its request type and error (the card lists it as ``near``, saying which
   part differs). Its heading, the *signature*, is only the request type and the answer's type
   and error.

With ``--protocols`` (default ``classic``) each target gets a row per group protocol, each on a
fresh instance: ``share`` searches its share groups, ``consumer`` its KIP-848 groups. A target
that does not run a protocol gets a row saying why (``not_run``); another implementation whose
own rules line lacks the protocol is judged by the pinned Apache release's line (librdkafka's mock
advertises Kafka 3.7's API versions and serves share groups). The baselines are replayed once per
target, in its first row; a later row's deviations are matched against those replays.

It then writes ``OUT/card.json`` and ``OUT/card.md`` (one row per implementation, version and
protocol) and builds the HTML report over the corpus with the Spark pipeline
(``OUT/report/report.html``, as ``kgc report --card OUT/card.json`` does: the page opens with
the card, each row's depth and each deviation's and baseline's status). Exit status 1 when an
Apache Kafka release diverged or another implementation showed a NEW deviation; baselines that
are not ``known`` are reported, not failed (CI's card check, ``tests/pipeline/card_check.py``,
fails them).

With ``--baseline OLD/card.json`` (an implementer's CI keeps its last card) it also says what
changed since that card (:func:`compare_cards`): per row, the confirmed deviations that are new
and those gone (the same deviation: the same baselines matched, else the same heading and
sentence), the baselines whose status changed (``known`` → ``FIXED``), and the cells and requests
before and after; into ``OUT/changes.json`` and the end of ``card.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from kgc.cli import UserError
from kgc.engine.deviations import (
    Deviation,
    deviation_of,
    divergence_request_id,
    failing_event,
    owed_answers,
)

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
        f"(default {DEFAULT_TARGETS}); nisshi, tansu's successor, takes a 30-minute cargo "
        "build and is not launched: run it yourself and use kgc check --bootstrap-server",
    )
    p.add_argument(
        "--protocols",
        default="classic",
        help="comma-separated group protocols each target is searched with, a row each: classic "
        "(default), consumer, share. A target that does not run one gets a row saying why; "
        "another implementation whose own rules line lacks it is judged by the pinned Apache "
        "release's line",
    )
    p.add_argument("--out", required=True, help="folder for the corpus, traces, card and report")
    p.add_argument("--seeds", type=int, default=1, help="seeds 1..N per target (default 1)")
    p.add_argument("--profile", default="ci", help="search profile (default ci)")
    p.add_argument("--known", default=str(known_root()), help="baselines folder (traces/known)")
    p.add_argument("--no-report", action="store_true", help="skip the Spark HTML report")
    p.add_argument(
        "--tolerate-near",
        action="store_true",
        help="exit 0 when every NEW deviation of another implementation is near a known baseline "
        "(the same request type and answer: one deviation met in another shape, as a "
        "time-bounded shrink of a search past a profile leaves it); the card still says NEW",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="OLD/card.json",
        help="an earlier card: also report what changed since (new and gone deviations, "
        "baselines whose status changed, cells gained or lost) into OUT/changes.json and card.md",
    )


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


def _replay(broker: Any, trace: Any) -> tuple[str, Any]:
    """Replay ``trace`` on ``broker``: the verdict, and the replay's own trace (None when the
    replay could not finish)."""
    from kgc.conformance.drivers.suite import replay_with_own_client

    try:
        done = replay_with_own_client(broker, trace, client_id="kgc-matrix")
    except Exception as exc:  # noqa: BLE001 - a replay that cannot finish is "unconfirmed"
        return f"REPLAY ERROR ({' '.join(str(exc).split())[:200]})", None
    return str(done.verdict), done.trace


def replay_fresh(name: str, version: str | None, trace: Any) -> tuple[str, Any]:
    """Replay ``trace`` on a fresh instance of the target (started here, stopped after)."""
    with _open(name, version) as fresh:
        return _replay(fresh, trace)


#: How many fresh instances a baseline is replayed on before it is said to fail differently. A
#: racy implementation may answer one replay another way: kfake at franz-go ``01f206a7e32c`` now
#: and then completes generation 4 of ``joingroup-unknown-member-id-without-member-id`` with c1
#: alone and leaves c3's pending rejoin unanswered (step 12), a deviation of its own, before the
#: recorded one (step 14): 1 of 6 replays on an idle machine, 3 of 4 on a busy one.
REPLAY_ATTEMPTS = 3


def confirm_baseline(
    replay: Any, trace: Any, *, attempts: int = REPLAY_ATTEMPTS
) -> tuple[str, Any, dict[str, Any]]:
    """Replay a baseline with ``replay(trace) -> (verdict, replayed trace)`` (each call on a fresh
    instance) until a replay fails at the event it recorded (``known``) or cannot finish
    (``unconfirmed``), at most ``attempts`` times. A racy deviation (kfake's two session timers
    due together) may replay clean or fail elsewhere on one instance and at its event on the next,
    so ``FIXED`` (news: retire it) takes ``attempts`` clean replays, and ``fails differently`` is
    every replay failing elsewhere or passing. The status says how many replays it took, every
    other event a replay failed at, and how many passed clean."""
    elsewhere: list[str] = []
    clean = 0
    replays = 0
    while True:
        verdict, replayed = replay(trace)
        replays += 1
        status = baseline_status(trace, verdict, replayed)
        if status["status"] in ("known", "unconfirmed"):
            break
        if status["status"] == "FIXED":
            clean += 1
        else:
            elsewhere.append(str(status.get("replayed_event")))
        if replays >= attempts:
            if clean and elsewhere:
                status = {
                    "status": "fails differently",
                    "recorded_event": status.get("recorded_event"),
                    "replayed_event": elsewhere[-1],
                }
            break
    status = {**status, "replays": replays}
    if clean and status["status"] != "FIXED":
        status["passed_clean"] = clean
    if elsewhere:
        status["failed_elsewhere"] = elsewhere
    return verdict, replayed, status


def signature(trace: Any) -> dict[str, str] | None:
    """A divergence's heading on the card: the request type of the first diverging request and
    the answer no model state allowed (its type and error), or a request left unanswered. Only a
    heading: two deviations are the same one by :mod:`kgc.engine.deviations`, not by this."""
    div = (trace.result or {}).get("divergence") or {}
    observed = div.get("observed") or {}
    invoke = _invoke_of(trace, divergence_request_id(div))
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


def _baseline_files(implementation: str, root: Path | None) -> list[Path]:
    return sorted(((root or known_root()) / implementation).glob("*.json"))


def known_matches(
    implementation: str,
    trace: Any,
    root: Path | None = None,
    *,
    among: Collection[Path] | None = None,
) -> list[Path]:
    """The baselines of ``implementation`` (``root/<implementation>/*.json``; only those in
    ``among`` when given: ``kgc matrix`` passes the ones that still fail at their own event)
    that record the same deviation as ``trace`` (:class:`~kgc.engine.deviations.Deviation`:
    the same symbolic request, answer and model-allowed answers). Nothing is replayed here; a
    baseline that does not load is passed over."""
    return [path for path, differs in _compared(implementation, trace, root, among) if not differs]


def near_baselines(
    implementation: str, trace: Any, root: Path | None = None
) -> list[tuple[Path, tuple[str, ...]]]:
    """The baselines with ``trace``'s signature (request type, answer type and error) that are
    another deviation, each with the parts that differ (``request``, ``answer``, ``allowed``)."""
    sig = signature(trace)
    return [
        (path, differs)
        for path, differs in _compared(implementation, trace, root, None)
        if differs and sig is not None and _signature_of(path) == sig
    ]


def _compared(
    implementation: str, trace: Any, root: Path | None, among: Collection[Path] | None
) -> list[tuple[Path, tuple[str, ...]]]:
    """Each loadable baseline (of ``among``, when given) and the parts of its deviation that
    differ from ``trace``'s (none: the same deviation)."""
    mine = deviation_of(trace)
    if mine is None:
        return []
    chosen = None if among is None else {Path(p) for p in among}
    out = []
    for path in _baseline_files(implementation, root):
        if chosen is not None and path not in chosen:
            continue
        theirs = _baseline_deviation(path)
        if theirs is not None:
            out.append((path, mine.differs_in(theirs)))
    return out


def _baseline_deviation(path: Path) -> Deviation | None:
    from kgc.engine.traces import TraceError, load

    try:
        return deviation_of(load(path))
    except (TraceError, OSError):
        return None


def _signature_of(path: Path) -> dict[str, str] | None:
    from kgc.engine.traces import TraceError, load

    try:
        return signature(load(path))
    except (TraceError, OSError):
        return None


def baseline_status(recorded: Any, verdict: str, replayed: Any) -> dict[str, Any]:
    """A baseline's status after its replay on a fresh instance (the verdict, and the replay's
    trace or None): ``known`` when it fails again at the event it recorded
    (:class:`~kgc.engine.deviations.FailingEvent`: the same step, request and kind of
    divergence); ``fails differently`` when it fails elsewhere, with both events; ``FIXED`` when
    the replay passes; ``unconfirmed`` when the replay could not finish. Only a ``known`` baseline
    names a deviation known."""
    if replayed is not None and replayed.result and replayed.result.get("divergence") is None:
        return {"status": "FIXED"}
    if verdict != "STILL FAILING" or replayed is None:
        return {"status": "unconfirmed"}
    was, now = failing_event(recorded), failing_event(replayed)
    if was is not None and was == now:
        return {"status": "known"}
    return {
        "status": "fails differently",
        "recorded_event": None if was is None else was.describe(),
        "replayed_event": None if now is None else now.describe(),
    }


def sentence(trace: Any) -> str:
    """The deviation in one sentence: the request (type and version), what the broker answered,
    and what Kafka's rules answer there instead (from the checker's "model allowed" lines)."""
    sig = signature(trace) or {}
    div = (trace.result or {}).get("divergence") or {}
    request_id = divergence_request_id(div)
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
        kafka = " or ".join(dict.fromkeys(owed_answers(div, request_id))) or "an answer"
        quiet = (div.get("observed") or {}).get("at_ms")
        after = (
            f" in {quiet - invoke.at_ms:.0f} ms" if quiet is not None and invoke is not None else ""
        )
        return f"{where}: the broker never answered it{after}, where Kafka's rules answer {kafka}"
    kafka = " or ".join(expected) or "something else"
    answer = sig.get("answer", "nothing")
    return f"{where}: the broker answered {answer}, where Kafka's rules allow only {kafka}"


_EXPECTED_ERROR = re.compile(r"error: '[A-Z_]+' ≠ '([A-Z_]+)'")
_EXPECTED_FIELD = re.compile(r"request \d+: ([a-z_\[\]0-9]+): [^;]*? ≠ ('[^']*'|[^ ;()]+)")


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.session import description_of
    from kgc.conformance.drivers.suite import (
        SEARCH_PROFILES,
        Output,
        Search,
        prepare_record_dir,
        run_seeds,
    )
    from kgc.conformance.drivers.workloads import workload_named
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.engine.traces import load

    if args.profile not in SEARCH_PROFILES:
        raise UserError(
            f"unknown profile {args.profile!r}; choose one of {', '.join(SEARCH_PROFILES)}"
        )
    if args.seeds < 1:
        raise UserError(f"--seeds must be at least 1, got {args.seeds}")
    old_card = read_card(Path(args.baseline)) if args.baseline else None
    targets = _targets(args.implementations)
    protocols = _protocols(args.protocols)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty; kgc matrix never overwrites a card")
    corpus = prepare_record_dir(out / "corpus")
    known_root = Path(args.known)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for name, version in targets:
        label = f"{name}-{version}" if version else name
        print(f"kgc matrix: {label}", file=sys.stderr, flush=True)
        baselines: list[dict[str, Any]] | None = None
        for protocol in protocols:
            t0 = time.monotonic()
            row: dict[str, Any] = {
                "implementation": name,
                "label": label if protocol == "classic" else f"{label} {protocol}",
                "protocol": protocol,
            }
            with _open(name, version) as broker:
                description = description_of(broker)
                row["version"] = description.get("version")
                row["mode"] = description.get("mode")
                row["advertised"] = _advertised(broker.bootstrap_servers)
                _judge_protocol(description, protocol, name)
                try:
                    runs = run_seeds(
                        broker,
                        description,
                        seeds=args.seeds,
                        workload=workload_named(protocol),
                        search=Search(profile=args.profile, shrink_budget_s=90.0),
                        output=Output(
                            traces_dir=out / "traces" / row["label"].replace(" ", "-"),
                            record_dir=corpus,
                        ),
                    )
                except ProtocolUnsupported as exc:
                    runs = None
                    row["not_run"] = str(exc)
            # every baseline is replayed once per target, in its first row; a later row's
            # findings are matched against the statuses that replay gave
            first = baselines is None
            if first:
                baselines = _baselines(name, version, known_root, load)
            assert baselines is not None
            row["baselines"] = baselines if first else []
            _fill_row(row, runs, name, version, baselines, known_root, load)
            row["wall_s"] = round(time.monotonic() - t0, 1)
            rows.append(row)
            _print_row(row)
    card = {"targets": rows, "wall_s": round(time.monotonic() - started, 1)}
    (out / "card.json").write_text(json.dumps(card, indent=1, default=str) + "\n")
    markdown = render_markdown(card)
    if old_card is not None:
        changes = compare_cards(old_card, card)
        (out / "changes.json").write_text(json.dumps(changes, indent=1) + "\n")
        markdown += render_changes(changes, args.baseline)
        for line in render_changes(changes, args.baseline).splitlines()[2:]:
            print(f"  {line}", file=sys.stderr)
    (out / "card.md").write_text(markdown)
    print(f"kgc matrix: card {out / 'card.md'}", file=sys.stderr)
    if not args.no_report:
        _report(corpus, out / "report", out / "card.json")
    return 1 if any(_fails(r, tolerate_near=args.tolerate_near) for r in rows) else 0


def _protocols(spec: str) -> list[str]:
    """The protocols ``--protocols`` names, in its order, each once; a one-line error otherwise."""
    from kgc.conformance.drivers.workloads import WORKLOADS

    chosen = list(dict.fromkeys(x.strip() for x in spec.split(",") if x.strip()))
    unknown = [x for x in chosen if x not in WORKLOADS]
    if unknown or not chosen:
        raise UserError(
            f"--protocols {spec!r}: choose from {', '.join(WORKLOADS)}"
            + (f" ({', '.join(unknown)} unknown)" if unknown else "")
        )
    return chosen


def _judge_protocol(description: dict[str, Any], protocol: str, name: str) -> None:
    """Judge another implementation's ``protocol`` by the pinned Apache release's line when the
    line its API versions match has no rules for it (librdkafka's mock advertises Kafka 3.7's
    versions and serves share groups, which kgc models from 4.2), as ``kgc check --rules``
    would; an Apache release is judged by its own line, and refused where it lacks the
    protocol."""
    from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION
    from kgc.engine.registry import _profile_name, release_line
    from kgc.model.profiles import FIRST_LINE, profile_for_version

    first = FIRST_LINE.get(protocol)
    if name == "apache-kafka" or first is None:
        return
    line = release_line(_profile_name(description).removeprefix("kafka-")) or (0, 0)
    if line >= first:
        return
    pinned = profile_for_version(DEFAULT_KAFKA_VERSION).name
    description["model_profile"] = pinned
    description["rules_source"] = (
        f"the pinned Apache release's line: its API versions match Kafka {line[0]}.{line[1]}, "
        f"which has no {protocol} groups"
    )


def _fill_row(
    row: dict[str, Any],
    runs: Any,
    name: str,
    version: str | None,
    baselines: list[dict[str, Any]],
    root: Path,
    load: Any,
) -> None:
    """A row's search results (none when the target does not run the row's protocol)."""
    from kgc.engine.coverage import summarise

    if runs is None:
        row.update(requests=0, cells={"reached": 0, "of": 0}, unsupported=[], deviations=[])
        row["notes"] = [f"not run: {row['not_run']}"]
        return
    saved = [p for r in runs.results for p in r.saved]
    for result in runs.results:
        row["used"] = result.target.get("request_versions")
        row["rules"] = result.target.get("model_profile")
        row["named"] = {  # the implementation's profile the run was judged by
            "switches": list(result.target.get("implementation_switches") or {}),
            "settings": list(result.target.get("implementation_settings") or {}),
            "steers": list(result.target.get("implementation_steers") or ()),
        }
        if result.failure == "connection" and not result.saved:
            row.setdefault("notes", []).append(result.message.splitlines()[0])
    last = runs.results[-1].target if runs.results else None
    cov = summarise(runs.reached, runs.unsupported, target=last, protocol=row["protocol"])
    row["requests"] = runs.requests
    row["cells"] = {"reached": cov["reached"], "of": cov["cells"]}
    row["unsupported"] = sorted(runs.unsupported)
    row["deviations"] = _deviations(name, version, saved, baselines, root, load)


def _baselines(name: str, version: str | None, root: Path, load: Any) -> list[dict[str, Any]]:
    """Each baseline of ``name``, replayed on a fresh instance, with its status
    (:func:`baseline_status`)."""
    if name == "apache-kafka":
        return []
    out = []
    for path in _baseline_files(name, root):
        trace = load(path)
        verdict, _, status = confirm_baseline(lambda t: replay_fresh(name, version, t), trace)
        out.append({"trace": str(path), "signature": signature(trace), "replay": verdict, **status})
    return out


def _deviations(
    name: str,
    version: str | None,
    saved: list[Path],
    baselines: list[dict[str, Any]],
    root: Path,
    load: Any,
) -> list[dict[str, Any]]:
    """Each saved divergence, replayed on a fresh instance, and the ``known`` baselines that
    record the same deviation (module docstring, 4)."""
    usable = [Path(b["trace"]) for b in baselines if b["status"] == "known"]
    out = []
    for path in saved:
        trace = load(path)
        verdict, _ = replay_fresh(name, version, trace)
        sig = signature(trace)
        matches = [str(p) for p in known_matches(name, trace, root, among=usable)]
        status_of = {str(Path(b["trace"])): b["status"] for b in baselines}
        not_known = [  # the same deviation as a baseline that is not ``known``: names nothing
            {"trace": str(p), "status": status_of.get(str(p), "not replayed")}
            for p in known_matches(name, trace, root)
            if str(p) not in matches
        ]
        near = [
            {"trace": str(p), "differs_in": list(differs)}
            for p, differs in near_baselines(name, trace, root)
        ]
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
                "same_as_not_known": not_known,
                "near": near,
            }
        )
    return out


def _fails(row: dict[str, Any], *, tolerate_near: bool = False) -> bool:
    """A row fails on any confirmed deviation of Apache Kafka, and on a NEW one of another
    implementation (``tolerate_near``: unless it is near a known baseline)."""
    confirmed = [d for d in row["deviations"] if d["status"] != "unconfirmed"]
    if row["implementation"] == "apache-kafka":
        return bool(confirmed)
    return any(d["status"] == "NEW" and not (tolerate_near and d["near"]) for d in confirmed)


BASELINE_STATUSES = ("known", "fails differently", "FIXED", "unconfirmed")


def _counts(row: dict[str, Any]) -> dict[str, int]:
    """How many deviations are confirmed, NEW and unconfirmed, and how many baselines have each
    status of :data:`BASELINE_STATUSES`."""
    devs = row["deviations"]
    out = {
        "confirmed": sum(d["status"] != "unconfirmed" for d in devs),
        "new": sum(d["status"] == "NEW" for d in devs),
        "unconfirmed": sum(d["status"] == "unconfirmed" for d in devs),
    }
    for status in BASELINE_STATUSES:
        out[f"baselines {status}"] = sum(b["status"] == status for b in row["baselines"])
    return out


def _print_row(row: dict[str, Any]) -> None:
    n = _counts(row)
    print(
        f"  {row['label']:<22} {row.get('version')!s:<10} requests {row['requests']:>5}  "
        f"cells {row['cells']['reached']}/{row['cells']['of']}  deviations "
        f"{n['confirmed']} confirmed ({n['new']} new), {n['unconfirmed']} unconfirmed; baselines "
        + ", ".join(f"{n[f'baselines {s}']} {s}" for s in BASELINE_STATUSES)
        + f"  {row['wall_s']:.0f} s",
        flush=True,
    )


def render_markdown(card: dict[str, Any]) -> str:
    lines = [
        "# kgc report card",
        "",
        "| implementation | version | mode | protocol | rules | requests | cells | confirmed "
        "deviations (new) | unconfirmed | baselines known | fails differently | FIXED | "
        "unconfirmed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in card["targets"]:
        n = _counts(r)
        lines.append(
            f"| {r['implementation']} | {r.get('version')} | {r.get('mode')} "
            f"| {r.get('protocol', 'classic')} | {r.get('rules')} "
            f"| {r['requests']} | {r['cells']['reached']}/{r['cells']['of']} "
            f"| {n['confirmed']} ({n['new']}) | {n['unconfirmed']} | "
            + " | ".join(str(n[f"baselines {s}"]) for s in BASELINE_STATUSES)
            + " |"
        )
    for r in card["targets"]:
        lines += ["", f"## {r['label']} ({r.get('version')})", ""]
        adv = ", ".join(f"{k} v{a}-{b}" for k, (a, b) in sorted(r.get("advertised", {}).items()))
        used = ", ".join(
            f"{k} v{'/'.join(map(str, v))}" for k, v in sorted((r.get("used") or {}).items())
        )
        lines += [f"- advertises: {adv or 'no group API'}", f"- the suite used: {used or '-'}"]
        named = r.get("named") or {}
        entries = [*named.get("switches", ()), *named.get("settings", ())]
        if entries or named.get("steers"):
            lines.append(
                f"- judged by {r.get('rules')} rules + {len(entries)} named deviations "
                f"({', '.join(entries) or 'none'}); steered around: "
                f"{', '.join(named.get('steers', ())) or 'nothing'}"
            )
        if r["unsupported"]:
            lines.append(f"- cannot be sent: {', '.join(r['unsupported'])}")
        for note in r.get("notes", []):
            lines.append(f"- note: {note}")
        for d in r["deviations"]:
            lines += _deviation_lines(d)
        for b in r["baselines"]:
            lines.append(f"- baseline `{Path(b['trace']).name}`: {b['status']} ({b['replay']})")
            if b["status"] == "fails differently":
                lines.append(f"  - recorded: {b['recorded_event']}")
                lines.append(f"  - replayed: {b['replayed_event']}")
    return "\n".join(lines) + "\n"


def _deviation_lines(d: dict[str, Any]) -> list[str]:
    sig = d["signature"] or {}
    lines = [
        f"- **{d['status']}** {sig.get('request', '?')} → {sig.get('answer', '?')}: "
        f"{d['sentence']}",
        f"  - Kafka's source: {d['source']}",
        f"  - replay on a fresh instance: {d['replay_on_fresh_instance']}; `{d['replay_command']}`",
    ]
    lines += [f"  - the same deviation as baseline `{Path(m).name}`" for m in d["matches"]]
    lines += [
        f"  - the same deviation as baseline `{Path(n['trace']).name}`, which is {n['status']}: "
        "it names nothing known"
        for n in d.get("same_as_not_known", [])
    ]
    lines += [
        f"  - near baseline `{Path(n['trace']).name}` (its request type and answer), another "
        f"deviation: the {' and the '.join(n['differs_in'])} differ"
        for n in d.get("near", [])
    ]
    return lines


def _report(corpus: Path, out: Path, card: Path) -> None:
    import subprocess

    cmd = [sys.executable, "-m", "kgc.cli", "report", str(corpus), "--out", str(out)]
    cmd += ["--title", "kgc report card: the suite on each implementation", "--card", str(card)]
    proc = subprocess.run(cmd, check=False)
    if proc.returncode != 0:
        raise UserError(f"the Spark report over {corpus} failed (exit {proc.returncode})")


# ------------------------------------------------------------------ what changed since a card


def read_card(path: Path) -> dict[str, Any]:
    """An earlier ``card.json``; a one-line :class:`UserError` when it cannot be one."""
    try:
        card = json.loads(path.read_text())
    except OSError as exc:
        raise UserError(f"--baseline {path}: cannot read it ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"--baseline {path}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    rows = card.get("targets") if isinstance(card, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and "label" in r and "deviations" in r for r in rows
    ):
        raise UserError(f"--baseline {path}: not a kgc matrix card (no 'targets' rows)")
    return card


_MS = re.compile(r" in \d+ ms")


def deviation_key(d: dict[str, Any]) -> str:
    """What makes two cards' deviations the same one: the baselines it matched, if any (the same
    deviation by :mod:`kgc.engine.deviations`); else its heading and sentence, without the
    measured wait of an unanswered request."""
    if d.get("matches"):
        return "known: " + ", ".join(sorted(Path(m).name for m in d["matches"]))
    sig = d.get("signature") or {}
    text = _MS.sub("", str(d.get("sentence", "")))
    return f"{sig.get('request', '?')} → {sig.get('answer', '?')}: {text}"


def compare_cards(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Per row label of ``new`` (and rows only ``old`` has): the confirmed deviations that are new
    and those gone, the baselines whose status changed, and cells and requests before and after."""
    before = {r["label"]: r for r in old.get("targets", [])}
    rows: list[dict[str, Any]] = []
    for r in new.get("targets", []):
        o = before.pop(r["label"], None)
        if o is None:
            rows.append({"label": r["label"], "change": "new row"})
            continue

        def confirmed(row: dict[str, Any]) -> dict[str, str]:
            return {
                deviation_key(d): d.get("status", "?")
                for d in row.get("deviations", [])
                if d.get("status") != "unconfirmed"
            }

        now, was = confirmed(r), confirmed(o)
        status_was = {Path(b["trace"]).name: b.get("status") for b in o.get("baselines", [])}
        status_now = {Path(b["trace"]).name: b.get("status") for b in r.get("baselines", [])}
        rows.append(
            {
                "label": r["label"],
                "deviations_new": sorted(k for k in now if k not in was),
                "deviations_gone": sorted(k for k in was if k not in now),
                "baselines_changed": [
                    {"baseline": name, "was": status_was.get(name), "now": status_now.get(name)}
                    for name in sorted(status_was.keys() | status_now.keys())
                    if status_was.get(name) != status_now.get(name)
                ],
                "cells_before": (o.get("cells") or {}).get("reached"),
                "cells_after": (r.get("cells") or {}).get("reached"),
                "requests_before": o.get("requests"),
                "requests_after": r.get("requests"),
            }
        )
    rows += [{"label": label, "change": "row gone"} for label in before]
    return {"rows": rows}


def render_changes(changes: dict[str, Any], baseline: str) -> str:
    lines = ["", f"## Since `{baseline}`", ""]
    for r in changes["rows"]:
        if "change" in r:
            lines.append(f"- {r['label']}: {r['change']}")
            continue
        cells = f"cells {r['cells_before']} → {r['cells_after']}"
        lines.append(
            f"- {r['label']}: {cells}, requests {r['requests_before']} → {r['requests_after']}"
        )
        lines += [f"  - new deviation: {k}" for k in r["deviations_new"]]
        lines += [f"  - gone: {k}" for k in r["deviations_gone"]]
        lines += [
            f"  - baseline `{b['baseline']}`: {b['was'] or 'absent'} → {b['now'] or 'absent'}"
            for b in r["baselines_changed"]
        ]
    return "\n".join(lines) + "\n"
