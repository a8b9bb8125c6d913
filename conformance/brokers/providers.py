"""One interface for "a broker to test against": embedded, external, or in a container.

Every provider has ``start() -> self``, ``stop()``, context-manager use, ``bootstrap_servers``,
``version``, ``can_inject_faults``, ``describe()`` (implementation, version, mode, nodes, config:
the target part of a trace manifest) and the fault methods ``kill``/``pause``/``resume``/``restart``
(by node id). Only :class:`~kgc.conformance.brokers.embedded.EmbeddedKafka` can inject faults; the
others raise :class:`FaultsUnavailable`, so fault tests skip against a broker someone else runs.
A broker kgc did not start is only ever touched under the ``kgc-`` group prefix
(docs/design-notes.md, "Isolation").
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol, runtime_checkable

from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.errors import (
    BrokerConfigError,
    BrokerUnreachable,
    DockerUnavailable,
    FaultsUnavailable,
)
from kgc.conformance.wire import probe
from kgc.conformance.wire.client import parse_bootstrap
from kgc.conformance.wire.security import PLAINTEXT, ClientSecurity
from kgc.model.apis import KEYS

REACH_TIMEOUT_S = 5.0


@runtime_checkable
class KafkaProvider(Protocol):
    """What the engine, the CLI and the pytest plugin need from a broker."""

    can_inject_faults: bool

    @property
    def bootstrap_servers(self) -> str: ...

    @property
    def version(self) -> str: ...

    def start(self) -> Any: ...

    def stop(self) -> None: ...

    def describe(self) -> dict[str, Any]: ...

    def kill(self, node_id: int) -> None: ...

    def pause(self, node_id: int) -> None: ...

    def resume(self, node_id: int) -> None: ...

    def restart(self, node_id: int) -> None: ...


class _NoFaults:
    can_inject_faults = False
    _why = "this broker was started by someone else; fault tests skip"

    def kill(self, node_id: int) -> None:
        raise FaultsUnavailable(f"cannot kill node {node_id}: {self._why}")

    def pause(self, node_id: int) -> None:
        raise FaultsUnavailable(f"cannot pause node {node_id}: {self._why}")

    def resume(self, node_id: int) -> None:
        raise FaultsUnavailable(f"cannot resume node {node_id}: {self._why}")

    def restart(self, node_id: int) -> None:
        raise FaultsUnavailable(f"cannot restart node {node_id}: {self._why}")


def rules_for(protocol_level: str | None) -> tuple[str, str]:
    """The model profile that judges a broker kgc did not start, and why: the Apache Kafka
    release whose API versions its ApiVersions answer matches (kafka-python's table of releases),
    mapped to that release line's profile (the nearest older line when kgc has no profile for
    it). With no match, the newest rules, and the reason says they are assumed."""
    from kgc.model.profiles import KAFKA_4_X, PROFILE_NAMES, PROFILES, release_of

    if not protocol_level or protocol_level == "unknown":
        return KAFKA_4_X.name, "assumed: ApiVersions matches no Apache Kafka release"
    try:
        level = release_of(".".join(protocol_level.split(".")[:3]))
    except ValueError:
        return KAFKA_4_X.name, f"assumed: {protocol_level!r} is not a Kafka release number"
    older = [n for n in PROFILE_NAMES if release_of(PROFILES[n].kafka_version) <= level]
    name = older[-1] if older else PROFILE_NAMES[0]
    return name, f"chosen from ApiVersions (its API versions match Kafka {protocol_level})"


class ExternalKafka(_NoFaults):
    """Any Kafka-protocol broker the user runs, given by its bootstrap servers."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        timeout_s: float = REACH_TIMEOUT_S,
        security: ClientSecurity | None = None,
    ) -> None:
        self._servers = parse_bootstrap(bootstrap_servers)
        #: how kgc connects to it (``--command-config``): TLS, SASL; PLAINTEXT by default
        self.security = security or PLAINTEXT
        self._bootstrap = bootstrap_servers
        self._timeout_s = timeout_s
        self._info: dict[str, Any] = {}

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap

    @property
    def version(self) -> str:
        return "unknown"

    @property
    def mode(self) -> str:
        return str(self._info.get("mode", "unknown"))

    def start(self) -> ExternalKafka:
        """Check that at least one bootstrap server answers ApiVersions within ~5 s."""
        reasons = []
        for host, port in self._servers:
            try:
                versions = probe.api_versions(host, port, self._timeout_s, self.security)
            except probe.ProbeError as exc:
                reasons.append(f"{host}:{port}: {exc}{_closed_hint(exc, self.security)}")
                continue
            self._learn(host, port, versions)
            return self
        raise BrokerUnreachable(
            f"cannot reach Kafka at {', '.join(reasons)}; is it running? check --bootstrap-server"
        )

    def _learn(self, host: str, port: int, versions: probe.ApiVersionsInfo) -> None:
        info: dict[str, Any] = {
            "finalized_features": dict(sorted(versions.finalized_features.items())),
            "api_keys": len(versions.api_keys),
        }
        with contextlib.suppress(Exception):  # kafka-python's table may not know this broker
            from kafka.protocol.broker_version_data import infer_broker_version_from_api_versions

            inferred = infer_broker_version_from_api_versions(versions.api_keys)
            if inferred:
                info["protocol_level"] = ".".join(map(str, inferred))
        with contextlib.suppress(probe.ProbeError):
            md = probe.metadata(host, port, self._timeout_s, self.security)
            info["nodes"] = len(md.brokers)
            info["cluster_id"] = md.cluster_id
        # A KRaft broker lists DescribeQuorum; a ZooKeeper-mode Apache Kafka lists the
        # inter-broker APIs of ZK_BROKER listeners, LeaderAndIsr among them. A broker that is not
        # Apache Kafka may list neither: then the mode is unknown, not ZooKeeper.
        if probe.DESCRIBE_QUORUM_KEY in versions.api_keys:
            info["mode"] = "kraft"
        elif KEYS["LeaderAndIsr"] in versions.api_keys:
            info["mode"] = "zookeeper"
        else:
            info["mode"] = "unknown"
        info["rules"], info["rules_source"] = rules_for(info.get("protocol_level"))
        self._info = info

    def stop(self) -> None:
        """Nothing to stop: someone else runs this broker."""

    def __enter__(self) -> ExternalKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> dict[str, Any]:
        return {
            "implementation": "unknown",
            "version": "unknown",
            "mode": self._info.get("mode", "unknown"),
            "nodes": self._info.get("nodes"),
            "bootstrap_servers": self._bootstrap,
            "cluster_id": self._info.get("cluster_id"),
            # the Apache Kafka release whose API versions it matches (kafka-python's table); a
            # hint only: other implementations speak the same protocol
            "protocol_level": self._info.get("protocol_level", "unknown"),
            # the model profile that judges it, and why (``rules_for``; ``kgc check --rules``)
            "model_profile": self._info.get("rules"),
            "rules_source": self._info.get("rules_source"),
            "finalized_features": self._info.get("finalized_features", {}),
            "api_keys": self._info.get("api_keys"),
            "config": {},
            "client_security": self.security.describe(),
        }


def _closed_hint(exc: probe.ProbeError, security: ClientSecurity) -> str:
    """A broker that closes a plaintext client's first request is most likely a TLS or SASL
    listener: Kafka's ``SslTransportLayer`` and ``SaslServerAuthenticator`` drop a connection
    whose first bytes are not a TLS handshake or a SaslHandshake/ApiVersions request."""
    if security.protocol != "PLAINTEXT" or "closed" not in str(exc):
        return ""
    return (
        " (a TLS or SASL listener closes a plaintext client's first request: give its "
        "security.protocol and credentials with --command-config)"
    )


class ContainerKafka(_NoFaults):
    """Kafka in a container via testcontainers (``confluentinc/cp-kafka``, KRaft).

    Needs the ``containers`` extra and a Docker engine; faults are not wired for containers.
    """

    def __init__(self, image: str | None = None) -> None:
        self._image = image
        self._container: Any = None
        self._bootstrap: str | None = None

    @property
    def bootstrap_servers(self) -> str:
        if self._bootstrap is None:
            raise RuntimeError("ContainerKafka is not started; call start() first")
        return self._bootstrap

    @property
    def version(self) -> str:
        return "unknown"

    def start(self) -> ContainerKafka:
        try:
            from testcontainers.community.kafka import KafkaContainer  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            try:
                from testcontainers.kafka import KafkaContainer  # type: ignore[import-not-found,unused-ignore]
            except ImportError as exc:
                raise DockerUnavailable(
                    f"no Docker engine answers (testcontainers is not installed: {exc}); use the "
                    "embedded broker (default) or --bootstrap-server"
                ) from None
        try:
            container = KafkaContainer(self._image) if self._image else KafkaContainer()
            container = container.with_kraft()
            container.start()
        except Exception as exc:  # docker.errors.DockerException and friends
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise DockerUnavailable(
                f"no Docker engine answers ({reason}); use the embedded broker (default) or "
                "--bootstrap-server"
            ) from None
        self._container = container
        self._bootstrap = container.get_bootstrap_server()
        return self

    def stop(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.stop()
            self._container = None

    def __enter__(self) -> ContainerKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> dict[str, Any]:
        return {
            "implementation": "apache-kafka (container)",
            "version": "unknown",
            "mode": "kraft",
            "nodes": 1,
            "image": self._image or "testcontainers default",
            "bootstrap_servers": self._bootstrap,
            "config": {},
        }


def open_target(kind: str = "embedded", **opts: Any) -> Any:
    """A provider, not yet started: ``embedded`` (EmbeddedKafka kwargs), ``external``
    (``bootstrap_servers=``) or ``container`` (``image=``)."""
    if kind == "embedded":
        return EmbeddedKafka(**opts)
    if kind == "external":
        if "bootstrap_servers" not in opts:
            raise BrokerConfigError("an external target needs bootstrap_servers=HOST:PORT")
        return ExternalKafka(**opts)
    if kind == "container":
        return ContainerKafka(**opts)
    raise BrokerConfigError(f"unknown target kind {kind!r}; use embedded, external or container")
