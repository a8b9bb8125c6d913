"""``kgc report``: a conformance report (HTML + JSON + PNG plots) from trace corpora, on Spark.

Steps, each a Spark job over the previous step's output:

1. convert the corpora to Parquet (``convert.py``), or read a corpus converted earlier;
2. fold every history (``recheck.py``): the model's checker re-validates it, no broker;
3. aggregate the per-history facts into
   * a conformance matrix: implementation/version × request type, how many requests the checker
     vouched for, how many were the first divergence, how many it never reached;
   * divergences grouped by signature (first diverging request, what the model allowed, what was
     observed), each with a standalone example trace and a replay command;
   * coverage of group-state × request × error cells (``engine/coverage.py``'s universe),
     with the cells never reached listed;
   * latency percentiles per request type and implementation/version;
   * unusable input lines, with file and line number;
4. render ``report.html`` (self-contained: plots embedded as PNG data URIs, also saved beside it)
   and ``report.json`` (the same numbers, for machines). With ``--card CARD.json`` (``kgc
   matrix`` gives its own) the page opens with the report card: each row's depth (the cells its
   search reached past the deviations its profile names) and each deviation's and baseline's
   status.

Runs as ``kgc report CORPUS… --out DIR`` or unchanged as
``spark-submit [--master URL] pipeline/report.py CORPUS… --out DIR``.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import html
import io
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPORT_FORMAT_VERSION = 1
REQUEST_TYPES = (
    "FindCoordinator",
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "OffsetCommit",
    "OffsetFetch",
    "DescribeGroups",
)
MAX_DIVERGENCE_GROUPS = 50
MAX_LISTED = 200


class ReportError(Exception):
    """Bad input for a report (message names the fix)."""


def _log(msg: str) -> None:
    print(f"kgc report: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------- aggregation


RECHECKED = ("pass", "divergence", "known-bug")  # re-check verdicts of a history the model read


def aggregate(facts: Any) -> dict[str, Any]:
    """Every number the report shows, from a FACTS DataFrame (small results, collected)."""
    from pyspark.sql import functions as F

    target = [F.col("implementation"), F.col("version")]
    per_target = (
        facts.groupBy(*target)
        .agg(
            F.count("*").alias("traces"),
            F.sum(F.when(F.col("verdict") == "pass", 1).otherwise(0)).alias("pass"),
            F.sum(F.when(F.col("verdict") == "divergence", 1).otherwise(0)).alias("divergence"),
            F.sum(F.when(F.col("verdict") == "incomplete", 1).otherwise(0)).alias("incomplete"),
            F.sum(F.when(F.col("verdict") == "known-bug", 1).otherwise(0)).alias("known_bug"),
            F.sum(F.when(F.col("recheck_verdict").isin(*RECHECKED), 1).otherwise(0)).alias(
                "rechecked"
            ),
            F.sum(F.when(F.col("agrees_with_recorded") == F.lit(False), 1).otherwise(0)).alias(
                "recheck_disagrees"
            ),
            F.sum(F.when(F.col("recheck_verdict") == "error", 1).otherwise(0)).alias(
                "recheck_errors"
            ),
            F.sum("event_count").alias("events"),
            *(
                F.sum(F.when(F.col("state_source") == src, 1).otherwise(0)).alias(f"states_{src}")
                for src in ("recorded", "model", "mixed")
            ),
        )
        .orderBy(*target)
        .collect()
    )
    targets = [r.asDict() for r in per_target]

    requests = facts.select(*target, F.explode("requests").alias("r")).select(*target, "r.*")
    matrix_rows = requests.groupBy(*target, "request_type", "status").count().collect()
    latency_rows = (
        requests.where(F.col("latency_ms").isNotNull())
        .groupBy(*target, "request_type")
        .agg(
            F.count("*").alias("count"),
            F.percentile_approx("latency_ms", [0.5, 0.9, 0.99], 10000).alias("p"),
            F.max("latency_ms").alias("max_ms"),
        )
        .orderBy(*target, "request_type")
        .collect()
    )
    cell_rows = (
        requests.where(F.col("error").isNotNull())
        .select(F.explode("states").alias("group_state"), "request_type", "error")
        .groupBy("group_state", "request_type", "error")
        .count()
        .collect()
    )
    state_sources = [
        {"state_source": src, "count": sum(t[f"states_{src}"] for t in targets)}
        for src in ("recorded", "model", "mixed")
    ]
    state_sources.append(
        {
            "state_source": None,
            "count": sum(t["traces"] for t in targets) - sum(s["count"] for s in state_sources),
        }
    )
    div = facts.where(F.col("verdict") == "divergence")
    example = F.struct(
        "event_count",
        "trace_id",
        "group_id",
        "implementation",
        "version",
        "source_file",
        "first_line",
        "divergence_reason",
        "divergence_allowed",
        "divergence_index",
    )
    groups = (
        div.groupBy(
            "signature",
            "divergence_kind",
            "divergence_request_type",
            "divergence_observed",
            "divergence_allowed_outcomes",
        )
        .agg(
            F.count("*").alias("count"),
            F.array_sort(F.collect_set(F.concat_ws(" ", *target))).alias("targets"),
            F.min(example).alias("example"),  # the shortest history (ties: smallest trace id)
        )
        .collect()
    )
    n_groups = len(groups)
    groups = sorted(groups, key=lambda g: (-g["count"], g["signature"]))[:MAX_DIVERGENCE_GROUPS]
    disagreements = [
        r.asDict()
        for r in facts.where(F.col("agrees_with_recorded") == F.lit(False))
        .select(
            "trace_id",
            "implementation",
            "version",
            "source_file",
            "first_line",
            "recorded_verdict",
            "recheck_verdict",
            "divergence_index",
        )
        .orderBy("source_file", "first_line")
        .limit(MAX_LISTED)
        .collect()
    ]
    recheck_errors = [
        r.asDict()
        for r in facts.where(F.col("recheck_verdict").isin("error", "not run"))
        .groupBy("recheck_verdict", "recheck_error")
        .agg(F.count("*").alias("count"), F.min("trace_id").alias("example_trace_id"))
        .orderBy(F.desc("count"))
        .limit(MAX_LISTED)
        .collect()
    ]
    return {
        "targets": targets,
        "matrix": _matrix(targets, matrix_rows),
        "latency": [
            {
                "implementation": r["implementation"],
                "version": r["version"],
                "request_type": r["request_type"],
                "count": r["count"],
                "p50_ms": r["p"][0],
                "p90_ms": r["p"][1],
                "p99_ms": r["p"][2],
                "max_ms": r["max_ms"],
            }
            for r in latency_rows
        ],
        "coverage": _coverage(cell_rows, state_sources),
        "divergence_groups": [_group(r) for r in groups],
        "divergence_group_count": n_groups,
        "recheck_disagreements": disagreements,
        "recheck_errors": recheck_errors,
    }


def _matrix(targets: list[dict[str, Any]], rows: list[Any]) -> dict[str, Any]:
    seen = {r["request_type"] for r in rows if r["request_type"]}
    types = [t for t in REQUEST_TYPES if t in seen] + sorted(seen - set(REQUEST_TYPES))
    cells: dict[tuple[str, str, str], dict[str, int]] = {}
    for r in rows:
        key = (r["implementation"], r["version"], r["request_type"])
        cells.setdefault(key, {"agreed": 0, "diverged": 0, "unchecked": 0})[r["status"]] += r[
            "count"
        ]
    out_rows = []
    for t in targets:
        row_cells = {}
        for rt in types:
            c = cells.get(
                (t["implementation"], t["version"], rt),
                {"agreed": 0, "diverged": 0, "unchecked": 0},
            )
            checked = c["agreed"] + c["diverged"]
            row_cells[rt] = {
                "requests": checked + c["unchecked"],
                "checked": checked,
                "agreed": c["agreed"],
                "diverged": c["diverged"],
                "unchecked": c["unchecked"],
                "agreement": (c["agreed"] / checked) if checked else None,
            }
        out_rows.append(
            {"implementation": t["implementation"], "version": t["version"], "cells": row_cells}
        )
    return {"request_types": types, "rows": out_rows}


def _coverage(rows: list[Any], sources: list[dict[str, Any]]) -> dict[str, Any]:
    from kgc.engine.coverage import GROUP_STATES, universe

    reached = {(r["group_state"], r["request_type"], r["error"]): r["count"] for r in rows}
    cells = universe()
    in_universe = set(cells)
    return {
        "group_states": list(GROUP_STATES),
        "universe": len(cells),
        "reached": sum(1 for c in cells if reached.get(c, 0) > 0),
        "cells": [
            {"group_state": s, "request_type": q, "error": e, "count": n}
            for (s, q, e), n in sorted(reached.items())
        ],
        "never_reached": [
            {"group_state": s, "request_type": q, "error": e}
            for (s, q, e) in cells
            if reached.get((s, q, e), 0) == 0
        ],
        "outside_universe": [
            {"group_state": s, "request_type": q, "error": e, "count": n}
            for (s, q, e), n in sorted(reached.items())
            if (s, q, e) not in in_universe
        ],
        "state_sources": sources,
    }


def _group(r: Any) -> dict[str, Any]:
    ex = r["example"].asDict()
    return {
        "signature": r["signature"],
        "kind": r["divergence_kind"],
        "request_type": r["divergence_request_type"],
        "observed": r["divergence_observed"],
        "allowed": list(r["divergence_allowed_outcomes"] or []),
        "count": r["count"],
        "targets": list(r["targets"]),
        "example": {
            "trace_id": ex["trace_id"],
            "group_id": ex["group_id"],
            "target": f"{ex['implementation']} {ex['version']}",
            "source_file": ex["source_file"],
            "first_line": ex["first_line"],
            "events": ex["event_count"],
            "divergence_index": ex["divergence_index"],
            "reason": ex["divergence_reason"],
            "allowed": list(ex["divergence_allowed"] or [])[:6],
        },
    }


# -------------------------------------------------------------------------------- example traces


def write_examples(traces: Any, groups: list[dict[str, Any]], out_dir: Path) -> None:
    """One standalone trace document per divergence group, plus its replay command and the
    readable step list (``engine/traces.py``'s ``render``)."""
    from kgc.engine.traces import TraceError, load, render
    from pyspark.sql import functions as F

    if not groups:
        return
    wanted = {(g["example"]["trace_id"], g["example"]["source_file"]): g for g in groups}
    ids = sorted({tid for tid, _ in wanted})
    rows = (
        traces.where(F.col("trace_id").isin(ids))
        .select("trace_id", "source_file", "manifest_json", "events", "verdict", "peak_states")
        .collect()
    )
    examples = out_dir / "examples"
    examples.mkdir(parents=True, exist_ok=True)
    for row in rows:
        g = wanted.get((row["trace_id"], row["source_file"]))
        if g is None:
            continue
        ex = g["example"]
        events = [json.loads(e["event_json"]) for e in row["events"]]
        idx = ex["divergence_index"]
        doc = {
            "manifest": json.loads(row["manifest_json"]),
            "events": events,
            "result": {
                "verdict": "divergence",
                "events": len(events),
                "peak_states": row["peak_states"],
                "divergence": {
                    "index": idx,
                    "step": events[idx].get("step")
                    if idx is not None and idx < len(events)
                    else None,
                    "reason": ex["reason"],
                    "allowed": ex["allowed"],
                    "observed": events[idx] if idx is not None and idx < len(events) else None,
                },
            },
        }
        path = examples / f"{g['signature']}.json"
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        g["example"]["path"] = str(path.resolve())
        g["replay"] = f"kgc replay {path.resolve()}"
        try:
            g["example"]["steps"] = render(load(path), width=110)
        except TraceError as exc:
            g["example"]["steps"] = f"(cannot render: {exc})"


# ------------------------------------------------------------------------------------------ plots

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def make_plots(data: dict[str, Any]) -> dict[str, bytes]:
    """PNG plots: conformance matrix heat map, latency percentiles, coverage, divergence groups."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots: dict[str, bytes] = {}
    m = data["matrix"]
    types, rows = m["request_types"], m["rows"]
    if types and rows:
        fig, ax = plt.subplots(figsize=(1.3 * len(types) + 3, 0.6 * len(rows) + 1.8))
        values = [
            [
                (c["agreement"] * 100 if c["agreement"] is not None else float("nan"))
                for c in (r["cells"][t] for t in types)
            ]
            for r in rows
        ]
        cmap = plt.get_cmap("RdYlGn").with_extremes(bad="#dddddd")
        im = ax.imshow(values, cmap=cmap, vmin=0, vmax=100, aspect="auto")
        ax.set_xticks(range(len(types)), types, rotation=30, ha="right")
        ax.set_yticks(range(len(rows)), [f"{r['implementation']} {r['version']}" for r in rows])
        for i, r in enumerate(rows):
            for j, t in enumerate(types):
                c = r["cells"][t]
                label = (
                    "–"
                    if c["agreement"] is None
                    else f"{c['agreement'] * 100:.1f}%\n{c['checked']}"
                )
                ax.text(j, i, label, ha="center", va="center", fontsize=8)
        fig.colorbar(im, ax=ax, label="requests the model agreed with (%)")
        ax.set_title("Conformance matrix: agreement with the model")
        plots["matrix"] = _png(fig)

    lat = data["latency"]
    if lat:
        targets = sorted({(r["implementation"], r["version"]) for r in lat})
        ltypes = [t for t in REQUEST_TYPES if any(r["request_type"] == t for r in lat)]
        ltypes += sorted({r["request_type"] for r in lat} - set(ltypes))
        fig, ax = plt.subplots(figsize=(1.4 * len(ltypes) + 3, 4.2))
        width = 0.8 / max(1, len(targets))
        by = {(r["implementation"], r["version"], r["request_type"]): r for r in lat}
        for k, tgt in enumerate(targets):
            xs, p50, p99 = [], [], []
            for j, t in enumerate(ltypes):
                r = by.get((*tgt, t))
                if r is None:
                    continue
                xs.append(j - 0.4 + width * (k + 0.5))
                p50.append(r["p50_ms"])
                p99.append(r["p99_ms"])
            color = PALETTE[k % len(PALETTE)]
            ax.bar(xs, p99, width * 0.9, color=color, alpha=0.35)
            ax.bar(xs, p50, width * 0.9, color=color, label=f"{tgt[0]} {tgt[1]} (p50; pale: p99)")
        ax.set_xticks(range(len(ltypes)), ltypes, rotation=30, ha="right")
        ax.set_ylabel("latency (ms)")
        ax.set_title("Response latency per request type")
        ax.legend(fontsize=8)
        plots["latency"] = _png(fig)

    cov = data["coverage"]
    from kgc.engine.coverage import ERRORS_BY_REQUEST

    ctypes = list(ERRORS_BY_REQUEST)
    reached = {(c["request_type"]) for c in cov["cells"]}
    if reached:
        fig, ax = plt.subplots(figsize=(9, 3.8))
        hit = {t: 0 for t in ctypes}
        never = {t: 0 for t in ctypes}
        for c in cov["never_reached"]:
            never[c["request_type"]] += 1
        for c in cov["cells"]:
            if (
                c["request_type"] in hit
                and c["count"] > 0
                and c["group_state"] in cov["group_states"]
                and c["error"] in ERRORS_BY_REQUEST[c["request_type"]]
            ):
                hit[c["request_type"]] += 1
        ax.bar(ctypes, [hit[t] for t in ctypes], color="#2ca02c", label="reached")
        ax.bar(
            ctypes,
            [never[t] for t in ctypes],
            bottom=[hit[t] for t in ctypes],
            color="#bbbbbb",
            label="never reached",
        )
        ax.set_xticks(range(len(ctypes)), ctypes, rotation=30, ha="right")
        ax.set_ylabel("group-state × error cells")
        ax.set_title(f"Coverage: {cov['reached']} of {cov['universe']} cells reached")
        ax.legend(fontsize=8)
        plots["coverage"] = _png(fig)

    groups = data["divergence_groups"][:12]
    if groups:
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(groups) + 1.5))
        labels = [
            f"{g['signature']} {g['request_type'] or '?'}: {g['observed']}"[:60] for g in groups
        ]
        ax.barh(range(len(groups)), [g["count"] for g in groups], color="#d62728")
        ax.set_yticks(range(len(groups)), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("traces")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_title("Divergences by signature")
        plots["divergences"] = _png(fig)
    return plots


# ------------------------------------------------------------------------------------------- HTML

HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
 body {{ font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222;
        max-width: 1400px; }}
 h1 {{ font-size: 24px; margin-bottom: 4px; }}
 h2 {{ font-size: 19px; margin-top: 28px; border-bottom: 1px solid #ccc; padding-bottom: 3px; }}
 .meta {{ color: #666; font-size: 13px; }}
 table {{ border-collapse: collapse; margin: 8px 0; font-size: 13px; }}
 th, td {{ border: 1px solid #bbb; padding: 4px 8px; text-align: left; vertical-align: top; }}
 th {{ background: #eee; }}
 td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
 td.agree {{ background: #b7e1b9; }}
 td.diverge {{ background: #f4a6a6; }}
 td.none {{ background: #f2f2f2; color: #888; }}
 .plot {{ display: block; margin: 10px 0; max-width: 100%; border: 1px solid #ddd; }}
 pre {{ background: #f7f7f7; border: 1px solid #ddd; padding: 8px; font-size: 12px;
       overflow-x: auto; }}
 code {{ background: #f0f0f0; padding: 1px 4px; }}
 .summary span {{ display: inline-block; margin-right: 22px; font-size: 15px; }}
 .bad {{ color: #b00020; font-weight: bold; }}
 .good {{ color: #1b7f2a; font-weight: bold; }}
 details {{ margin: 6px 0; }}
 td.depth {{ min-width: 150px; }}
 .bar {{ background: #ddd; height: 8px; margin-top: 3px; }}
 .bar div {{ background: #1b7f2a; height: 8px; }}
</style>
</head>
<body>
<h1>{title}</h1>
<div class="meta">generated {generated_at} by kgc {kgc_version} · {inputs}</div>
<div class="summary" id="summary">{summary}</div>
{card}

<h2 id="matrix-title">Conformance matrix</h2>
<p>Per implementation/version and request type: the share of requests whose outcome the model
allowed, among those the checker reached (a history is checked up to its first divergence; later
requests are <em>unchecked</em>). Cell: agreement, agreed/checked, first divergences, unchecked.</p>
{matrix_table}
{matrix_plot}

<h2>Divergences by signature</h2>
{divergences}

<h2>Coverage: group state × request × error</h2>
{coverage}

<h2>Latency per request type</h2>
{latency}

<h2>Re-check</h2>
{recheck}

<h2>Unusable input lines</h2>
{problems}
</body>
</html>
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _img(plots: dict[str, bytes], name: str, alt: str) -> str:
    if name not in plots:
        return ""
    b64 = base64.b64encode(plots[name]).decode("ascii")
    return f'<img class="plot" id="plot-{name}" alt="{_e(alt)}" src="data:image/png;base64,{b64}">'


def _table(headers: list[str], rows: list[list[str]], *, table_id: str = "") -> str:
    ident = f' id="{table_id}"' if table_id else ""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(rows_i) + "</tr>" for rows_i in rows)
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# Statuses on a card (``kgc matrix``): a deviation a run found, a baseline it replayed
GOOD_STATUSES = ("known",)
BAD_STATUSES = ("NEW", "FIXED", "fails differently")


def _status(status: str) -> str:
    cls = "good" if status in GOOD_STATUSES else "bad" if status in BAD_STATUSES else ""
    return f'<span class="{cls} status">{_e(status)}</span>'


def _tally(items: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for item in items:
        counts[item["status"]] = counts.get(item["status"], 0) + 1
    return ", ".join(f"{n} {_status(k)}" for k, n in sorted(counts.items())) or "none"


def render_card(card: dict[str, Any]) -> str:
    """A ``kgc matrix`` card (``card.json``) as HTML: one table row per target (the rules it was
    judged by and the deviations its profile names, its depth: cells reached of those it could
    give, the statuses of what its search found and of its baselines), then each row's
    deviations and baselines, each with its status."""
    rows = []
    details = []
    for r in card["targets"]:
        reached, of = r["cells"]["reached"], r["cells"]["of"]
        share = reached / of if of else 0.0
        named = r.get("named") or {}
        entries = [*named.get("switches", ()), *named.get("settings", ())]
        judged = _e(r.get("rules") or "its release's rules") + (
            f" + {len(entries)} named deviations" if entries else ""
        )
        if named.get("steers"):
            judged += f"; steered around {len(named['steers'])}"
        rows.append(
            [
                f"<th>{_e(r['label'])}</th>",
                f"<td>{_e(r.get('version'))}</td>",
                f"<td>{judged}</td>",
                f'<td class="depth num">{reached}/{of} cells ({share * 100:.0f}%)'
                f'<div class="bar"><div style="width:{share * 100:.0f}%"></div></div></td>',
                f'<td class="num">{r["requests"]}</td>',
                f"<td>{_tally(r['deviations'])}</td>",
                f"<td>{_tally(r['baselines'])}</td>",
            ]
        )
        items = [
            f"<li>{_status(d['status'])} {_e((d.get('signature') or {}).get('request'))} → "
            f"{_e((d.get('signature') or {}).get('answer'))}: {_e(d.get('sentence'))}"
            f"<br><code>{_e(d.get('replay_command'))}</code></li>"
            for d in r["deviations"]
        ] + [
            f"<li>{_status(b['status'])} baseline <code>{_e(Path(b['trace']).name)}</code> "
            f"({_e(b.get('replay'))})</li>"
            for b in r["baselines"]
        ]
        notes = [f"<li>note: {_e(n)}</li>" for n in r.get("notes", [])]
        if entries or named.get("steers"):
            notes.append(
                "<li>named: "
                + _e(", ".join([*entries, *(f"steer {x}" for x in named.get("steers", ()))]))
                + "</li>"
            )
        details.append(
            f"<details><summary>{_e(r['label'])}: {len(r['deviations'])} found, "
            f"{len(r['baselines'])} baselines</summary><ul>{''.join(notes + items)}</ul>"
            "</details>"
        )
    headers = ["target", "version", "judged by", "depth", "requests", "found", "baselines"]
    return (
        '<h2 id="card-title">Report card</h2>\n<p>Each target judged by Kafka\'s rules with the '
        "deviations its profile names in force, so its search goes on past them: its depth is "
        "the group-state × request × error cells reached of those it can give. <em>Found</em>: "
        "what its search found, NEW or a known deviation; <em>baselines</em>: each recorded "
        "deviation replayed on a fresh instance (known: it fails again at its own event; FIXED: "
        "it passes).</p>\n" + _table(headers, rows, table_id="card") + "\n" + "\n".join(details)
    )


def render_html(data: dict[str, Any], plots: dict[str, bytes]) -> str:
    s = data["summary"]
    summary = [
        f"<span>{s['traces']} traces"
        + (f" ({s['files']} files)" if s["files"] is not None else " (converted corpus)")
        + "</span>",
        f'<span class="good">{s["pass"]} pass</span>',
        f'<span class="{"bad" if s["divergence"] else "good"}">{s["divergence"]} divergence</span>',
        f"<span>{s['incomplete']} incomplete</span>",
        *(
            [f"<span>{s['known_bug']} stopped at a known Kafka bug</span>"]
            if s["known_bug"]
            else []
        ),
        f'<span class="{"bad" if s["problems"] else ""}">{s["problems"]} unusable lines</span>',
        f"<span>re-check: {_e(s['recheck'])}</span>",
    ]
    m = data["matrix"]
    mrows = []
    for r in m["rows"]:
        cells = [f"<th>{_e(r['implementation'])} {_e(r['version'])}</th>"]
        for t in m["request_types"]:
            c = r["cells"][t]
            if c["agreement"] is None:
                cells.append(f'<td class="none num">– ({c["unchecked"]} unchecked)</td>')
                continue
            cls = "diverge" if c["diverged"] else "agree"
            cells.append(
                f'<td class="{cls} num">{c["agreement"] * 100:.1f}%<br>'
                f"{c['agreed']}/{c['checked']}<br>{c['diverged']} div · {c['unchecked']} unch.</td>"
            )
        mrows.append(cells)
    matrix_table = _table(["target", *m["request_types"]], mrows, table_id="matrix")

    groups = data["divergence_groups"]
    if not groups:
        divergences = '<p class="good">No divergences.</p>'
    else:
        parts = [
            f"<p>{data['divergence_group_count']} signature(s) over {s['divergence']} diverging "
            f"trace(s); the {len(groups)} largest are listed. Each example is the shortest history "
            "with that signature, saved as a standalone trace.</p>",
            _img(plots, "divergences", "divergences by signature"),
        ]
        rows = []
        for g in groups:
            rows.append(
                [
                    f"<td><code>{_e(g['signature'])}</code></td>",
                    f'<td class="num">{g["count"]}</td>',
                    f"<td>{_e(', '.join(g['targets']))}</td>",
                    f"<td>{_e(g['request_type'] or '?')} ({_e(g['kind'])})</td>",
                    f"<td>{_e(' | '.join(g['allowed']) or '–')}</td>",
                    f"<td>{_e(g['observed'])}</td>",
                    f"<td><code>{_e(g.get('replay', '(example not found)'))}</code></td>",
                ]
            )
        parts.append(
            _table(
                [
                    "signature",
                    "traces",
                    "targets",
                    "first diverging request",
                    "model allowed",
                    "observed",
                    "replay",
                ],
                rows,
                table_id="divergences",
            )
        )
        for g in groups:
            ex = g["example"]
            parts.append(
                f"<details><summary><code>{_e(g['signature'])}</code> example: trace "
                f"{_e(ex['trace_id'])} ({_e(ex['target'])}, {ex['events']} events) from "
                f"{_e(ex['source_file'])}{':' + str(ex['first_line']) if ex['first_line'] else ''}"
                f"</summary><p>{_e(ex['reason'])}</p><pre>{_e(ex.get('steps', ''))}</pre></details>"
            )
        divergences = "\n".join(parts)

    cov = data["coverage"]
    reached_by = {}
    for c in cov["cells"]:
        reached_by.setdefault((c["group_state"], c["request_type"]), []).append(
            f"{c['error']} ×{c['count']}"
        )
    from kgc.engine.coverage import ERRORS_BY_REQUEST

    crows = []
    for st in cov["group_states"]:
        row = [f"<th>{_e(st)}</th>"]
        for rt in ERRORS_BY_REQUEST:
            hits = reached_by.get((st, rt))
            row.append(
                f"<td>{'<br>'.join(_e(h) for h in hits)}</td>" if hits else '<td class="none"></td>'
            )
        crows.append(row)
    never = cov["never_reached"]
    never_list = ", ".join(
        f"{c['group_state']} × {c['request_type']} × {c['error']}" for c in never
    )
    sources = ", ".join(
        f"{_e(x['state_source'] or 'unknown')}: {x['count']}" for x in cov["state_sources"]
    )
    coverage = (
        f"<p>{cov['reached']} of {cov['universe']} cells reached "
        f"(group state before each request — source per trace: {sources}).</p>"
        + _table(["group state", *ERRORS_BY_REQUEST], crows, table_id="coverage")
        + _img(plots, "coverage", "coverage per request type")
        + f"<details><summary>{len(never)} cells never reached</summary>"
        + f"<p>{_e(never_list)}</p></details>"
    )
    if cov["outside_universe"]:
        coverage += (
            "<p>Reached but outside the listed universe: "
            + _e(
                ", ".join(
                    f"{c['group_state']} × {c['request_type']} × {c['error']}"
                    for c in cov["outside_universe"]
                )
            )
            + "</p>"
        )

    lrows = [
        [
            f"<td>{_e(r['implementation'])} {_e(r['version'])}</td>",
            f"<td>{_e(r['request_type'])}</td>",
            f'<td class="num">{r["count"]}</td>',
            *(f'<td class="num">{r[k]:.2f}</td>' for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")),
        ]
        for r in data["latency"]
    ]
    latency = (
        _table(
            ["target", "request", "responses", "p50 ms", "p90 ms", "p99 ms", "max ms"],
            lrows,
            table_id="latency",
        )
        + _img(plots, "latency", "latency percentiles")
        if lrows
        else "<p>No responses with a latency.</p>"
    )

    rc = []
    if data["recheck_disagreements"]:
        rc.append(
            f'<p class="bad">{len(data["recheck_disagreements"])} trace(s) where the re-check '
            "disagrees with the recorded verdict:</p>"
        )
        rc.append(
            _table(
                ["trace", "target", "file", "recorded", "re-check", "at event"],
                [
                    [
                        f"<td>{_e(d['trace_id'])}</td>",
                        f"<td>{_e(d['implementation'])} {_e(d['version'])}</td>",
                        f"<td>{_e(d['source_file'])}:{_e(d['first_line'])}</td>",
                        f"<td>{_e(d['recorded_verdict'])}</td>",
                        f"<td>{_e(d['recheck_verdict'])}</td>",
                        f"<td>{_e(d['divergence_index'])}</td>",
                    ]
                    for d in data["recheck_disagreements"]
                ],
            )
        )
    for err in data["recheck_errors"]:
        rc.append(
            f'<p class="bad">{err["count"]} trace(s) {_e(err["recheck_verdict"])}: '
            f"{_e(err['recheck_error'])} (e.g. trace {_e(err['example_trace_id'])})</p>"
        )
    if not rc:
        rc.append(f"<p>{_e(s['recheck'])}.</p>")

    probs = data["problems"]
    if probs:
        problems = (
            f'<p class="bad">{s["problems"]} unusable line(s); each is counted, none is used.</p>'
            + _table(
                ["file", "line", "trace", "problem", "line starts with"],
                [
                    [
                        f"<td>{_e(p['source_file'])}</td>",
                        f'<td class="num">{_e(p["line"])}</td>',
                        f"<td>{_e(p['trace_id'])}</td>",
                        f"<td>{_e(p['message'])}</td>",
                        f"<td><code>{_e(p['excerpt'])}</code></td>",
                    ]
                    for p in probs[:MAX_LISTED]
                ],
                table_id="problems",
            )
        )
    else:
        problems = '<p class="good">None.</p>'

    return HTML_TEMPLATE.format(
        card=render_card(data["card"]) if data.get("card") else "",
        title=_e(data["title"]),
        generated_at=_e(data["generated_at"]),
        kgc_version=_e(data["kgc_version"]),
        inputs=_e(", ".join(data["inputs"])),
        summary="".join(summary),
        matrix_table=matrix_table,
        matrix_plot=_img(plots, "matrix", "conformance matrix heat map"),
        divergences=divergences,
        coverage=coverage,
        latency=latency,
        recheck="\n".join(rc),
        problems=problems,
    )


# ------------------------------------------------------------------------------------------- job


def read_card(path: Path) -> dict[str, Any]:
    """A ``kgc matrix`` ``card.json`` for ``--card``; a one-line :class:`ReportError` when it
    cannot be one (read before Spark starts)."""
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"--card {path}: cannot read a card: {exc}") from None
    rows = card.get("targets") if isinstance(card, dict) else None
    keys = ("label", "cells", "requests", "deviations", "baselines")
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and all(k in r for k in keys) for r in rows
    ):
        raise ReportError(
            f"--card {path}: not a kgc matrix card (no targets with {', '.join(keys)})"
        )
    return card


def check_inputs(inputs: list[str], out: Path) -> None:
    """Fail fast (before Spark starts) on inputs that cannot make a report."""
    from kgc.pipeline import convert

    missing = [p for p in inputs if not Path(p).exists()]
    if missing:
        raise ReportError("no such corpus: " + ", ".join(missing))
    is_parquet = len(inputs) == 1 and convert.is_parquet_corpus(inputs[0])
    if not is_parquet and not convert.expand(inputs):
        raise ReportError(
            "no trace files (*.jsonl, *.json) under "
            + ", ".join(inputs)
            + "; give trace files, folders of them, or a report's parquet/ folder"
        )
    if out.is_file() or (
        out.exists() and any(out.iterdir()) and not (out / "report.json").exists()
    ):
        raise ReportError(f"--out {out} is not empty and holds no earlier report; choose a new one")


def prepare_out_dir(out: Path) -> None:
    """``out`` must be new, empty, or a previous report (whose files are replaced)."""
    if out.exists() and any(out.iterdir()) and not (out / "report.json").exists():
        raise ReportError(
            f"--out {out} is not empty and holds no earlier report; choose a new directory"
        )
    out.mkdir(parents=True, exist_ok=True)
    for name in ("parquet", "facts", "examples"):
        if (out / name).exists():
            shutil.rmtree(out / name)


def build(
    spark: Any,
    inputs: list[str],
    out_dir: str | os.PathLike[str],
    *,
    recheck: bool = True,
    title: str | None = None,
    card: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the report; returns the JSON data (also written as ``report.json``); ``card``: a
    ``kgc matrix`` card the page opens with (:func:`render_card`)."""
    from kgc.pipeline import convert
    from kgc.pipeline import recheck as rc
    from kgc.pipeline.schema import FACTS

    import kgc

    out = Path(out_dir).resolve()
    check_inputs(inputs, out)
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    if len(inputs) == 1 and convert.is_parquet_corpus(inputs[0]):
        parquet_dir = Path(inputs[0]).resolve()
        if parquet_dir == out / "parquet":
            raise ReportError("the corpus is this report's own parquet/; choose another --out")
        prepare_out_dir(out)
        problems = convert.read_problems(parquet_dir)
        files = None
        _log(f"reading converted corpus {parquet_dir}")
    else:
        prepare_out_dir(out)
        parquet_dir = out / "parquet"
        _log(f"converting {', '.join(inputs)} to {parquet_dir}")
        try:
            summary = convert.convert(spark, inputs, parquet_dir)
        except FileNotFoundError as exc:
            raise ReportError(str(exc)) from None
        problems, files = summary.problems, summary.files
        _log(f"{summary.traces} traces from {summary.files} files, {len(problems)} unusable lines")
    timings["convert_s"] = time.monotonic() - t0

    traces = convert.read_traces(spark, parquet_dir)
    why_not = rc.recheck_available() if recheck else "disabled (--no-recheck)"
    t1 = time.monotonic()
    facts_path = out / "facts"
    _log("re-checking every history with the model" if why_not is None else f"re-check: {why_not}")
    rc.facts(traces, recheck=why_not is None).write.mode("overwrite").parquet(str(facts_path))
    facts = spark.read.schema(FACTS).parquet(str(facts_path))
    timings["recheck_s"] = time.monotonic() - t1

    t2 = time.monotonic()
    data = aggregate(facts)
    write_examples(traces, data["divergence_groups"], out)
    timings["aggregate_s"] = time.monotonic() - t2
    tg = data["targets"]
    n_traces = sum(t["traces"] for t in tg)
    data.update(
        {
            "report_format_version": REPORT_FORMAT_VERSION,
            "title": title or "kgc conformance report",
            "kgc_version": kgc.__version__,
            "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "inputs": [str(Path(p).resolve()) for p in inputs],
            "summary": {
                "files": files,
                "traces": n_traces,
                "pass": sum(t["pass"] for t in tg),
                "divergence": sum(t["divergence"] for t in tg),
                "incomplete": sum(t["incomplete"] for t in tg),
                "known_bug": sum(t["known_bug"] for t in tg),
                "problems": len(problems),
                "recheck": (
                    f"{sum(t['rechecked'] for t in tg)} of {n_traces} histories re-checked with "
                    f"the model; {sum(t['recheck_disagrees'] for t in tg)} disagree with the "
                    "recorded verdict"
                    if why_not is None
                    else f"not run: {why_not}"
                ),
                "recheck_ran": why_not is None,
            },
            "problems": problems[:MAX_LISTED],
            "timings_s": timings,
            **({"card": card} if card is not None else {}),
        }
    )
    plots = make_plots(data)
    for name, png in plots.items():
        (out / f"{name}.png").write_bytes(png)
    data["plots"] = {name: f"{name}.png" for name in plots}
    (out / "report.html").write_text(render_html(data, plots), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
    _log(f"wrote {out / 'report.html'} and report.json ({n_traces} traces)")
    return data


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "corpus",
        nargs="+",
        help="trace files/folders (.jsonl, .json), or one folder "
        "converted earlier (a report's parquet/)",
    )
    p.add_argument(
        "--out", required=True, help="folder for report.html, report.json, plots, Parquet"
    )
    p.add_argument(
        "--master",
        default=None,
        help="Spark master URL (default local[*]; under spark-submit, the one it was given)",
    )
    p.add_argument("--no-recheck", action="store_true", help="use the recorded verdicts only")
    p.add_argument("--title", default=None)
    p.add_argument(
        "--card",
        default=None,
        metavar="CARD.json",
        help="a kgc matrix card.json: the page opens with it (each row's depth, each "
        "deviation's and baseline's status)",
    )
    p.add_argument("--driver-memory", default="1g")


def run_args(args: argparse.Namespace) -> int:
    from kgc.pipeline import spark as ks

    check_inputs(args.corpus, Path(args.out).resolve())
    card = read_card(Path(args.card)) if args.card else None
    spark = ks.session(app_name="kgc-report", master=args.master, driver_memory=args.driver_memory)
    try:
        data = build(
            spark,
            args.corpus,
            args.out,
            recheck=not args.no_recheck,
            title=args.title,
            card=card,
        )
    finally:
        ks.stop(spark)
    s = data["summary"]
    print(
        f"{s['traces']} traces: {s['pass']} pass, {s['divergence']} divergence "
        f"({data['divergence_group_count']} signatures), {s['incomplete']} incomplete, "
        + (f"{s['known_bug']} at a known Kafka bug, " if s["known_bug"] else "")
        + f"{s['problems']} unusable lines -> {Path(args.out).resolve() / 'report.html'}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="report.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_args(args)
    except ReportError as exc:
        print(f"report: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from kgc.pipeline import (
        report as _report,
    )  # executors must see the package module, not __main__

    sys.exit(_report.main())
