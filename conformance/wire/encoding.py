"""The model's vocabulary (``kgc.model.commands``) <-> Kafka wire messages (kafka-python classes).

Role: the entry points that know both sides. :func:`encode` turns a model command into a
kafka-python request object at the command's pinned ``version``; :func:`decode` turns the decoded
response back into the model's response record, keeping only the fields the model compares. Each
request type's builder and decoder are its descriptor's (``requests.py``, one ``WireRequest`` per
type); the payload and topic-id codecs they share are ``payloads.py``. Field names and
layouts follow Kafka's message specs (``clients/src/main/resources/common/message/*.json``, bundled
by kafka-python in ``kafka/protocol/schemas/resources``).

Member ids (:class:`MemberIds`): the broker generates member ids; the model names the n-th id handed
to client ``cK`` as ``cK-n`` (:func:`kgc.model.commands.member_name`). A real id gets its symbolic
name the first time it is revealed to a client as *its own* id: the ``member_id`` field of that
client's JoinGroup response, including the ``MEMBER_ID_REQUIRED`` answer (KIP-394). Ids that show up
elsewhere first (a leader's member list, DescribeGroups, a LeaveGroup result) are *not* named on
sight, because their owner is not known, unless the answer itself names the owner: a
DescribeGroups member listed with client id ``kgc-cK`` (:func:`attribute_by_client`). Callers handle
the rest in two passes (see
:func:`learn_own_id`, :func:`all_ids_known`): register the own id of every response that arrived
together, then decode; if an id is still unknown, wait a little for its owner's answer. If it never
comes, :func:`decode` names it ``unknown-<real id>``, which no model state allows, so the checker
reports the divergence instead of the adapter hiding it.

Outgoing symbolic ids the broker never revealed (a model command naming ``stranger`` or ``c1-7``
before ``c1`` got a 7th id) map to a stable fake real id ``kgc-stranger-<name>``; answers that echo
it (LeaveGroup v3+ member results) map back to the same name. ``""`` stays ``""``.

Opaque payloads: protocol metadata and assignments are the UTF-8 bytes of the model's strings;
bytes that are not UTF-8 decode with backslash escapes (visible in a divergence, never a crash).

Version coverage (what kafka-python 3.0.12 encodes; a broker accepts a sub-range, e.g. 4.x dropped
some old versions per KIP-896):

==================  ========  ==============================================================
API                 versions  layout notes
==================  ========  ==============================================================
JoinGroup           0-9       rebalance_timeout_ms v1+, group_instance_id v5+, reason v8+
SyncGroup           0-5       group_instance_id v3+, protocol_type/_name v5+
Heartbeat           0-4       group_instance_id v3+
LeaveGroup          0-5       v0-2 single ``member_id`` (exactly one member), v3+ ``members``
OffsetCommit        2-10      v10 names topics by id: pass ``topic_ids`` (name -> UUID)
OffsetFetch         1-10      v8+ batched ``groups`` layout (one group); v10 topic ids
DescribeGroups      0-6
FindCoordinator     0-6       v0-3 ``key``, v4+ batched ``coordinator_keys`` (one key)
ListGroups          0-5       StatesFilter / GroupState v4+, TypesFilter / GroupType v5+
InitProducerId      0-6       ProducerId/Epoch v3+ (sent -1/-1); to the transaction coordinator
AddOffsetsToTxn     0-4       to the transaction coordinator
TxnOffsetCommit     0-5       GenerationId/MemberId/GroupInstanceId v3+, leader epoch v2+
EndTxn              0-5       ProducerId/ProducerEpoch in the answer v5+ (KIP-890)
==================  ========  ==============================================================

The KIP-848 and KIP-932 requests are built from Kafka's own specs (``message_specs.py``):
ShareGroupHeartbeat and ShareGroupDescribe v1 only, their answers naming topics by id.

Transactional ids are symbolic (``t1``) and sent as ``<group id>-t1``, so each example's are its
own; producer ids are symbolic too: the n-th one an answer revealed is ``n``
(:meth:`MemberIds.producer`).

Normalisations (each makes one model field version-independent; all documented on the field):

* JoinGroup ``protocol_name``: v0-6 cannot encode null and send ``""`` on errors; an error
  response's ``""`` decodes as ``None`` like v7+'s null.
* OffsetFetch ``error``: v0-1 have no top-level error code (``"NONE"``); v8+ use the group's.
* OffsetFetch partition ``metadata``: null decodes as ``""``.
* ListGroups: only the run's own group is kept (the broker lists every group it coordinates);
  ``group_state`` below v4 and ``group_type`` below v5 are ``""``.
* Member lists (JoinGroup leader's ``members``, DescribeGroups ``members``) and partition lists
  are sorted (by symbolic member id; by ``(topic, partition)``); LeaveGroup results keep request
  order, as the model's record says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgc.conformance.wire.requests import REQUESTS, Wire
from kgc.model import commands as m

__all__ = [
    "MemberIds",
    "REQUEST_CLASSES",
    "all_ids_known",
    "attribute_by_client",
    "decode",
    "encode",
    "learn_own_id",
]

FAKE_ID_PREFIX = "kgc-stranger-"
UNKNOWN_PREFIX = "unknown-"

#: model command type -> kafka-python request class (each request type's, ``requests.py``; the
#: KIP-848 ones, built from Kafka's specs on first use, through :func:`request_class`)
REQUEST_CLASSES: dict[str, Any] = {
    name: w.request_class for name, w in REQUESTS.items() if w.request_class is not None
}


# ------------------------------------------------------------------------------------ member ids


class MemberIds:
    """Real <-> symbolic member ids for one group (see the module docstring for the rule)."""

    def __init__(self) -> None:
        self._symbolic: dict[str, str] = {}  # real -> symbolic
        self._real: dict[str, str] = {}  # symbolic -> real (revealed ids only)
        self._count: dict[str, int] = {}  # client -> ids revealed to it
        self._fake: dict[str, str] = {}  # fake real id -> symbolic name
        self._producers: dict[int, int] = {}  # real producer id -> symbolic (1, 2, …)

    def symbolic(self, real: str, *, owner_client: str | None = None) -> str | None:
        """Symbolic name of ``real``. With ``owner_client`` (the id was revealed to that client as
        its own), an unseen id gets the client's next name ``cK-(n+1)``. Without it, an unseen id
        gives ``None``: the caller defers until the owner's answer arrives."""
        if real == m.NO_MEMBER_ID:
            return m.NO_MEMBER_ID
        known = self._symbolic.get(real) or self._fake.get(real)
        if known is not None:
            return known
        if owner_client is None:
            return None
        n = self._count.get(owner_client, 0) + 1
        name = m.member_name(owner_client, n)
        self._count[owner_client] = n
        self._symbolic[real] = name
        self._real[name] = real
        return name

    def real(self, symbolic: str) -> str:
        """Real id to send for ``symbolic``; an unrevealed name gets a stable fake id."""
        if symbolic == m.NO_MEMBER_ID:
            return m.NO_MEMBER_ID
        real = self._real.get(symbolic)
        if real is not None:
            return real
        fake = FAKE_ID_PREFIX + symbolic
        self._fake[fake] = symbolic
        return fake

    def chosen(self, member_id: str) -> None:
        """A member id the client chose itself (ConsumerGroupHeartbeat, KIP-1082;
        ShareGroupHeartbeat, KIP-932): its symbolic name is the real id, for every later request
        that names it (OffsetCommit, OffsetFetch)."""
        if member_id != m.NO_MEMBER_ID and member_id not in self._real:
            self._real[member_id] = member_id
            self._symbolic[member_id] = member_id

    def name_or_unknown(self, real: str) -> str:
        """Symbolic name, or ``unknown-<real>`` for an id no client was ever told is its own."""
        name = self.symbolic(real)
        return UNKNOWN_PREFIX + real if name is None else name

    def producer(self, real: int) -> int:
        """The symbolic producer id of real producer id ``real``: the n-th one the run was given
        is ``n`` (as the model numbers them, ``classic/transactions.py``); -1 stays -1."""
        if real < 0:
            return real
        producers = self._producers
        if real not in producers:
            producers[real] = len(producers) + 1
        return producers[real]

    def producer_real(self, symbolic: int) -> int:
        """The real producer id to send for ``symbolic``; one the run was never given is sent
        as a real id no broker hands out early (``2**62 + n``): a producer id mapping error."""
        for real, name in self._producers.items():
            if name == symbolic:
                return real
        return symbolic if symbolic < 0 else 2**62 + symbolic

    def as_dict(self) -> dict[str, str]:
        """``symbolic -> real`` for every revealed id (for traces)."""
        return dict(self._real)

    def __len__(self) -> int:
        return len(self._real)

    def __repr__(self) -> str:
        return f"MemberIds({self._real!r})"


# --------------------------------------------------------------------------------------- encode


def request_class(api: str) -> Any:
    """The kafka-python request class of a model command type: kafka-python's own, or for the
    KIP-848 APIs one built from Kafka's message specs (``message_specs.py``, fetched on first
    use)."""
    if api in REQUEST_CLASSES:
        return REQUEST_CLASSES[api]
    from kgc.conformance.wire.message_specs import message_classes

    return message_classes(api)[0]


def _check_version(command: m.Request) -> int:
    cls = request_class(command.type)
    v = command.version
    lo, hi = cls.valid_versions
    if not lo <= v <= hi:
        raise ValueError(f"{command.type} v{v}: kafka-python encodes v{lo}-v{hi}")
    return v


def _wire_request(command: m.Request) -> Any:
    w = REQUESTS.get(command.type) if hasattr(command, "type") else None
    if w is None:
        raise TypeError(f"not a request command: {command!r}")
    return w


def encode(
    command: m.Request,
    group_id: str,
    ids: MemberIds,
    *,
    topic_ids: Mapping[str, Any] | None = None,
) -> tuple[Any, int]:
    """``(kafka-python request object, version)`` for a model command at ``command.version``.

    ``group_id`` is not part of the model's vocabulary; the caller owns it. ``topic_ids`` (topic
    name -> ``uuid.UUID``) is needed only for OffsetCommit/OffsetFetch v10+, which name topics by
    id. Raises ``ValueError`` for a version kafka-python cannot encode or a command the version
    cannot express (LeaveGroup v0-2 with other than one member). The request type's builder is
    its descriptor's (``requests.py``).
    """
    v = _check_version(command)
    req = _wire_request(command).build(
        command, Wire(group_id=group_id, ids=ids, topic_ids=topic_ids)
    )
    req.API_VERSION = v
    return req, v


# --------------------------------------------------------------------------------------- decode


def learn_own_id(command: m.Request, response: Any, ids: MemberIds) -> str | None:
    """Register the id a JoinGroup response reveals to ``command.client`` as its own (also on
    errors such as ``MEMBER_ID_REQUIRED``); return its symbolic name. Other responses reveal no own
    id: ``None``. Idempotent."""
    if isinstance(command, m.JoinGroup) and response.member_id:
        return ids.symbolic(response.member_id, owner_client=command.client)
    return None


def member_ids_in(command: m.Request, response: Any) -> list[str]:
    """Every real member id a decoded response mentions besides the receiver's own JoinGroup id
    (its descriptor's ``member_ids``)."""
    w = REQUESTS.get(command.type)
    return [] if w is None else w.member_ids(command, response)


def member_owners_in(command: m.Request, response: Any) -> list[tuple[str, str]]:
    """``(real member id, client)`` for each member a decoded response attributes to one of the
    run's clients itself (its descriptor's ``member_owners``: DescribeGroups' ``client_id``)."""
    w = REQUESTS.get(command.type)
    return [] if w is None else w.member_owners(command, response)


def attribute_by_client(command: m.Request, response: Any, ids: MemberIds) -> None:
    """Name each unknown id that ``response`` itself attributes to a client (a DescribeGroups
    member listed with client id ``kgc-cK`` before ``cK``'s JoinGroup answered) as that client's
    next id. Only when the answer holds exactly one such unknown id for the client: with two, their
    order is not known, and they wait for their owners' answers. Naming is a claim the owner's
    later answer checks: if ``cK`` is then told another id, that one becomes ``cK-(n+1)`` and no
    model state allows the mismatch."""
    unknown: dict[str, set[str]] = {}
    for real, client in member_owners_in(command, response):
        if ids.symbolic(real) is None:
            unknown.setdefault(client, set()).add(real)
    for client, reals in unknown.items():
        if len(reals) == 1:
            ids.symbolic(next(iter(reals)), owner_client=client)


def all_ids_known(command: m.Request, response: Any, ids: MemberIds) -> bool:
    """Whether every member id in ``response`` already has a symbolic name (call
    :func:`learn_own_id` on every response that arrived together first)."""
    return all(ids.symbolic(r) is not None for r in member_ids_in(command, response))


def decode(
    command: m.Request,
    response: Any,
    ids: MemberIds,
    *,
    topic_ids: Mapping[str, Any] | None = None,
    group_id: str | None = None,
    client_ports: Mapping[int, str] | None = None,
) -> m.Response:
    """The model's response record for a decoded kafka-python response to ``command``: its
    request type's decoder (``requests.py``).

    Learns the JoinGroup own id first (:func:`learn_own_id`). Ids still unknown are named
    ``unknown-<real id>`` (see the module docstring). ``topic_ids`` maps names to ids for
    OffsetCommit/OffsetFetch v10+ responses, which carry only topic ids. ``group_id``, the run's
    group, is needed for ListGroups, whose answer lists every group the broker coordinates.
    ``client_ports``: each simulated client connection's local port -> its client id, for an
    answer that names a client by its address and port (``requests.client_host``).
    """
    w = _wire_request(command)
    wire = Wire(group_id=group_id, ids=ids, topic_ids=topic_ids, client_ports=client_ports)
    return w.decode(command, response, wire)  # type: ignore[no-any-return]
