"""Which request versions the suite sends to a broker, and which request types it cannot send.

A version goes out only if all three sides speak it: the broker (its ApiVersions answer, read
once per connection), kafka-python's generated classes (``wire.REQUEST_CLASSES``, from Kafka's
JSON message specs) and the model profile that judges the broker (``Profile.api_ranges``, the
versions that release accepts). Of those, the suite keeps the versions it exercises by default
(``properties.machine.DEFAULT_VERSIONS``, chosen so each behaviour difference between versions is
drawn), so a run against Apache Kafka is unchanged; where none of them is common, it sends the
newest common version. A request type with no common version is switched off: its rules send
nothing, and the summary lists it with the coverage cells it would have reached.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgc.conformance.wire.client import Cluster
from kgc.conformance.wire.encoding import REQUEST_CLASSES
from kgc.model.apis import CLASSIC_GROUP_APIS, keys_of
from kgc.model.profiles import Profile
from kgc.properties.machine import DEFAULT_VERSIONS

# the classic group request types the suite sends, by api key (Kafka's ApiKeys, model/apis.py)
API_KEYS: dict[str, int] = keys_of(CLASSIC_GROUP_APIS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Negotiated:
    versions: dict[str, tuple[int, ...]]  # request type -> versions the suite draws from
    unsupported: dict[str, str]  # request type -> why it is switched off


def negotiate(broker: dict[int, tuple[int, int]], profile: Profile) -> Negotiated:
    """The versions for a broker whose ApiVersions answer is ``broker`` (api key -> range)."""
    versions: dict[str, tuple[int, ...]] = {}
    unsupported: dict[str, str] = {}
    for api, key in API_KEYS.items():
        if key not in broker:
            unsupported[api] = "not offered by the broker"
            continue
        lo, hi = broker[key]
        kp_lo, kp_hi = REQUEST_CLASSES[api].valid_versions
        model = profile.api_range(api)
        low, high = max(lo, kp_lo, model.min_version), min(hi, kp_hi, model.max_version)
        if low > high:
            unsupported[api] = (
                f"no common version (broker v{lo}-{hi}, kafka-python v{kp_lo}-{kp_hi}, "
                f"{profile.name} rules v{model.min_version}-{model.max_version})"
            )
            continue
        preferred = tuple(v for v in DEFAULT_VERSIONS[api] if low <= v <= high)
        versions[api] = preferred or (high,)
    return Negotiated(versions=versions, unsupported=unsupported)


def negotiate_with(cluster: Cluster, profile: Profile) -> Negotiated:
    """:func:`negotiate` with the ApiVersions answer of the broker's first node."""
    cluster.refresh_metadata()
    node = min(b.node_id for b in cluster.metadata().brokers)
    return negotiate(cluster.connection(node).broker_versions or {}, profile)
