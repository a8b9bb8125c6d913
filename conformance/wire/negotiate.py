"""Which request versions the suite sends to a broker, and which request types it cannot send.

A version goes out only if all three sides speak it: the broker (its ApiVersions answer, read
once per connection), kafka-python's generated classes (each request type's in ``requests.py``,
from Kafka's JSON message specs) and the model profile that judges the broker
(``Profile.api_range``, the versions that release accepts). The suite draws every version all
three speak (``properties.machine.DEFAULT_VERSIONS`` holds kafka-python's, ``model/requests.py``
what each changes), oldest first. A request type with no common
version is switched off: its rules send nothing, and the summary lists it with the coverage cells
it would have reached. A request type a search draws only when asked (``RequestType.opt_in``) is
negotiated only when asked (``opt_in``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kgc.conformance.wire.client import Cluster
from kgc.conformance.wire.requests import REQUESTS
from kgc.model.profiles import Profile
from kgc.model.requests import CLASSIC_REQUESTS, DEFAULT_REQUESTS
from kgc.properties.machine import drawn_versions

# the classic group request types every search sends, by api key (``model/requests.py``; the keys
# are Kafka's ApiKeys, ``model/apis.py``)
API_KEYS: dict[str, int] = {name: CLASSIC_REQUESTS[name].key for name in DEFAULT_REQUESTS}


@dataclass(frozen=True, slots=True, kw_only=True)
class Negotiated:
    versions: dict[str, tuple[int, ...]]  # request type -> versions the suite draws from
    unsupported: dict[str, str]  # request type -> why it is switched off


def negotiate(
    broker: dict[int, tuple[int, int]], profile: Profile, opt_in: Iterable[str] = ()
) -> Negotiated:
    """The versions for a broker whose ApiVersions answer is ``broker`` (api key -> range), for
    the request types every search sends and the ``opt_in`` ones a search asks for."""
    versions: dict[str, tuple[int, ...]] = {}
    unsupported: dict[str, str] = {}
    keys = {**API_KEYS, **{api: CLASSIC_REQUESTS[api].key for api in opt_in}}
    for api, key in keys.items():
        if key not in broker:
            unsupported[api] = "not offered by the broker"
            continue
        lo, hi = broker[key]
        kp_lo, kp_hi = REQUESTS[api].cls().valid_versions
        try:
            model = profile.api_range(api)
        except KeyError:
            unsupported[api] = f"not a request of {profile.name}'s rules"
            continue
        low, high = max(lo, kp_lo, model.min_version), min(hi, kp_hi, model.max_version)
        if low > high:
            unsupported[api] = (
                f"no common version (broker v{lo}-{hi}, kafka-python v{kp_lo}-{kp_hi}, "
                f"{profile.name} rules v{model.min_version}-{model.max_version})"
            )
            continue
        preferred = tuple(v for v in drawn_versions(api) if low <= v <= high)
        versions[api] = preferred or (high,)
    return Negotiated(versions=versions, unsupported=unsupported)


def negotiate_with(cluster: Cluster, profile: Profile, opt_in: Iterable[str] = ()) -> Negotiated:
    """:func:`negotiate` with the ApiVersions answer of the broker's first node."""
    cluster.refresh_metadata()
    node = min(b.node_id for b in cluster.metadata().brokers)
    return negotiate(cluster.connection(node).broker_versions or {}, profile, opt_in)
