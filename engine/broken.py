"""Deliberately broken variants of the reference model, for "quality" tests and ``kgc bench check``.

Each variant breaks one rule the way an implementation plausibly gets it wrong, by replacing one
function of the model for the duration of a ``with`` block. The quality tests run the differential
suite against a *real broker* with the variant active and require that the suite notices, shrinks
the failure to a short trace, and that the trace replays to the same failure — proof that the
suite can fail, and fails for the right reason.

Variants (name: what is broken, which model rule):

* ``generation-not-bumped``: a completed join phase after the first keeps the old generation
  (``rebalance.complete_join``: ``initNextGeneration`` skipped).
* ``pending-join-not-alive``: a member whose JoinGroup/SyncGroup is parked is expired at its
  session deadline anyway (``heartbeat.is_satisfied`` always false).
* ``stale-generation-wrong-error``: a Heartbeat with a stale generation is answered
  UNKNOWN_MEMBER_ID instead of ILLEGAL_GENERATION.
* ``leader-not-rechosen``: when the leader leaves or expires, the group keeps the departed id as
  its leader (``rebalance.maybe_elect_new_joined_leader``).
* ``expiry-ignored``: session expiry never removes a member (``heartbeat.fire_member_heartbeat``).
* ``failover-forgets-generation``: a new coordinator loads the group at generation 0 instead of
  the persisted one (``cluster_group.load_group``); only the fault-mixed suite can see it.

KIP-848 consumer-group variants (``model/consumer/group.py``; only ``--protocol consumer`` can see
them):

* ``consumer-assign-before-revoke``: a partition is handed to its new owner while another member
  still holds it (``held_by_others`` always false: no ``UNRELEASED_PARTITIONS``).
* ``consumer-epoch-not-bumped``: a member that leaves or is fenced does not bump the group epoch
  (``fence_member``), so no new target assignment follows.
* ``consumer-fenced-epoch-accepted``: a heartbeat with an epoch the member does not have is
  accepted (``member_epoch_valid`` always true).
* ``consumer-wrong-assignor``: the ``uniform`` assignor is replaced by the server ``range`` one
  (``uniform_targets``): balanced too, but not sticky.
* ``consumer-stale-commit-accepted``: an OffsetCommit at an epoch the member does not hold is
  accepted (``stale_commit`` never answers ``STALE_MEMBER_EPOCH``).
* ``consumer-regex-unvalidated``: a subscribed regular expression that does not compile is
  taken (``regex_compiles`` always true), not refused ``INVALID_REGULAR_EXPRESSION``.

Caught by a scripted scenario, not by the search (``SCENARIO_VARIANTS``;
``tests/consumer/test_consumer_regex_scenarios.py``):

* ``consumer-regex-no-batch-interval``: a new regular expression is resolved at once, however
  recently the group's last resolution began (``ConsumerGroupModel._past`` ignores
  ``REGEX_BATCH_REFRESH_MIN_INTERVAL_MS``). The search would have to subscribe two regexes less
  than 10 s apart and wait 2 s: seed 1's 288 examples of the ``quality`` profile never did.
* ``consumer-heterogeneous-churns``: the ``uniform`` assignor's heterogeneous builder (a group
  with a regex) keeps as few of the previous target's partitions as a balanced assignment can,
  where Kafka's keeps as many (``heterogeneous_targets``).

Online-migration variants (``model/consumer/migration.py``; only ``--protocol migration`` can see
them):

* ``migration-upgrade-refused``: a consumer member never converts a classic group with members,
  whatever the policy (``MigratingGroupModel._upgraded`` always fails as ``GROUP_ID_NOT_FOUND``).
* ``migration-no-downgrade``: the last consumer-protocol member leaving leaves its classic
  members in a consumer group (``MigratingGroupModel._maybe_downgrade`` never converts).
* ``migration-classic-member-stale-epoch``: a classic member of a consumer group committing at a
  generation it does not hold hears ``STALE_MEMBER_EPOCH``, the consumer protocol's error, not
  ``ILLEGAL_GENERATION`` (``ConsumerGroupModel._offset_commit``).

KIP-932 share-group variants (``model/share/group.py``; only ``--protocol share`` can see them):

* ``share-epoch-not-bumped``: a member that leaves or whose session ends does not bump the
  group epoch (``fence_member``).
* ``share-fenced-epoch-accepted``: a heartbeat with an epoch the member does not have is
  accepted (``member_epoch_valid`` always true).
* ``share-uninitialized-assigned``: the assignor hands out partitions the share coordinator has
  not initialized yet (``simple_targets`` told every topic is initialized).
* ``share-pending-not-bumped``: partitions initialized after the target was computed never bump
  the group epoch (``initialized_assignment_pending`` always false), so the members wait for a
  change of membership to be given them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from kgc.model.classic import heartbeat, rebalance
from kgc.model.errors import ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID

_Site = tuple[Any, str, Any, Any]  # (module or dict, attribute or key, original, replacement)
_ACTIVE: list[list[_Site]] = []  # the sites of every patch in force, innermost last


def _set(where: Any, key: Any, value: Any) -> None:
    if isinstance(where, dict):
        where[key] = value
    else:
        setattr(where, key, value)


def _patched(module: Any, name: str, new: Callable[..., Any]) -> Callable[[], None]:
    """Replace ``module.name`` everywhere in kgc.model that imported that same object."""
    original = getattr(module, name)
    sites: list[_Site] = []
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("kgc.model"):
            continue
        if getattr(mod, name, None) is original:
            sites.append((mod, name, original, new))
        for value in list(vars(mod).values()):  # dispatch tables such as group.HANDLERS
            if isinstance(value, dict):
                for key, fn in list(value.items()):
                    if fn is original:
                        sites.append((value, key, original, new))
    return _install(sites)


def _install(sites: list[_Site]) -> Callable[[], None]:
    """Put every replacement in place; the returned function puts the originals back."""
    for where, key, _, replacement in sites:
        _set(where, key, replacement)
    _ACTIVE.append(sites)

    def undo() -> None:
        for where, key, orig, _ in sites:
            _set(where, key, orig)
        if sites in _ACTIVE:
            _ACTIVE.remove(sites)

    return undo


@contextmanager
def real_model() -> Iterator[None]:
    """Suspend every variant in force for the block: the unbroken model answers. A model-only
    quality test wraps its :class:`~kgc.engine.target.ModelTarget` calls in this, so the
    *target* behaves like Kafka while the checker holds it to the broken variant."""
    active = list(_ACTIVE)
    for sites in reversed(active):
        for where, key, orig, _ in sites:
            _set(where, key, orig)
    try:
        yield
    finally:
        for sites in active:
            for where, key, _, replacement in sites:
                _set(where, key, replacement)


def _generation_not_bumped() -> Callable[[], None]:
    original = rebalance.complete_join

    def complete_join(tx: Any) -> None:
        if tx.generation_id >= 1:
            tx.generation_id -= 1  # the bump inside brings it back: the generation stays
        original(tx)

    return _patched(rebalance, "complete_join", complete_join)


def _pending_join_not_alive() -> Callable[[], None]:
    return _patched(heartbeat, "is_satisfied", lambda tx, member_id: False)


def _stale_generation_wrong_error() -> Callable[[], None]:
    original = heartbeat.handle_heartbeat

    def handle_heartbeat(tx: Any, request_id: int, cmd: Any) -> None:
        original(tx, request_id, cmd)
        tx.outbox = [
            replace(o, response=replace(o.response, error=UNKNOWN_MEMBER_ID))
            if o.request_id == request_id and o.response.error == ILLEGAL_GENERATION
            else o
            for o in tx.outbox
        ]

    return _patched(heartbeat, "handle_heartbeat", handle_heartbeat)


def _leader_not_rechosen() -> Callable[[], None]:
    original_remove = rebalance.remove_member
    original_elect = rebalance.maybe_elect_new_joined_leader

    def remove_member(tx: Any, member_id: str) -> None:
        leader = tx.leader
        original_remove(tx, member_id)
        if leader == (member_id,):
            tx.leader = leader  # the departed id stays the leader

    def maybe_elect_new_joined_leader(tx: Any) -> bool:
        if len(tx.leader) == 1 and tx.leader[0] not in tx.members:
            return any(m.awaiting_join is not None for m in tx.members.values())
        return bool(original_elect(tx))

    undo_remove = _patched(rebalance, "remove_member", remove_member)
    undo_elect = _patched(rebalance, "maybe_elect_new_joined_leader", maybe_elect_new_joined_leader)

    def undo() -> None:
        undo_elect()
        undo_remove()

    return undo


def _expiry_ignored() -> Callable[[], None]:
    def fire_member_heartbeat(tx: Any, member_id: str) -> None:
        tx.members[member_id] = replace(tx.members[member_id], heartbeat_deadline_ms=None)

    return _patched(heartbeat, "fire_member_heartbeat", fire_member_heartbeat)


def _failover_forgets_generation() -> Callable[[], None]:
    from kgc.model.classic import cluster_group

    original = cluster_group.load_group

    def load_group(*args: Any, **kwargs: Any) -> Any:
        group = original(*args, **kwargs)
        return replace(group, generation_id=0) if group.exists else group

    return _patched(cluster_group, "load_group", load_group)


VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "generation-not-bumped": _generation_not_bumped,
    "pending-join-not-alive": _pending_join_not_alive,
    "stale-generation-wrong-error": _stale_generation_wrong_error,
    "leader-not-rechosen": _leader_not_rechosen,
    "expiry-ignored": _expiry_ignored,
}

# Caught only by the fault-mixed suite (kgc.conformance.drivers.fault_suite): kept apart so runs of
# the classic suite over VARIANTS (kgc bench check) do not wait for a bug they cannot see.
FAILOVER_VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "failover-forgets-generation": _failover_forgets_generation,
}


def _consumer_assign_before_revoke() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    return _patched(consumer_group, "held_by_others", lambda s, member_id, tp: False)


def _consumer_epoch_not_bumped() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    original = consumer_group.fence_member

    def fence_member(s: Any, member_id: str, **kwargs: Any) -> Any:
        out = original(s, member_id, **kwargs)
        return replace(out, group_epoch=s.group_epoch)

    return _patched(consumer_group, "fence_member", fence_member)


def _consumer_fenced_epoch_accepted() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    return _patched(consumer_group, "member_epoch_valid", lambda *args: True)


def _consumer_wrong_assignor() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    def uniform_targets(partitions: Any, subscriptions: Any, previous: Any) -> Any:
        return consumer_group.range_targets(partitions, subscriptions)  # not sticky

    return _patched(consumer_group, "uniform_targets", uniform_targets)


def _consumer_stale_commit_accepted() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    return _patched(consumer_group, "stale_commit", lambda *args: None)


def _consumer_regex_no_batch_interval() -> Callable[[], None]:
    from kgc.model.consumer.group import REGEX_REFRESH_MIN_INTERVAL_MS, ConsumerGroupModel

    original = ConsumerGroupModel._past

    def _past(self: Any, s: Any, interval: float) -> list[bool]:
        return [True] if interval == REGEX_REFRESH_MIN_INTERVAL_MS else original(self, s, interval)

    return _patched_attribute(ConsumerGroupModel, "_past", _past)


def _consumer_heterogeneous_churns() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    original = consumer_group.heterogeneous_targets

    def churning(partitions: Any, subscriptions: Any, previous: Any = None) -> Any:
        balanced = original(partitions, subscriptions)
        old = previous or {}
        kept = [sum(len(t[m] & old.get(m, frozenset())) for m in t) for t in balanced]
        return [t for t, k in zip(balanced, kept, strict=True) if k == min(kept)]

    return _patched(consumer_group, "heterogeneous_targets", churning)


def _consumer_regex_unvalidated() -> Callable[[], None]:
    from kgc.model.consumer import group as consumer_group

    return _patched(consumer_group, "regex_compiles", lambda regex: True)


def _patched_attribute(owner: Any, name: str, new: Any) -> Callable[[], None]:
    """Replace ``owner.name`` (a method of a model class) for the block."""
    return _install([(owner, name, getattr(owner, name), new)])


def _migration_upgrade_refused() -> Callable[[], None]:
    from kgc.model.consumer.migration import MigratingGroupModel
    from kgc.model.errors import GROUP_ID_NOT_FOUND

    return _patched_attribute(
        MigratingGroupModel, "_upgraded", lambda self, s: frozenset({GROUP_ID_NOT_FOUND})
    )


def _migration_no_downgrade() -> Callable[[], None]:
    from kgc.model.consumer.migration import MigratingGroupModel

    return _patched_attribute(
        MigratingGroupModel, "_maybe_downgrade", lambda self, before, after, fired=None: [after]
    )


def _migration_classic_member_stale_epoch() -> Callable[[], None]:
    from kgc.model.consumer.group import ConsumerGroupModel
    from kgc.model.errors import ILLEGAL_GENERATION, STALE_MEMBER_EPOCH

    original = ConsumerGroupModel._offset_commit

    def _offset_commit(self: Any, s: Any, c: Any) -> Any:
        s2, response = original(self, s, c)
        partitions = tuple(
            replace(p, error=STALE_MEMBER_EPOCH) if p.error == ILLEGAL_GENERATION else p
            for p in response.partitions
        )
        return s2, replace(response, partitions=partitions)

    return _patched_attribute(ConsumerGroupModel, "_offset_commit", _offset_commit)


MIGRATION_VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "migration-upgrade-refused": _migration_upgrade_refused,
    "migration-no-downgrade": _migration_no_downgrade,
    "migration-classic-member-stale-epoch": _migration_classic_member_stale_epoch,
}


CONSUMER_VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "consumer-assign-before-revoke": _consumer_assign_before_revoke,
    "consumer-epoch-not-bumped": _consumer_epoch_not_bumped,
    "consumer-fenced-epoch-accepted": _consumer_fenced_epoch_accepted,
    "consumer-wrong-assignor": _consumer_wrong_assignor,
    "consumer-stale-commit-accepted": _consumer_stale_commit_accepted,
    "consumer-regex-unvalidated": _consumer_regex_unvalidated,
}
SCENARIO_VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "consumer-regex-no-batch-interval": _consumer_regex_no_batch_interval,
    "consumer-heterogeneous-churns": _consumer_heterogeneous_churns,
}


def _share_epoch_not_bumped() -> Callable[[], None]:
    from kgc.model.share import group as share_group

    original = share_group.fence_member

    def fence_member(s: Any, member_id: str, **kwargs: Any) -> Any:
        out = original(s, member_id, **kwargs)
        return replace(out, group_epoch=s.group_epoch, assignment_epoch=s.assignment_epoch)

    return _patched(share_group, "fence_member", fence_member)


def _share_fenced_epoch_accepted() -> Callable[[], None]:
    from kgc.model.share import group as share_group

    return _patched(share_group, "member_epoch_valid", lambda *args: True)


def _share_uninitialized_assigned() -> Callable[[], None]:
    from kgc.model.share import group as share_group

    original = share_group.simple_targets

    def simple_targets(subscriptions: Any, topics: Any, initialized: Any, previous: Any) -> Any:
        return original(subscriptions, topics, frozenset(t for t, _ in topics), previous)

    return _patched(share_group, "simple_targets", simple_targets)


def _share_pending_not_bumped() -> Callable[[], None]:
    from kgc.model.share import group as share_group

    return _patched(share_group, "initialized_assignment_pending", lambda *args: False)


SHARE_VARIANTS: dict[str, Callable[[], Callable[[], None]]] = {
    "share-epoch-not-bumped": _share_epoch_not_bumped,
    "share-fenced-epoch-accepted": _share_fenced_epoch_accepted,
    "share-uninitialized-assigned": _share_uninitialized_assigned,
    "share-pending-not-bumped": _share_pending_not_bumped,
}


@contextmanager
def broken(name: str) -> Iterator[None]:
    """Run the block with the model variant ``name`` in force."""
    known = {
        **VARIANTS,
        **FAILOVER_VARIANTS,
        **CONSUMER_VARIANTS,
        **MIGRATION_VARIANTS,
        **SCENARIO_VARIANTS,
        **SHARE_VARIANTS,
    }
    if name not in known:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(known)}")
    undo = known[name]()
    try:
        yield
    finally:
        undo()
