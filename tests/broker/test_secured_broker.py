"""A secured Apache Kafka that kgc starts (SASL_SSL, SCRAM users, ACLs) and kgc checking it.

One embedded 4.x broker with ``security="sasl_ssl"`` serves the module (``conformance/brokers/
secure.py``). On it:

* each SASL mechanism kgc speaks authenticates, and the broker names the principal the
  credentials say: the limited ``kgc-user`` may describe a ``kgc-`` group and is refused another
  (GROUP_AUTHORIZATION_FAILED), and is refused the broker's settings; the super user is not;
* each bad-input case of ``kgc check --command-config`` is one line on stderr with exit 2, naming
  the cause: wrong password, a CA kgc does not trust, a certificate for another host name, a
  mechanism the listener does not enable, a plaintext client on the TLS port, a TLS client on a
  plaintext port;
* ``kgc check --command-config`` runs the differential search as ``kgc-user`` with 0 divergences,
  and says whom it ran as; the installed suite (``pytest --pyargs kgc.testsuite``) does the same
  from outside the clone.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION
from kgc.conformance.brokers import secure
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster, describe_groups
from kgc.conformance.wire.security import ClientSecurity, SecurityError, from_properties

pytestmark = [pytest.mark.broker, pytest.mark.slow]

GROUP_AUTHORIZATION_FAILED = 30
# a group nobody made, described by a principal that may: Dead with NONE, or GROUP_ID_NOT_FOUND
# (69) from 4.x DescribeGroups v6 (model/classic/describe.py)
NOT_REFUSED = (0, 69)
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
# what the embedded broker sets and a limited principal cannot read (DescribeConfigs needs
# DESCRIBE_CONFIGS on the cluster): given as a user of such a cluster would give them
KNOWN_SETTINGS = [
    "group.initial.rebalance.delay.ms=0",
    "group.max.size=3",
    "offsets.retention.check.interval.ms=86400000",
]


@pytest.fixture(scope="module")
def secured() -> Iterator[EmbeddedKafka]:
    with EmbeddedKafka(DEFAULT_KAFKA_VERSION, security="sasl_ssl") as broker:
        yield broker


def _kgc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


def _as(secured: EmbeddedKafka, who: str, mechanism: str) -> ClientSecurity:
    setup = secured.security_setup
    assert setup is not None
    if mechanism == "OAUTHBEARER":
        return from_properties(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.jaas.config": f'{OAUTH} required unsecuredLoginStringClaim_sub="{who}";',
                "ssl.truststore.location": str(setup.dir / "ca.pem"),
                "ssl.truststore.type": "PEM",
            }
        )
    base = setup.client(who, mechanism)
    assert base.mechanism == mechanism
    return base


def _group_error(cluster: Cluster, group: str) -> int:
    conn = cluster.connection(min(cluster.brokers))
    handle = describe_groups(conn, [group])
    return int(cluster._request(conn, handle).groups[0].error_code)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"])
def test_each_mechanism_authenticates_as_the_principal_it_names(
    secured: EmbeddedKafka, mechanism: str
) -> None:
    user = _as(secured, secure.USER, mechanism)
    admin = _as(secured, secure.ADMIN, mechanism)
    assert user.principal == "User:kgc-user"
    with Cluster(secured.bootstrap_servers, security=user) as cluster:
        assert _group_error(cluster, "kgc-secured-own") in NOT_REFUSED
        assert _group_error(cluster, "other-team-group") == GROUP_AUTHORIZATION_FAILED
    with Cluster(secured.bootstrap_servers, security=admin) as cluster:
        assert _group_error(cluster, "other-team-group") in NOT_REFUSED


def test_the_limited_principal_may_not_read_the_broker_s_settings(secured: EmbeddedKafka) -> None:
    with Cluster(secured.bootstrap_servers, security=_as(secured, secure.USER, "PLAIN")) as c:
        limited = facts(c)
    with Cluster(secured.bootstrap_servers, security=secured.security) as c:
        admin = facts(c)
    assert any(n.startswith("DescribeConfigs refused") for n in limited["fact_notes"])
    assert limited["fact_sources"]["group.initial.rebalance.delay.ms"] == "assumed"
    assert admin["fact_sources"]["group.initial.rebalance.delay.ms"] == "read"
    assert admin["group_config"]["group.initial.rebalance.delay.ms"] == 0


def _properties(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bad_security_input_is_one_line_naming_the_cause(
    secured: EmbeddedKafka, tmp_path: Path
) -> None:
    setup = secured.security_setup
    assert setup is not None
    good = setup.properties_path(secure.USER).read_text().splitlines()
    port = secured.bootstrap_servers.rsplit(":", 1)[1]
    stranger = tmp_path / "stranger"
    secure._write_pki(stranger)  # another CA, which signed nothing of this broker's
    controller = f"127.0.0.1:{secured._nodes[1].controller_port}"  # SASL_PLAINTEXT, PLAIN only
    cases = {
        "wrong password": (
            secured.bootstrap_servers,
            [line.replace(setup.passwords[secure.USER], "not-the-password") for line in good],
            "refused User:kgc-user with SASL SCRAM-SHA-512",
        ),
        "unknown CA": (
            secured.bootstrap_servers,
            [
                f"ssl.truststore.location={stranger / 'ca.pem'}"
                if line.startswith("ssl.truststore.location")
                else line
                for line in good
            ],
            "is not signed by a CA kgc trusts",
        ),
        "host name mismatch": (
            f"localhost:{port}",
            good,
            "does not name the host 'localhost'",
        ),
        "mechanism not enabled": (
            controller,
            [
                line.replace("SASL_SSL", "SASL_PLAINTEXT")
                for line in good
                if not line.startswith("ssl.")
            ],
            "does not enable SASL mechanism SCRAM-SHA-512 (it enables PLAIN)",
        ),
        "plaintext client on the TLS port": (
            secured.bootstrap_servers,
            None,
            "a TLS or SASL listener closes a plaintext client's first request",
        ),
        "TLS client on a plaintext port": (
            controller,
            good,
            "is it a plaintext listener?",
        ),
    }
    for what, (server, lines, says) in cases.items():
        args = ["check", "--bootstrap-server", server, "--profile", "quick"]
        if lines is not None:
            config = _properties(tmp_path / f"{what.replace(' ', '-')}.properties", lines)
            args += ["--command-config", str(config)]
        run = _kgc(*args, cwd=tmp_path)
        err = run.stderr.strip().splitlines()
        assert run.returncode == 2, (what, run.stdout[-2000:], run.stderr[-2000:])
        assert len(err) == 1 and err[0].startswith("kgc check: error: "), (what, run.stderr)
        assert says in err[0], (what, err[0])
        assert "Traceback" not in run.stderr
    assert not list(tmp_path.glob("traces/*")), "a refused run saves no trace"


def test_a_refused_login_is_a_security_error_not_unreachable(secured: EmbeddedKafka) -> None:
    wrong = _as(secured, secure.USER, "PLAIN")
    wrong = from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "kgc-user",
            "sasl.password": "wrong",
            "ssl.truststore.certificates": wrong.ca_pem or "",
        }
    )
    with pytest.raises(SecurityError, match="refused User:kgc-user with SASL PLAIN"):
        Cluster(secured.bootstrap_servers, security=wrong)


def test_kgc_check_runs_as_the_limited_principal(secured: EmbeddedKafka, tmp_path: Path) -> None:
    setup = secured.security_setup
    assert setup is not None
    given = [arg for kv in KNOWN_SETTINGS for arg in ("--broker-config", kv)]
    run = _kgc(
        "check",
        "--bootstrap-server",
        secured.bootstrap_servers,
        "--command-config",
        str(setup.properties_path(secure.USER)),
        *given,
        "--profile",
        "quick",
        "--seed",
        "5",
        "--traces",
        str(tmp_path / "traces"),
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "as User:kgc-user over SASL_SSL SCRAM-SHA-512" in out
    assert "divergences  0" in out
    assert "DescribeConfigs refused" in out  # said, not hidden: the settings were given


def test_the_installed_suite_runs_against_the_secured_broker(
    secured: EmbeddedKafka, tmp_path: Path
) -> None:
    """From a folder outside the clone, as a platform team would run it in its own CI."""
    setup = secured.security_setup
    assert setup is not None
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "kgc.testsuite",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            "--kgc-bootstrap-server",
            secured.bootstrap_servers,
            "--kgc-command-config",
            str(setup.properties_path(secure.ADMIN)),
            "--kgc-profile",
            "quick",
            "--kgc-traces",
            str(tmp_path / "traces"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "1 passed" in out, out[-2000:]


def test_kgc_check_security_starts_a_secured_broker_and_runs_as_kgc_user(tmp_path: Path) -> None:
    """``kgc check --security``: the embedded broker secured; the settings are read as the super
    user kgc started it with, the checks run as the limited principal."""
    run = _kgc(
        "check",
        "--security",
        "sasl_plaintext",
        "--profile",
        "quick",
        "--seed",
        "2",
        "--traces",
        str(tmp_path / "traces"),
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "as User:kgc-user over SASL_PLAINTEXT SCRAM-SHA-512" in out
    assert "settings read as User:kgc-admin, the checks run as User:kgc-user" in out
    assert "divergences  0" in out


def test_a_detached_mutual_tls_broker_is_checked_with_its_client_properties(
    tmp_path: Path,
) -> None:
    """``kgc broker start --security ssl``: mutual TLS, the principal is the client certificate's
    subject; ``kgc check --command-config`` with the written properties runs as it."""
    env_name = f"kgc-sec-{tmp_path.name[-12:]}".replace("_", "-")
    start = _kgc("broker", "start", "--security", "ssl", "--name", env_name, cwd=tmp_path)
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        bootstrap = start.stdout.strip()
        assert len(start.stdout.strip().splitlines()) == 1  # the only line on stdout
        user_properties = next(
            word.rstrip(",")
            for word in start.stderr.split()
            if word.endswith("kgc-user.properties")
        )
        assert Path(user_properties).is_file()
        given = [arg for kv in KNOWN_SETTINGS for arg in ("--broker-config", kv)]
        run = _kgc(
            "check",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            user_properties,
            *given,
            "--profile",
            "quick",
            "--seed",
            "3",
            "--traces",
            str(tmp_path / "traces"),
            cwd=tmp_path,
        )
        out = run.stdout + run.stderr
        assert run.returncode == 0, out[-4000:]
        assert "as User:CN=kgc-user over SSL" in out
        assert "divergences  0" in out
    finally:
        stop = _kgc("broker", "stop", "--name", env_name, cwd=tmp_path)
        assert stop.returncode == 0, stop.stderr
