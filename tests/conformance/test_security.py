"""Client security without a broker: client.properties, JAAS, and the SASL messages kgc sends.

The SCRAM exchange is checked against RFC 7677's SCRAM-SHA-256 test vector (section 3): given its
client nonce and server messages, kgc must send exactly the RFC's client messages, accept the
RFC's server signature and refuse any other.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from kgc.conformance.wire.security import (
    ClientSecurity,
    SecurityError,
    _scram,
    from_properties,
    load_command_config,
    parse_jaas,
    parse_properties,
)

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def test_properties_read_as_java_reads_them() -> None:
    text = (
        "# a comment\n! another\n"
        "security.protocol = SASL_SSL\n"
        "sasl.mechanism:SCRAM-SHA-512\n"
        f"sasl.jaas.config={SCRAM} required \\\n"
        '    username="alice" \\\n'
        '    password="p=w;d";\n'
    )
    props = parse_properties(text)
    assert props["security.protocol"] == "SASL_SSL"
    assert props["sasl.mechanism"] == "SCRAM-SHA-512"
    module, options = parse_jaas(props["sasl.jaas.config"])
    assert (module, options) == ("SCRAM", {"username": "alice", "password": "p=w;d"})


def test_sasl_credentials_from_jaas_or_from_username_and_password() -> None:
    jaas = from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": f'{SCRAM} required username="alice" password="secret";',
        }
    )
    plain = from_properties(
        {
            "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "bob",
            "sasl.password": "pw",
        }
    )
    assert (jaas.mechanism, jaas.username, jaas.password) == ("SCRAM-SHA-256", "alice", "secret")
    assert jaas.principal == "User:alice"
    assert (plain.protocol, plain.mechanism, plain.principal) == (
        "SASL_PLAINTEXT",
        "PLAIN",
        "User:bob",
    )
    assert "secret" not in repr(jaas) and "pw" not in str(plain.describe())


@pytest.mark.parametrize(
    ("props", "says"),
    [
        ({"security.protocol": "KERBEROS"}, "is not one of"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "not supported by kgc"),
        (
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": f'{SCRAM} required username="a" password="b";',
            },
            "uses the SCRAM login module but sasl.mechanism=PLAIN",
        ),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs a username"),
        ({"security.protocol": "PLAINTEXT", "sasl.mechanism": "PLAIN"}, "does not use SASL"),
        ({"bootstrap.servers": "x:1"}, "kgc does not know bootstrap.servers"),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "x"},
            "does not parse",
        ),
        (
            {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"},
            "is not 'https' or empty",
        ),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent.pem"}, "readable"),
    ],
)
def test_settings_that_cannot_work_are_one_line(props: dict[str, str], says: str) -> None:
    with pytest.raises(SecurityError) as err:
        from_properties(props, source="client.properties")
    message = str(err.value)
    assert says in message and "\n" not in message
    assert message.startswith("client.properties: ")


def test_a_jks_store_is_refused_with_the_command_that_converts_it(tmp_path: Path) -> None:
    store = tmp_path / "truststore.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed")
    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=SSL\nssl.truststore.location={store}\n")
    with pytest.raises(SecurityError, match="keytool -importkeystore"):
        load_command_config(config)


def test_a_missing_command_config_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SecurityError, match="cannot read --command-config"):
        load_command_config(tmp_path / "nope.properties")


def test_the_unsecured_oauthbearer_token_names_its_subject() -> None:
    """Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` builds an ``alg: none`` JWS whose
    ``sub`` claim is the principal; kgc builds the same from the same JAAS option."""
    sec = from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH} required unsecuredLoginStringClaim_sub="carol";',
        }
    )
    assert sec.token is not None
    header, claims, signature = sec.token.split(".")
    decode = lambda part: json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # noqa: E731
    assert decode(header) == {"alg": "none"} and signature == ""
    assert decode(claims)["sub"] == "carol" and decode(claims)["exp"] > decode(claims)["iat"]
    assert sec.principal == "User:carol"


def test_scram_sha_256_matches_rfc_7677() -> None:
    rfc = {  # RFC 7677 section 3
        "client_first": "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
        "server_first": "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "client_final": "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        "server_final": "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
    }
    sec = ClientSecurity(
        protocol="SASL_SSL", mechanism="SCRAM-SHA-256", username="user", password="pencil"
    )
    sent: list[str] = []

    def server(final: str):  # noqa: ANN202
        def step(token: bytes) -> bytes:
            sent.append(token.decode())
            return (rfc["server_first"] if len(sent) == 1 else final).encode()

        return step

    _scram(server(rfc["server_final"]), "SCRAM-SHA-256", sec, "test", nonce="rOprNGfwEbeRWgbNEkqO")
    assert sent == [rfc["client_first"], rfc["client_final"]]

    forged = "v=" + base64.b64encode(b"\0" * 32).decode()
    sent.clear()
    with pytest.raises(SecurityError, match="server signature that does not match"):
        _scram(server(forged), "SCRAM-SHA-256", sec, "test", nonce="rOprNGfwEbeRWgbNEkqO")
    sent.clear()
    with pytest.raises(SecurityError, match="refused User:user"):
        _scram(
            server("e=invalid-proof"), "SCRAM-SHA-256", sec, "test", nonce="rOprNGfwEbeRWgbNEkqO"
        )
