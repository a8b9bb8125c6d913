"""Secured embedded brokers: TLS, SASL and ACLs for ``kgc broker start --security KIND``.

``KIND`` is the client listener's ``security.protocol``:

* ``sasl_ssl``: SASL over TLS; the broker enables PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
  OAUTHBEARER (Kafka's unsecured JWS validator, ``OAuthBearerUnsecuredValidatorCallbackHandler``,
  its default when no server callback handler is set);
* ``ssl``: mutual TLS (``ssl.client.auth=required``); a client is named by its certificate's
  subject, e.g. ``User:CN=kgc-user`` (``DefaultKafkaPrincipalBuilder``, no mapping rules);
* ``sasl_plaintext``: SASL without TLS.

At start a private CA signs the broker's certificate (for ``127.0.0.1`` only) and one
client certificate per principal, all PEM (``ssl.keystore.type=PEM``, KIP-651). SCRAM credentials
are written into the metadata log by the broker's own ``StorageTool format --add-scram`` (KIP-900,
Kafka 3.5 on), so secured brokers run in KRaft mode from 3.5. The broker runs the standard
authorizer (``org.apache.kafka.metadata.authorizer.StandardAuthorizer``) with two principals:

* ``kgc-admin``, a super user, which kgc's own start-up probes use;
* ``kgc-user``, which may do everything to topics, groups and transactional ids that start with
  ``kgc-`` (prefixed ACLs created as the super user at start) and nothing else: no CLUSTER ACL, so
  DescribeConfigs of the broker is refused to it.

The controller listener is SASL_PLAINTEXT with PLAIN for ``kgc-admin``, and inter-broker traffic
goes over the client listener as ``kgc-admin`` (or the broker's certificate with ``ssl``): no
listener of a secured broker takes an anonymous client. ``client.properties`` files for both
principals are written to the work directory, for ``kgc check --command-config``.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.conformance.errors import BrokerConfigError
from kgc.conformance.wire.security import ClientSecurity, from_properties

KINDS = ("sasl_ssl", "ssl", "sasl_plaintext")
ADMIN = "kgc-admin"
USER = "kgc-user"
BROKER_CN = "kgc-broker"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
USER_PREFIX = "kgc-"  # the prefix of every topic, group and transactional id kgc makes

# CreateAcls codes (clients/.../common/resource/ResourceType.java, PatternType.java,
# acl/AclOperation.java, acl/AclPermissionType.java)
_TOPIC, _GROUP, _TRANSACTIONAL_ID = 2, 3, 5
_PREFIXED = 4
_ALL = 2
_ALLOW = 3

_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def check_kind(kind: str, version: str, mode: str) -> str:
    kind = kind.lower()
    if kind not in KINDS:
        raise BrokerConfigError(f"unknown --security {kind!r}; use one of {', '.join(KINDS)}")
    major, minor = (int(x) for x in version.split(".")[:2])
    if mode == "kraft" and (major, minor) < (3, 5):
        raise BrokerConfigError(
            f"kgc starts secured KRaft brokers from Kafka 3.5 (SCRAM users are written at format "
            f"time, KIP-900); Kafka {version} is older: use --kafka-version 3.9.2 or 4.x, or "
            "--mode zookeeper"
        )
    if mode == "zookeeper" and (major, minor) < (2, 7):
        raise BrokerConfigError(
            f"kgc starts secured ZooKeeper-mode brokers from Kafka 2.7 (SCRAM users are made "
            f"with AlterUserScramCredentials, KIP-554); Kafka {version} is older: use "
            "--kafka-version 2.7.2 or later"
        )
    return kind


@dataclass
class SecuritySetup:
    """The key material, passwords and broker settings of one secured embedded cluster."""

    kind: str
    dir: Path
    passwords: dict[str, str]
    store_password: str = ""  # of the broker's PKCS12 keystore

    @classmethod
    def create(cls, kind: str, directory: Path) -> SecuritySetup:
        directory.mkdir(parents=True, exist_ok=True)
        setup = cls(
            kind=kind,
            dir=directory,
            passwords={ADMIN: secrets.token_hex(12), USER: secrets.token_hex(12)},
            store_password=secrets.token_hex(12),
        )
        if kind in ("sasl_ssl", "ssl"):
            _write_pki(directory, setup.store_password)
        for who in (ADMIN, USER):
            path = setup.properties_path(who)
            path.write_text(setup._client_properties(who), encoding="utf-8")
            path.chmod(0o600)
        return setup

    # -------------------------------------------------------------------- broker side

    @property
    def protocol(self) -> str:
        return self.kind.upper()

    @property
    def listener(self) -> str:
        """The client listener's name: its protocol, so the protocol map is the identity."""
        return self.protocol

    @property
    def tls(self) -> bool:
        return self.kind in ("sasl_ssl", "ssl")

    @property
    def sasl(self) -> bool:
        return self.kind.startswith("sasl")

    def principal(self, who: str) -> str:
        return f"User:CN={who}" if self.kind == "ssl" else f"User:{who}"

    def broker_props(self, mode: str = "kraft") -> dict[str, str]:
        """Everything but ``listeners`` and ``advertised.listeners``, which the launcher sets.
        ZooKeeper mode has no controller listener and runs ``AclAuthorizer`` (ACLs in
        ZooKeeper) instead of ``StandardAuthorizer``."""
        plain_users = " ".join(f'user_{who}="{pw}"' for who, pw in self.passwords.items())
        admin_pw = self.passwords[ADMIN]
        plain_jaas = (
            f'{_PLAIN_MODULE} required username="{ADMIN}" password="{admin_pw}" {plain_users};'
        )
        supers = [f"User:{ADMIN}", f"User:CN={ADMIN}", f"User:CN={BROKER_CN}"]
        props = {
            "inter.broker.listener.name": self.listener,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": f"{self.listener}:{self.protocol},"
            "CONTROLLER:SASL_PLAINTEXT",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": plain_jaas,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": ";".join(supers),
            "allow.everyone.if.no.acl.found": "false",
        }
        if mode == "zookeeper":
            for key in [k for k in props if "controller" in k]:
                del props[key]
            props["listener.security.protocol.map"] = f"{self.listener}:{self.protocol}"
            props["authorizer.class.name"] = "kafka.security.authorizer.AclAuthorizer"
        name = self.listener.lower()
        scram_jaas = f"{_SCRAM_MODULE} required;"
        if self.sasl:
            props |= {
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                f"listener.name.{name}.plain.sasl.jaas.config": plain_jaas,
                f"listener.name.{name}.scram-sha-256.sasl.jaas.config": scram_jaas,
                f"listener.name.{name}.scram-sha-512.sasl.jaas.config": scram_jaas,
                f"listener.name.{name}.oauthbearer.sasl.jaas.config": (
                    f'{_OAUTH_MODULE} required unsecuredLoginStringClaim_sub="{ADMIN}";'
                ),
            }
        if self.tls:
            props |= {
                # PKCS12: 2.7 - 3.x refuse a PEM keystore without a key password
                # (``DefaultSslEngineFactory.createKeystore``), and Java reads every PKCS12
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(self.dir / "broker.p12"),
                "ssl.keystore.password": self.store_password,
                "ssl.key.password": self.store_password,
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(self.dir / "ca.pem"),
                "ssl.client.auth": "required" if self.kind == "ssl" else "none",
            }
        return props

    def format_args(self) -> list[str]:
        """``StorageTool format`` arguments that add every principal's SCRAM credentials."""
        if not self.sasl:
            return []
        out = []
        for who, pw in self.passwords.items():
            for mechanism in SCRAM_MECHANISMS:
                out += ["--add-scram", f"{mechanism}=[name={who},password={pw}]"]
        return out

    # -------------------------------------------------------------------- client side

    def properties_path(self, who: str) -> Path:
        return self.dir / f"{who}.properties"

    def client(self, who: str, mechanism: str | None = None) -> ClientSecurity:
        """``who``'s credentials: PLAIN unless ``mechanism`` says otherwise (the launcher's own
        probes use PLAIN, which needs no metadata: SCRAM credentials are there only once the
        broker has read its log)."""
        text = self._client_properties(who, mechanism or "PLAIN")
        from kgc.conformance.wire.security import parse_properties

        return from_properties(parse_properties(text), source=str(self.properties_path(who)))

    def _client_properties(self, who: str, mechanism: str = "SCRAM-SHA-512") -> str:
        lines = [
            f"# {who} on a kgc {self.kind} broker: kgc check --command-config {who}.properties",
            f"security.protocol={self.protocol}",
        ]
        if self.sasl:
            module = _PLAIN_MODULE if mechanism == "PLAIN" else _SCRAM_MODULE
            lines += [
                f"sasl.mechanism={mechanism}",
                f'sasl.jaas.config={module} required username="{who}" '
                f'password="{self.passwords[who]}";',
            ]
        if self.tls:
            lines += [
                "ssl.truststore.type=PEM",
                f"ssl.truststore.location={self.dir / 'ca.pem'}",
            ]
        if self.kind == "ssl":
            lines += ["ssl.keystore.type=PEM", f"ssl.keystore.location={self.dir / who}.pem"]
        return "\n".join(lines) + "\n"

    def user_acls(self) -> list[dict[str, Any]]:
        """CreateAcls creations giving ``kgc-user`` everything on ``kgc-`` resources."""
        return [
            {
                "resource_type": kind,
                "resource_name": USER_PREFIX,
                "resource_pattern_type": _PREFIXED,
                "principal": self.principal(USER),
                "host": "*",
                "operation": _ALL,
                "permission_type": _ALLOW,
            }
            for kind in (_TOPIC, _GROUP, _TRANSACTIONAL_ID)
        ]

    def describe(self) -> dict[str, Any]:
        return {
            "security": self.kind,
            "principals": {
                "super user": self.principal(ADMIN),
                "limited": self.principal(USER),
            },
            "client_properties": {who: str(self.properties_path(who)) for who in self.passwords},
        }


def create_scram_users(setup: SecuritySetup, bootstrap_servers: str, timeout_s: float = 30) -> None:
    """ZooKeeper mode: every principal's SCRAM credentials, made as ``kgc-admin`` (PLAIN) with
    AlterUserScramCredentials (KIP-554: the client salts; RFC 5802's ``Hi``), then waited for
    until ``kgc-user`` logs in with SCRAM-SHA-512 (brokers learn them from ZooKeeper)."""
    import hashlib
    import time

    from kafka.protocol.admin.users import AlterUserScramCredentialsRequest
    from kgc.conformance.wire.client import Cluster
    from kgc.conformance.wire.security import SecurityError, open_socket

    if not setup.sasl:
        return
    upsertion = AlterUserScramCredentialsRequest.ScramCredentialUpsertion
    upserts = []
    for who, pw in setup.passwords.items():
        for code, mechanism in ((1, "sha256"), (2, "sha512")):
            salt = secrets.token_bytes(16)
            salted = hashlib.pbkdf2_hmac(mechanism, pw.encode(), salt, 4096)
            upserts.append(
                upsertion(
                    name=who, mechanism=code, iterations=4096, salt=salt, salted_password=salted
                )
            )
    with Cluster(bootstrap_servers, client_id="kgc-scram", security=setup.client(ADMIN)) as c:
        conn = c.connection(min(c.brokers))
        resp = conn.request(AlterUserScramCredentialsRequest(deletions=[], upsertions=upserts))
    failed = [r for r in resp.results if r.error_code != 0]
    if failed:
        raise BrokerConfigError(
            f"the broker refused SCRAM credentials for {failed[0].user}: error "
            f"{failed[0].error_code} {failed[0].error_message or ''}".strip()
        )
    user = setup.client(USER, "SCRAM-SHA-512")
    host, port = bootstrap_servers.split(",")[0].rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            open_socket(host, int(port), 5.0, user).close()
            return
        except SecurityError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def grant_user_acls(setup: SecuritySetup, bootstrap_servers: str) -> None:
    """Create ``kgc-user``'s prefixed ACLs, as ``kgc-admin``; raises BrokerConfigError if the
    broker refuses any."""
    from kafka.protocol.admin.acl import CreateAclsRequest
    from kgc.conformance.wire.client import Cluster

    with Cluster(bootstrap_servers, client_id="kgc-acls", security=setup.client(ADMIN)) as c:
        conn = c.connection(min(c.brokers))
        creation = CreateAclsRequest.AclCreation
        req = CreateAclsRequest(creations=[creation(**acl) for acl in setup.user_acls()])
        resp = conn.request(req)
    failed = [r for r in resp.results if r.error_code != 0]
    if failed:
        raise BrokerConfigError(
            f"the broker refused kgc-user's ACLs: error {failed[0].error_code} "
            f"{failed[0].error_message or ''}".strip()
        )


def _write_pki(directory: Path, store_password: str = "") -> None:
    """A CA, the broker's certificate and one client certificate per principal, PEM, valid for
    a week (PKCS#8 keys, unencrypted: files are private to the work directory)."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise BrokerConfigError(
            "a TLS broker needs certificates, made with cryptography: "
            "pip install 'kafka-group-conformance[security]'"
        ) from None

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def pem_key(key: ec.EllipticCurvePrivateKey) -> str:
        return key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("kgc-ca"))
        .issuer_name(name("kgc-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM).decode()
    (directory / "ca.pem").write_text(ca_pem, encoding="utf-8")

    def issue(cn: str, file: str, *, server: bool) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(cn))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                    if server
                    else [ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
        if server:
            # the address the broker advertises and nothing else: a client that reaches it as
            # ``localhost`` meets a host name mismatch, as it would on a real cluster
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        path = directory / file
        path.write_text(
            pem_key(key) + cert.public_bytes(serialization.Encoding.PEM).decode() + ca_pem,
            encoding="utf-8",
        )
        path.chmod(0o600)

    issue(BROKER_CN, "broker.pem", server=True)
    if store_password:
        from cryptography.hazmat.primitives.serialization import pkcs12

        broker_pem = (directory / "broker.pem").read_bytes()
        key = serialization.load_pem_private_key(broker_pem, password=None)
        chain = x509.load_pem_x509_certificates(broker_pem)
        store = directory / "broker.p12"
        store.write_bytes(
            pkcs12.serialize_key_and_certificates(
                b"kafka",
                key,  # type: ignore[arg-type]
                chain[0],
                chain[1:],
                serialization.BestAvailableEncryption(store_password.encode()),
            )
        )
        store.chmod(0o600)
    for who in (ADMIN, USER):
        issue(who, f"{who}.pem", server=False)
