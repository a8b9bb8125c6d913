"""``kgc report`` / ``kgc audit`` refuse bad input with one line naming the fix, before Spark."""

from __future__ import annotations

from pathlib import Path

from kgc.cli import main

DATA = Path(__file__).parent / "data"


def test_report_of_a_missing_corpus(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "kgc report: error: no such corpus" in err and err.count("\n") == 1


def test_report_of_a_folder_without_traces(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r")]) == 2
    assert "no trace files" in capsys.readouterr().err


def test_report_never_writes_into_a_folder_that_holds_something_else(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("precious")
    assert main(["report", str(DATA), "--out", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "precious"


def test_audit_of_a_missing_dump(tmp_path, capsys):
    assert main(["audit", "--dump", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such dump file" in capsys.readouterr().err
