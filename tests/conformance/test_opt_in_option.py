"""``kgc check --opt-in``: the request types the classic search leaves out by default reach the
run's search (``Search.opt_in`` -> ``SuiteContext.opt_in`` -> ``machine_for``). No broker."""

from __future__ import annotations

from kgc.conformance.drivers.suite import Search, suite_parts
from kgc.model.requests import OPT_IN_REQUESTS, opt_in_closure

from kgc.cli import main


def test_the_opt_in_request_types_are_the_delete_list_and_transactional_ones() -> None:
    assert set(OPT_IN_REQUESTS) == {
        "ListGroups",
        "DeleteGroups",
        "OffsetDelete",
        "InitProducerId",
        "AddOffsetsToTxn",
        "TxnOffsetCommit",
        "EndTxn",
    }


def test_asking_for_one_transactional_request_asks_for_the_whole_path() -> None:
    assert opt_in_closure(("TxnOffsetCommit",)) == (
        "TxnOffsetCommit",
        "InitProducerId",
        "AddOffsetsToTxn",
        "EndTxn",
    )
    assert opt_in_closure(("DeleteGroups",)) == ("DeleteGroups",)


def test_run_suite_takes_the_opt_in_types_into_its_search() -> None:
    _, _, search, _ = suite_parts(
        bootstrap_servers="localhost:9092", description={}, opt_in=("DeleteGroups", "OffsetDelete")
    )
    assert search == Search(opt_in=("DeleteGroups", "OffsetDelete"))
    assert Search().opt_in == ()  # the default search draws none of them


def test_opt_in_is_refused_for_another_protocol(capsys) -> None:  # noqa: ANN001
    code = main(["check", "--protocol", "consumer", "--opt-in", "DeleteGroups"])
    assert code == 2
    assert "--opt-in adds classic request types" in capsys.readouterr().err


def test_an_unknown_request_type_is_refused_by_name(capsys) -> None:  # noqa: ANN001
    try:
        main(["check", "--opt-in", "JoinGroup"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "invalid choice: 'JoinGroup'" in capsys.readouterr().err
