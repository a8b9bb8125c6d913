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

import base64
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION
from kgc.conformance.brokers import secure
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster, describe_groups
from kgc.conformance.wire.security import ClientSecurity, SecurityError, from_properties

from tests.scripted import Classic, classic_run

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
    if mechanism == "OAUTHBEARER-token":  # a static token given as is (an unsecured JWS here)
        now = int(time.time())
        body = {"sub": who, "iat": now, "exp": now + 3600}
        claims = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=")
        return from_properties(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.oauthbearer.token": f"eyJhbGciOiJub25lIn0.{claims.decode()}.",
                "ssl.truststore.location": str(setup.dir / "ca.pem"),
            }
        )
    base = setup.client(who, mechanism)
    assert base.mechanism == mechanism
    return base


def _group_error(cluster: Cluster, group: str) -> int:
    conn = cluster.connection(min(cluster.brokers))
    handle = describe_groups(conn, [group])
    return int(cluster._request(conn, handle).groups[0].error_code)


@pytest.mark.parametrize(
    "mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "OAUTHBEARER-token"]
)
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
    # a token the broker's validator refuses (no ``exp`` claim): RFC 7628's error challenge is
    # answered and named, not left for the next request to trip over
    claims = base64.urlsafe_b64encode(json.dumps({"sub": "kgc-user"}).encode()).rstrip(b"=")
    no_expiry = from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token": f"eyJhbGciOiJub25lIn0.{claims.decode()}.",
            "ssl.truststore.certificates": wrong.ca_pem or "",
        }
    )
    with pytest.raises(SecurityError, match="refused User:kgc-user's OAUTHBEARER token"):
        Cluster(secured.bootstrap_servers, security=no_expiry)


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
    user kgc started it with, the checks run as the limited principal, and the search denies and
    allows it operations. A recorded example with ACL actions replays on a fresh secured broker
    (``kgc replay`` starts one and carries the actions out again)."""
    record = tmp_path / "corpus"
    run = _kgc(
        "check",
        "--security",
        "sasl_plaintext",
        "--profile",
        "quick",
        "--seed",
        "6",
        "--traces",
        str(tmp_path / "traces"),
        "--record",
        str(record),
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "as User:kgc-user over SASL_PLAINTEXT SCRAM-SHA-512" in out
    assert "settings read as User:kgc-admin, the checks run as User:kgc-user" in out
    assert "divergences  0" in out
    acting = [p for p in record.rglob("*.jsonl") if "AUTHORIZATION_FAILED" in p.read_text()]
    assert acting, out[-3000:]  # seed 6 denies an operation a request then meets
    replayed = _kgc("replay", *map(str, acting), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout[-3000:] + replayed.stderr[-2000:]
    assert f"{len(acting)} passed, 0 failed" in replayed.stdout
    assert "acl-deny:" in replayed.stdout  # its faults line: the actions were carried out again


@pytest.mark.parametrize(
    ("kind", "profile", "principal"),
    [
        ("ssl", "quick", "User:CN=kgc-user over SSL"),
        ("sasl_ssl", "ci", "User:kgc-user over SASL_SSL SCRAM-SHA-512"),
    ],
)
def test_a_detached_secured_broker_is_checked_with_its_client_properties(
    tmp_path: Path, kind: str, profile: str, principal: str
) -> None:
    """``kgc broker start --security KIND``, then ``kgc check --bootstrap-server
    --command-config kgc-user.properties``: the run is its limited principal's (mutual TLS: the
    certificate's subject), and since kgc started that broker (its state file names the super
    user's credentials) the search denies and allows operations there. On SASL_SSL with SCRAM
    and the ci profile, the issue's bar: 0 divergences and at least 90% of the authorization
    cells."""
    env_name = f"kgc-sec-{kind}-{tmp_path.name[-8:]}".replace("_", "-")
    start = _kgc("broker", "start", "--security", kind, "--name", env_name, cwd=tmp_path)
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
        run = _kgc(
            "check",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            user_properties,
            "--profile",
            profile,
            "--seed",
            "3",
            "--traces",
            str(tmp_path / "traces"),
            cwd=tmp_path,
        )
        out = run.stdout + run.stderr
        assert run.returncode == 0, out[-4000:]
        assert f"as {principal}" in out
        assert "divergences  0" in out
        assert "settings read as User:" in out  # by the super user: nothing had to be given
        if profile == "ci":
            line = next(x for x in out.splitlines() if x.strip().startswith("authorized"))
            reached, cells = (int(w) for w in line.split()[1:4:2])
            assert cells == 10 and reached >= 9, line
    finally:
        stop = _kgc("broker", "stop", "--name", env_name, cwd=tmp_path)
        assert stop.returncode == 0, stop.stderr


def test_deletions_listings_transactions_and_the_empty_group_id_under_acls(
    secured: EmbeddedKafka,
) -> None:
    """The rules the default search does not draw (A0, A5-A8 of
    ``model/classic/authorization.py``), each shown on the broker in one directed history."""
    import dataclasses

    from kgc.engine.coverage import error_of
    from kgc.engine.loop import FaultStep
    from kgc.engine.traces import render
    from kgc.model.commands import (
        AddOffsetsToTxn,
        Assignment,
        DeleteGroups,
        EndTxn,
        InitProducerId,
        JoinGroup,
        ListGroups,
        OffsetDelete,
        Protocol,
        SyncGroup,
        Tick,
        TopicPartition,
        TopicPartitionOffset,
        TxnOffsetCommit,
    )

    def history(run: Classic) -> list[Any]:
        topic = run.topic
        join = JoinGroup(
            client="c1",
            member_id="",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocols=(Protocol(name="range", metadata="m"),),
            version=3,
        )
        parts = (TopicPartition(topic=topic, partition=0),)
        offsets = (TopicPartitionOffset(topic=topic, partition=0, offset=3),)
        txn = {"client": "c2", "transactional_id": "t1", "producer_id": 1, "producer_epoch": 0}
        return [
            dataclasses.replace(join, empty_group_id=True),  # A0
            join,
            Tick(ms=300),
            SyncGroup(
                client="c1",
                member_id="c1-1",
                generation_id=1,
                assignments=(Assignment(member_id="c1-1", assignment="a"),),
                version=3,
            ),
            FaultStep(action="acl-deny:group:DELETE", node=0),
            DeleteGroups(client="c2", version=2),  # A6
            OffsetDelete(client="c2", partitions=parts, version=0),  # A7
            FaultStep(action="acl-allow:group:DELETE", node=0),
            FaultStep(action="acl-deny:topic:READ", node=0),
            OffsetDelete(client="c2", partitions=parts, version=0),  # A7, the topic
            FaultStep(action="acl-deny:group:DESCRIBE", node=0),
            ListGroups(client="c2", version=4),  # A5
            FaultStep(action="acl-allow:group:DESCRIBE", node=0),
            ListGroups(client="c2", version=4),
            InitProducerId(client="c2", transactional_id="t1", version=3),
            FaultStep(action="acl-deny:group:READ", node=0),
            AddOffsetsToTxn(**txn, version=3),  # A8
            TxnOffsetCommit(**txn, offsets=offsets, version=3),  # A8
            FaultStep(action="acl-allow:group:READ", node=0),
            AddOffsetsToTxn(**txn, version=3),
            TxnOffsetCommit(**txn, offsets=offsets, version=3),  # A8, the topic (A2)
            FaultStep(action="acl-allow:topic:READ", node=0),
            EndTxn(**txn, committed=False, version=3),
        ]

    setup = secured.security_setup
    assert setup is not None
    engine, trace, answers = classic_run(
        secured,
        "kgc-authz-",
        history,
        security=setup.client(secure.USER, "SCRAM-SHA-512"),
        admin=secured.security,
    )
    assert engine.divergence is None, render(trace)
    errors = [(type(a).__name__, error_of(a)) for a in answers]
    assert errors[0] == ("JoinGroupResponse", "GROUP_AUTHORIZATION_FAILED"), errors
    assert ("DeleteGroupsResponse", "GROUP_AUTHORIZATION_FAILED") in errors
    assert ("OffsetDeleteResponse", "GROUP_AUTHORIZATION_FAILED") in errors
    assert ("OffsetDeleteResponse", "TOPIC_AUTHORIZATION_FAILED") in errors
    assert ("AddOffsetsToTxnResponse", "GROUP_AUTHORIZATION_FAILED") in errors
    assert ("TxnOffsetCommitResponse", "GROUP_AUTHORIZATION_FAILED") in errors
    assert ("TxnOffsetCommitResponse", "TOPIC_AUTHORIZATION_FAILED") in errors
    listings = [len(a.groups) for a in answers if type(a).__name__ == "ListGroupsResponse"]
    assert listings == [0, 1], render(trace)


def test_the_probe_tells_a_principal_limited_to_its_prefix(secured: EmbeddedKafka) -> None:
    """A principal the run knows nothing of is asked whether it may name a group outside its
    prefix (``brokerconfig.probe_foreign_group_refused``, which decides rule A0): the limited
    ``kgc-user`` may not, the super user may."""
    from kgc.conformance.wire.brokerconfig import probe_foreign_group_refused

    with Cluster(secured.bootstrap_servers, security=_as(secured, secure.USER, "PLAIN")) as c:
        assert probe_foreign_group_refused(c) is True
    with Cluster(secured.bootstrap_servers, security=secured.security) as c:
        assert probe_foreign_group_refused(c) is False


def test_a_model_blind_to_acl_actions_is_caught(secured: EmbeddedKafka, tmp_path: Path) -> None:
    """The authorization search can fail: with a model that ignores ACL actions (its principal
    never refused), the same search on the secured broker finds the first refusal a divergence."""
    from kgc.conformance.brokers.session import description_of
    from kgc.conformance.drivers.suite import run_suite
    from kgc.engine.registry import build
    from kgc.model.classic.group import ClassicGroupModel

    class Blind(ClassicGroupModel):
        def fault(self, state, *, action, node, at_ms):  # noqa: ANN001, ANN202
            return [state]

    def blind(record: dict[str, Any], group_id: str) -> ClassicGroupModel:
        return Blind(build(record, group_id).config)

    setup = secured.security_setup
    assert setup is not None
    result = run_suite(
        bootstrap_servers=secured.bootstrap_servers,
        description=description_of(secured),
        profile="ci",
        seed=3,
        traces_dir=str(tmp_path / "traces"),
        security=setup.client(secure.USER, "SCRAM-SHA-512"),
        admin_security=secured.security,
        model_factory=blind,
        minimize_budget_s=None,
    )
    assert result.failure == "divergence", result.message[-2000:]
    assert "AUTHORIZATION_FAILED" in result.message, result.message[-2000:]
