"""Client security as Kafka's own tools take it: TLS, SASL and the ``client.properties`` file.

A :class:`ClientSecurity` says how to open a connection: ``security.protocol`` (PLAINTEXT, SSL,
SASL_PLAINTEXT, SASL_SSL), the trust and key material for TLS, and the SASL mechanism with its
credentials. :func:`load_command_config` reads it from the file given to ``kgc check
--command-config`` (the same keys as ``kafka-consumer-groups.sh --command-config``);
:func:`open_socket` connects, does the TLS handshake and the SASL exchange, and returns a socket
that speaks the Kafka protocol as the authenticated principal. Everything here is blocking: the
engine's non-blocking :class:`~kgc.conformance.wire.client.Connection` authenticates first and only
then hands the socket to its poller.

The SASL exchange follows Kafka's ``SaslClientAuthenticator``
(``clients/src/main/java/org/apache/kafka/common/security/authenticator/``): SaslHandshake v1 names
the mechanism, then each token travels in a SaslAuthenticate request (KIP-152), whose error code
and message carry the broker's verdict. The mechanisms:

* PLAIN (RFC 4616): one message, ``authzid NUL username NUL password``, with an empty authzid.
* SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677): client-first, server-first, client-final
  with the proof, server-final with the server signature, which is checked.
* OAUTHBEARER (RFC 7628) with a static token: the unsecured JWS Kafka's own
  ``OAuthBearerUnsecuredLoginCallbackHandler`` builds from ``unsecuredLoginStringClaim_sub``, or a
  compact token given as ``sasl.oauthbearer.token``.

Every failure is a :class:`SecurityError`: one line naming the cause (wrong password, a CA kgc
does not trust, a certificate for another host, a mechanism the broker does not enable, a
plaintext client on a TLS port) and the setting that fixes it.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgc.conformance.errors import KgcError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_SCRAM_HASH = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}

# Kafka error codes the SASL exchange answers (clients/.../common/protocol/Errors.java)
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58

# keys of client.properties that kgc reads; any other key is named in an error, not ignored,
# unless it is one of the client tuning keys below that do not change how kgc connects
_KNOWN_KEYS = frozenset(
    {
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.username",
        "sasl.password",
        "sasl.oauthbearer.token",
        "ssl.truststore.location",
        "ssl.truststore.type",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
    }
)
_IGNORED_KEYS = re.compile(
    r"^(client\.id|request\.timeout\.ms|default\.api\.timeout\.ms|retries|retry\.backoff\.ms|"
    r"ssl\.protocol|ssl\.enabled\.protocols|ssl\.cipher\.suites|sasl\.kerberos\..*|"
    r"ssl\.(keymanager|trustmanager)\.algorithm|ssl\.secure\.random\.implementation)$"
)
_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
    "org.apache.kafka.common.security.scram.ScramLoginModule": "SCRAM",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": "OAUTHBEARER",
}
_JAAS_OPTION = re.compile(r'([A-Za-z_][\w.]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')


class SecurityError(KgcError):
    """A security setting that cannot work, or a broker that refused the credentials: one line."""


@dataclass(frozen=True, kw_only=True)
class ClientSecurity:
    """How to connect: ``security.protocol`` with its TLS and SASL settings.

    ``ClientSecurity()`` is PLAINTEXT, which is what kgc always spoke. PEM is read as is; a PKCS12
    store is converted (with ``cryptography``); a JKS store is refused with the keytool command
    that converts it.
    """

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    ca_pem: str | None = field(default=None, repr=False)
    cert_pem: str | None = field(default=None, repr=False)
    key_pem: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    source: str = "defaults"

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def principal(self) -> str:
        """The principal the broker's default principal builder names for these credentials
        (``DefaultKafkaPrincipalBuilder``): the SASL authorization id, the TLS client
        certificate's subject with mTLS, else ``User:ANONYMOUS``."""
        if self.sasl and self.mechanism == "OAUTHBEARER":
            return f"User:{_token_subject(self.token or '')}"
        if self.sasl:
            return f"User:{self.username}"
        if self.tls and self.cert_pem:
            return f"User:{certificate_subject(self.cert_pem)}"
        return "User:ANONYMOUS"

    def describe(self) -> dict[str, Any]:
        """For manifests and the summary: what was used, never a secret."""
        out: dict[str, Any] = {"security_protocol": self.protocol, "principal": self.principal}
        if self.sasl:
            out["sasl_mechanism"] = self.mechanism
        if self.tls:
            out["mutual_tls"] = self.cert_pem is not None
            out["hostname_verified"] = self.check_hostname
        return out

    def with_source(self, source: str) -> ClientSecurity:
        return replace(self, source=source)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context these settings make: built once and shared by every connection (a
        run opens one per simulated client; the key and chain go through a temporary file)."""
        return _ssl_context(self)


PLAINTEXT = ClientSecurity()


# ----------------------------------------------------------------------------- client.properties


@functools.lru_cache(maxsize=16)
def _ssl_context(security: ClientSecurity) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=security.ca_pem)
    ctx.check_hostname = security.check_hostname
    if security.cert_pem is not None and security.key_pem is not None:
        _load_pem_chain(
            ctx, security.cert_pem, security.key_pem, security.key_password, security.source
        )
    return ctx


def parse_properties(text: str) -> dict[str, str]:
    """Java ``.properties``: ``key=value`` or ``key: value``, ``#`` and ``!`` comments, a
    trailing backslash continues the line (``java.util.Properties.load``)."""
    props: dict[str, str] = {}
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry, logical = "".join(logical), []
        m = re.match(r"([^=:\s]+)\s*[=:]?\s*(.*)$", entry)
        if m:
            props[m.group(1)] = m.group(2).strip()
    return props


def load_command_config(path: str | os.PathLike[str]) -> ClientSecurity:
    """The :class:`ClientSecurity` a ``client.properties`` file describes, or a one-line
    :class:`SecurityError` naming the key that is wrong."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SecurityError(f"cannot read --command-config {p}: {exc.strerror or exc}") from None
    return from_properties(parse_properties(text), source=str(p), base=p.parent)


def from_properties(
    props: Mapping[str, str], *, source: str = "client properties", base: Path | None = None
) -> ClientSecurity:
    unknown = sorted(k for k in props if k not in _KNOWN_KEYS and not _IGNORED_KEYS.match(k))
    if unknown:
        raise SecurityError(
            f"{source}: kgc does not know {', '.join(unknown)}; it reads security.protocol, "
            "sasl.* and ssl.* keys (see docs/security.md)"
        )
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise SecurityError(
            f"{source}: security.protocol={protocol} is not one of {', '.join(PROTOCOLS)}"
        )
    fields: dict[str, Any] = {"protocol": protocol, "source": source}
    if protocol in ("SSL", "SASL_SSL"):
        fields |= _tls_fields(props, source, base)
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        fields |= _sasl_fields(props, source)
    elif "sasl.mechanism" in props or "sasl.jaas.config" in props:
        raise SecurityError(
            f"{source}: sasl.* is set but security.protocol={protocol} does not use SASL; "
            "use SASL_PLAINTEXT or SASL_SSL"
        )
    return ClientSecurity(**fields)


def _tls_fields(props: Mapping[str, str], source: str, base: Path | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("https", ""):
        raise SecurityError(
            f"{source}: ssl.endpoint.identification.algorithm={algorithm} is not 'https' or empty"
        )
    out["check_hostname"] = algorithm == "https"
    if "ssl.truststore.certificates" in props:
        out["ca_pem"] = props["ssl.truststore.certificates"].replace("\\n", "\n")
    elif "ssl.truststore.location" in props:
        kind = props.get("ssl.truststore.type", _store_type(props["ssl.truststore.location"]))
        path = _resolve(props["ssl.truststore.location"], base, source, "ssl.truststore.location")
        out["ca_pem"] = _trust_pem(path, kind.upper(), props.get("ssl.truststore.password"), source)
    if "ssl.keystore.key" in props:
        out["key_pem"] = props["ssl.keystore.key"].replace("\\n", "\n")
        out["cert_pem"] = props.get("ssl.keystore.certificate.chain", "").replace("\\n", "\n")
        out["key_password"] = props.get("ssl.key.password")
        if not out["cert_pem"]:
            raise SecurityError(f"{source}: ssl.keystore.key needs ssl.keystore.certificate.chain")
    elif "ssl.keystore.location" in props:
        kind = props.get("ssl.keystore.type", _store_type(props["ssl.keystore.location"]))
        path = _resolve(props["ssl.keystore.location"], base, source, "ssl.keystore.location")
        cert, key = _key_pem(path, kind.upper(), props, source)
        out |= {"cert_pem": cert, "key_pem": key, "key_password": props.get("ssl.key.password")}
    if out.get("cert_pem"):
        _load_pem_chain(
            ssl.create_default_context(),
            out["cert_pem"],
            out["key_pem"],
            out.get("key_password"),
            source,
        )
    if out.get("ca_pem"):
        try:
            ssl.create_default_context(cadata=out["ca_pem"])
        except (ssl.SSLError, ValueError) as exc:
            raise SecurityError(
                f"{source}: the truststore holds no usable certificate: {exc}"
            ) from None
    return out


def _sasl_fields(props: Mapping[str, str], source: str) -> dict[str, Any]:
    mechanism = props.get("sasl.mechanism", "GSSAPI").upper()
    if mechanism not in MECHANISMS:
        raise SecurityError(
            f"{source}: sasl.mechanism={mechanism} is not supported by kgc; use one of "
            + ", ".join(MECHANISMS)
        )
    options: dict[str, str] = {}
    if "sasl.jaas.config" in props:
        module, options = parse_jaas(props["sasl.jaas.config"], source)
        family = mechanism.split("-")[0]
        if module != family:
            raise SecurityError(
                f"{source}: sasl.jaas.config uses the {module} login module but "
                f"sasl.mechanism={mechanism}"
            )
    username = props.get("sasl.username", options.get("username"))
    password = props.get("sasl.password", options.get("password"))
    if mechanism == "OAUTHBEARER":
        token = props.get("sasl.oauthbearer.token") or _unsecured_token(options, source)
        return {"mechanism": mechanism, "token": token}
    if not username or password is None:
        raise SecurityError(
            f"{source}: SASL {mechanism} needs a username and a password (sasl.jaas.config "
            'username="..." password="...", or sasl.username and sasl.password)'
        )
    return {"mechanism": mechanism, "username": username, "password": password}


def parse_jaas(text: str, source: str = "sasl.jaas.config") -> tuple[str, dict[str, str]]:
    """``<LoginModule> required key="value" ...;`` -> (mechanism family, options)."""
    m = re.match(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*$", text)
    if not m:
        raise SecurityError(
            f"{source}: sasl.jaas.config does not parse; expected "
            '\'<LoginModule> required username="..." password="...";\''
        )
    module = _JAAS_MODULES.get(m.group(1))
    if module is None:
        raise SecurityError(
            f"{source}: sasl.jaas.config names {m.group(1)}; kgc knows "
            + ", ".join(sorted(_JAAS_MODULES))
        )
    options = {
        k: (quoted.replace('\\"', '"').replace("\\\\", "\\") if quoted is not None else bare)
        for k, quoted, bare in (
            (g[0], g[1] if g[2] == "" else None, g[2]) for g in _JAAS_OPTION.findall(m.group(3))
        )
    }
    return module, options


def _unsecured_token(options: Mapping[str, str], source: str) -> str:
    """The unsecured JWS (``alg: none``) that ``OAuthBearerUnsecuredLoginCallbackHandler``
    builds from ``unsecuredLoginStringClaim_sub`` (and ``unsecuredLoginLifetimeSeconds``)."""
    sub = options.get("unsecuredLoginStringClaim_sub")
    if not sub:
        raise SecurityError(
            f"{source}: OAUTHBEARER needs sasl.oauthbearer.token, or sasl.jaas.config with "
            'unsecuredLoginStringClaim_sub="<principal>"'
        )
    import time

    now = int(time.time())
    lifetime = int(options.get("unsecuredLoginLifetimeSeconds", "3600"))
    claims = {"sub": sub, "iat": now, "exp": now + lifetime}

    def b64(obj: dict[str, Any]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return f"{b64({'alg': 'none'})}.{b64(claims)}."


def _token_subject(token: str) -> str:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return str(claims.get("sub", "unknown"))
    except (IndexError, ValueError):
        return "unknown"


# ------------------------------------------------------------------------------- stores and PEM


def _store_type(location: str) -> str:
    suffix = Path(location).suffix.lower()
    return {".pem": "PEM", ".crt": "PEM", ".p12": "PKCS12", ".pfx": "PKCS12"}.get(suffix, "JKS")


def _resolve(location: str, base: Path | None, source: str, key: str) -> Path:
    path = Path(location).expanduser()
    if not path.is_absolute() and base is not None and not path.exists():
        path = base / path
    if not path.is_file():
        raise SecurityError(f"{source}: {key}={location} is not a readable file")
    return path


def _jks(path: Path, source: str) -> SecurityError:
    return SecurityError(
        f"{source}: {path} is a JKS store, which kgc cannot read; convert it with "
        f"'keytool -importkeystore -srckeystore {path} -destkeystore {path.stem}.p12 "
        "-deststoretype PKCS12' or export PEM"
    )


def _trust_pem(path: Path, kind: str, password: str | None, source: str) -> str:
    if kind == "PEM":
        return path.read_text(encoding="utf-8")
    if kind == "PKCS12":
        _, cert, extra = _pkcs12(path, password, source)
        return "".join(c for c in [cert, *extra] if c)
    raise _jks(path, source)


def _key_pem(path: Path, kind: str, props: Mapping[str, str], source: str) -> tuple[str, str]:
    if kind == "PEM":
        text = path.read_text(encoding="utf-8")
        key = re.search(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", text, re.S
        )
        certs = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", text, re.S)
        if key is None or not certs:
            raise SecurityError(
                f"{source}: {path} must hold a private key and its certificate chain (PEM)"
            )
        return "\n".join(certs) + "\n", key.group(0) + "\n"
    if kind == "PKCS12":
        key, cert, extra = _pkcs12(path, props.get("ssl.keystore.password"), source)
        if key is None or cert is None:
            raise SecurityError(f"{source}: {path} holds no private key with a certificate")
        return cert + "".join(extra), key
    raise _jks(path, source)


def _pkcs12(
    path: Path, password: str | None, source: str
) -> tuple[str | None, str | None, list[str]]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise SecurityError(
            f"{source}: reading the PKCS12 store {path} needs cryptography: "
            "pip install 'kafka-group-conformance[security]', or export PEM"
        ) from None
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(
            path.read_bytes(), password.encode() if password else None
        )
    except ValueError as exc:
        raise SecurityError(f"{source}: cannot open the PKCS12 store {path}: {exc}") from None
    pem = serialization.Encoding.PEM
    key_text = (
        key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        if key is not None
        else None
    )
    cert_text = cert.public_bytes(pem).decode() if cert is not None else None
    return key_text, cert_text, [c.public_bytes(pem).decode() for c in extra]


def _load_pem_chain(
    ctx: ssl.SSLContext, cert_pem: str, key_pem: str, key_password: str | None, source: str
) -> None:
    """``SSLContext.load_cert_chain`` takes files only: write both to a private temporary file."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=True) as f:
        os.chmod(f.name, 0o600)
        f.write(key_pem + "\n" + cert_pem)
        f.flush()
        try:
            ctx.load_cert_chain(f.name, password=key_password)
        except (ssl.SSLError, ValueError) as exc:
            raise SecurityError(
                f"{source}: the client key and certificate do not load: {exc}; check "
                "ssl.keystore.* and ssl.key.password"
            ) from None


def certificate_subject(cert_pem: str) -> str:
    """The subject of the first certificate, written as Java's ``X500Principal.getName()``
    (RFC 2253: most specific first, e.g. ``CN=alice,O=kgc``)."""
    try:
        from cryptography import x509
    except ImportError:
        return "unknown (needs cryptography)"
    cert = x509.load_pem_x509_certificate(cert_pem.encode())
    return cert.subject.rfc4514_string()


# ------------------------------------------------------------------------------------ connecting


def open_socket(
    host: str, port: int, timeout_s: float, security: ClientSecurity | None = None
) -> socket.socket:
    """A connected, blocking socket to ``host:port``: TLS handshake done and SASL authenticated
    as ``security`` says. Connection failures raise ``OSError``; TLS and SASL failures raise
    :class:`SecurityError`."""
    security = security or PLAINTEXT
    sock = socket.create_connection((host, port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        if security.tls:
            sock = _tls_handshake(sock, host, port, security)
        if security.sasl:
            authenticate(sock, host, port, security)
    except BaseException:
        sock.close()
        raise
    return sock


def _tls_handshake(
    sock: socket.socket, host: str, port: int, security: ClientSecurity
) -> socket.socket:
    where = f"{host}:{port}"
    try:
        return security.ssl_context().wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as exc:
        if exc.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
            raise SecurityError(
                f"the TLS certificate of {where} does not name the host {host!r} "
                f"({exc.verify_message}); connect by a name the certificate carries, or set "
                "ssl.endpoint.identification.algorithm= (empty) to skip the host name check"
            ) from None
        raise SecurityError(
            f"the TLS certificate of {where} is not signed by a CA kgc trusts "
            f"({exc.verify_message}); set ssl.truststore.location to the CA that signed it"
        ) from None
    except (ssl.SSLError, OSError) as exc:  # TimeoutError too: no TLS answer at all
        said = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        raise SecurityError(
            f"the TLS handshake with {where} failed ({said}); is it a plaintext listener? use "
            "security.protocol=PLAINTEXT or SASL_PLAINTEXT"
        ) from None


def authenticate(sock: socket.socket, host: str, port: int, security: ClientSecurity) -> None:
    """SaslHandshake v1, then the mechanism's tokens in SaslAuthenticate v0 requests (v0 is what
    every release since 1.0 speaks, KIP-152; v1 only adds the session lifetime)."""
    from kafka.protocol.sasl import (
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    where = f"{host}:{port}"
    mechanism = security.mechanism or "GSSAPI"
    who = security.principal
    shake = _round_trip(
        sock, SaslHandshakeRequest(mechanism=mechanism), SaslHandshakeResponse, 1, where
    )
    if shake.error_code == UNSUPPORTED_SASL_MECHANISM:
        enabled = ", ".join(shake.mechanisms) or "none"
        raise SecurityError(
            f"{where} does not enable SASL mechanism {mechanism} (it enables {enabled}); set "
            "sasl.mechanism to one of those"
        )
    if shake.error_code == ILLEGAL_SASL_STATE:
        raise SecurityError(
            f"{where} is not a SASL listener (SaslHandshake answered ILLEGAL_SASL_STATE); use "
            "security.protocol=PLAINTEXT or SSL"
        )
    if shake.error_code != 0:
        raise SecurityError(f"SaslHandshake with {where} failed with error {shake.error_code}")

    def step(token: bytes) -> bytes:
        resp = _round_trip(
            sock, SaslAuthenticateRequest(auth_bytes=token), SaslAuthenticateResponse, 0, where
        )
        if resp.error_code != 0:
            said = resp.error_message or f"error {resp.error_code}"
            hint = (
                "; check the credentials in --command-config"
                if resp.error_code == SASL_AUTHENTICATION_FAILED
                else ""
            )
            raise SecurityError(f"{where} refused {who} with SASL {mechanism}: {said}{hint}")
        return bytes(resp.auth_bytes or b"")

    if mechanism == "PLAIN":
        assert security.username is not None and security.password is not None
        step(b"\0" + security.username.encode() + b"\0" + security.password.encode())
    elif mechanism in _SCRAM_HASH:
        _scram(step, mechanism, security, where)
    elif mechanism == "OAUTHBEARER":
        challenge = step(f"n,,\x01auth=Bearer {security.token}\x01\x01".encode())
        if challenge:  # RFC 7628 3.2.2: an error; the client answers %x01 and the server fails
            said = challenge.decode("utf-8", "replace")
            with contextlib.suppress(SecurityError):
                step(b"\x01")
            raise SecurityError(
                f"{where} refused {who}'s OAUTHBEARER token ({said}); check "
                "sasl.oauthbearer.token or the JAAS claims"
            )
    else:  # pragma: no cover - from_properties admits only MECHANISMS
        raise SecurityError(f"kgc cannot speak SASL {mechanism}")


def _scram(
    step: Any, mechanism: str, security: ClientSecurity, where: str, nonce: str | None = None
) -> None:
    """RFC 5802 section 3, with Kafka's ``ScramSaslClient`` message forms. ``step`` sends one
    client message and returns the server's answer; ``nonce`` replaces the random client nonce
    (for RFC 7677's test vector)."""
    digest = _SCRAM_HASH[mechanism]
    assert security.username is not None and security.password is not None
    name = security.username.replace("=", "=3D").replace(",", "=2C")
    client_nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode()
    first_bare = f"n={name},r={client_nonce}"
    server_first = step(("n,," + first_bare).encode()).decode()
    attrs = dict(part.split("=", 1) for part in server_first.split(",") if "=" in part)
    server_nonce, salt = attrs.get("r", ""), attrs.get("s", "")
    iterations = attrs.get("i", "0")
    if not server_nonce.startswith(client_nonce) or not salt or not iterations.isdigit():
        raise SecurityError(f"{where} answered SCRAM's first message with {server_first!r}")
    salted = hashlib.pbkdf2_hmac(
        digest().name, security.password.encode(), base64.b64decode(salt), int(iterations)
    )
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    final_bare = f"c=biws,r={server_nonce}"
    auth_message = f"{first_bare},{server_first},{final_bare}".encode()
    signature = hmac.new(digest(client_key).digest(), auth_message, digest).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server_final = step(f"{final_bare},p={base64.b64encode(proof).decode()}".encode()).decode()
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    expected = base64.b64encode(hmac.new(server_key, auth_message, digest).digest()).decode()
    if server_final.startswith("e="):
        raise SecurityError(
            f"{where} refused {security.principal} with {mechanism}: {server_final[2:]}"
        )
    if not hmac.compare_digest(server_final, f"v={expected}"):
        raise SecurityError(
            f"{where} sent a SCRAM server signature that does not match: it does not hold "
            f"{security.principal}'s credentials (a man in the middle?)"
        )


def _round_trip(
    sock: socket.socket, request: Any, response_cls: Any, version: int, where: str
) -> Any:
    from kgc.conformance.wire import probe  # probe connects through this module

    try:
        return probe.round_trip(sock, request, response_cls, version)
    except TimeoutError:
        raise SecurityError(f"{where} did not answer {type(request).__name__} in time") from None
    except OSError as exc:  # ProbeError too: closed, or an answer that does not decode
        raise SecurityError(
            f"{where} closed the connection during SASL authentication ({exc}); is it a SASL "
            "listener, and does it take this security.protocol?"
        ) from None
