"""Errors raised by the conformance layer: one line each, saying what went wrong and how to fix it.

Front ends (the ``kgc`` CLI, the pytest plugin) print ``str(error)`` as is; the CLI exits with
status 2. Every subclass of :class:`KgcError` is a problem with the environment or the input,
never a bug in kgc, so no traceback is shown for it.
"""

from __future__ import annotations


class KgcError(Exception):
    """Base class: a one-line message naming the fix."""


class JavaNotFound(KgcError):
    """No usable ``java`` (missing, or older than Kafka needs)."""


class MavenNotFound(KgcError):
    """``mvn`` is needed to fetch Kafka's jars and is not on PATH."""


class MavenOffline(KgcError):
    """Maven could not reach Maven Central and nothing is cached."""


class UnknownKafkaVersion(KgcError):
    """The requested Kafka version is not published on Maven Central (or is malformed)."""


class KafkaResolutionError(KgcError):
    """Maven failed to resolve Kafka's jars for another reason (message carries Maven's words)."""


class BrokerStartError(KgcError):
    """An embedded broker did not become ready; the message carries the tail of its log."""


class PortInUse(KgcError):
    """A port the user asked for is already taken."""


class BrokerUnreachable(KgcError):
    """A broker given with --bootstrap-server does not answer."""


class FaultsUnavailable(KgcError):
    """Fault injection (kill/pause/restart) needs a broker kgc started itself."""


class DockerUnavailable(KgcError):
    """The container provider needs a Docker engine and testcontainers."""


class BrokerConfigError(KgcError, ValueError):
    """An EmbeddedKafka setting that cannot work (mode/version mismatch, reserved key, ...)."""


class ProtocolUnsupported(KgcError):
    """The broker does not offer the group protocol asked for (e.g. KIP-848's
    ConsumerGroupHeartbeat on a ZooKeeper-mode or pre-4.0 broker)."""
