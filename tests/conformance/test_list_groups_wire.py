"""ListGroups on the wire, with no broker: the request's filters by version, and an answer that
lists many groups decoded to the run's own group only (``conformance/wire/requests.py``)."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.groups import ListGroupsResponse
from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.requests import REQUESTS
from kgc.model import commands as m
from kgc.model.apis import KEYS
from kgc.model.requests import CLASSIC_REQUESTS

GROUP = "kgc-run-7"


def on_the_wire(req, version):  # noqa: ANN001
    req.with_header(correlation_id=7, client_id="kgc-c1")
    data = req.encode(header=True, framed=True)
    return type(req).decode(data, version=version, header=True, framed=True)


def test_the_descriptor_names_kafkas_key_and_kafka_pythons_versions() -> None:
    assert REQUESTS["ListGroups"].key == KEYS["ListGroups"] == CLASSIC_REQUESTS["ListGroups"].key
    assert REQUESTS["ListGroups"].cls().valid_versions == (0, 5)
    assert wire.REQUEST_CLASSES["ListGroups"] is REQUESTS["ListGroups"].cls()


@pytest.mark.parametrize("v", range(6))
def test_list_groups_request_carries_each_filter_from_its_version(v: int) -> None:
    command = m.ListGroups(
        client="c1",
        states_filter=("Stable",) if v >= 4 else (),
        types_filter=("classic",) if v >= 5 else (),
        version=v,
    )
    got = on_the_wire(*wire.encode(command, GROUP, wire.MemberIds()))
    if v >= 4:
        assert list(got.states_filter) == ["Stable"]
    if v >= 5:
        assert list(got.types_filter) == ["classic"]


def test_a_filter_the_version_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="StatesFilter"):
        wire.encode(m.ListGroups(client="c1", states_filter=("Stable",), version=3), GROUP, None)


@pytest.mark.parametrize("v", range(6))
def test_only_the_runs_own_group_is_kept(v: int) -> None:
    listed = [
        ListGroupsResponse.ListedGroup(
            group_id=g, protocol_type="consumer", group_state="Stable", group_type="classic"
        )
        for g in ("kgc-run-6", GROUP, "someone-elses")
    ]
    data = ListGroupsResponse(error_code=0, groups=listed).encode(version=v)
    response = ListGroupsResponse.decode(data, version=v)
    command = m.ListGroups(client="c1", version=v)
    got = wire.decode(command, response, wire.MemberIds(), group_id=GROUP)
    assert got == m.ListGroupsResponse(
        error="NONE",
        groups=(
            m.ListedGroup(
                protocol_type="consumer",
                group_state="Stable" if v >= 4 else "",
                group_type="classic" if v >= 5 else "",
            ),
        ),
    )
    absent = ListGroupsResponse.decode(
        ListGroupsResponse(error_code=0, groups=listed[:1]).encode(version=v), version=v
    )
    assert wire.decode(command, absent, wire.MemberIds(), group_id=GROUP).groups == ()


def test_decoding_without_the_group_id_says_what_is_missing() -> None:
    response = ListGroupsResponse(error_code=0, groups=[])
    with pytest.raises(ValueError, match="group_id"):
        wire.decode(m.ListGroups(client="c1", version=5), response, wire.MemberIds())
