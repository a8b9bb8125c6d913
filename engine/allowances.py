"""Allowances used: which of the model's "either answer is fine" a passing history needed.

The model allows more than one answer where Kafka may do either (``model/checker.py``). Each such
allowance is a switch of the model record or of the checker's tolerances, and each is earned by a
measurement or a source cited where it is defined:

* ``reorder``: two clients' requests sent within ``reorder_window_ms`` handled in either order
  (``model/timed.py``; docs/design-notes.md, "Order at the broker");
* ``cleanup``: an Empty group deleted by the coordinator's periodic cleanup, at most once per
  ``offsets.retention.check.interval.ms`` and never on a broker kgc launched
  (``GroupConfig.empty_group_may_vanish``, ``engine/registry.py`` ``cleanup_may_run``);
* ``timer window``: a timer fired up to ``early_ms`` before or ``late_ms`` after its deadline as
  the client's clock sees it (``CheckerConfig``; docs/design-notes.md, "Time").

A history *passed only through* an allowance when it passes with the allowance and diverges
without it: :func:`allowances_used` checks it again with each one switched off, alone. A count of
these per run (``SuiteResult.allowances``; ``kgc bench soak``) shows how often the suite's verdict
rests on each: an allowance never needed could be dropped, one needed all the time is a rule the
model should know instead.

Pure but for the checker runs: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kgc.engine.registry import model_from_manifest
from kgc.engine.traces import Trace
from kgc.model.checker import Checker, CheckerConfig

Switch = Callable[[dict[str, Any]], bool]  # turns an allowance off in a manifest copy; False: n/a


def _model_configs(manifest: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """The group-config records of a manifest's model record (the mixed model has two), each
    with whether the cleanup allowance is on where the record leaves it out (off in
    ``GroupConfig``, on in ``ConsumerGroupConfig``)."""
    record = manifest.get("model") or {}
    name = record.get("name", "ClassicGroupModel")
    if name == "MigratingGroupModel":
        pairs = [(record.get("classic"), False), (record.get("consumer"), True)]
    else:
        pairs = [(record.get("config"), name == "ConsumerGroupModel")]
    return [(c, on) for c, on in pairs if isinstance(c, dict)]


def _no_reorder(manifest: dict[str, Any]) -> bool:
    record = manifest.get("model") or {}
    used = False
    if float(record.get("reorder_window_ms") or 0) > 0:  # the mixed model's own window
        record["reorder_window_ms"] = 0.0
        used = True
    for config, _ in _model_configs(manifest):
        if float(config.get("reorder_window_ms") or 0) > 0:
            config["reorder_window_ms"] = 0.0
            used = True
    return used


def _no_cleanup(manifest: dict[str, Any]) -> bool:
    used = False
    for config, default in _model_configs(manifest):
        if config.get("empty_group_may_vanish", default):
            config["empty_group_may_vanish"] = False
            used = True
    return used


def _no_timer_window(manifest: dict[str, Any]) -> bool:
    checker = manifest.setdefault("checker", {})
    defaults = CheckerConfig()
    early = checker.get("early_ms", defaults.early_ms)
    late = checker.get("late_ms", defaults.late_ms)
    if not early and not late:
        return False
    checker["early_ms"] = 0.0
    checker["late_ms"] = 0.0
    return True


ALLOWANCES: dict[str, Switch] = {
    "reorder": _no_reorder,
    "cleanup": _no_cleanup,
    "timer window": _no_timer_window,
}


def passes(manifest: dict[str, Any], events: list[Any]) -> bool:
    """Whether the model ``manifest`` records explains ``events`` (no divergence)."""
    model = model_from_manifest(manifest)
    checker = Checker(model, CheckerConfig.from_manifest(manifest))
    return checker.feed_all(events) is None


def allowances_used(trace: Trace) -> list[str]:
    """The allowances (:data:`ALLOWANCES`' names) ``trace``'s history passed only through: with
    that one switched off, and every other as recorded, the checker finds a divergence. Empty for
    a history that did not pass in the first place (a divergence needs no allowance), and for one
    that stopped at a known Kafka bug (its world already judged it)."""
    if (trace.result or {}).get("verdict", "pass") != "pass":
        return []
    events = list(trace.events)
    used: list[str] = []
    for name, switch_off in ALLOWANCES.items():
        manifest = copy.deepcopy(trace.manifest)
        if not switch_off(manifest):
            continue  # the run did not allow it: nothing to need
        if not passes(manifest, events):
            used.append(name)
    return used
