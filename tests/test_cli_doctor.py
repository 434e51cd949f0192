"""``gbnf-sampler check`` with the doctor's warnings and ``gbnf-sampler explain``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gbnf_sampler.cli import main


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_warnings_exit_zero_unless_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "g.gbnf", 'root ::= item*\nitem ::= "a"\n')
    assert main(["check", path]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:1:10: warning[empty_output]: ")
    assert "(require at least one: write item+ instead of item*)" in err
    assert main(["check", "--strict", path]) == 1
    assert main(["check", "--strict", "--skip", "empty_output", path]) == 0


def test_json_output_has_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "g.gbnf", 'root ::= "a" | "a"\n')
    assert main(["check", "--json", path]) == 0
    [report] = json.loads(capsys.readouterr().out)
    [diag] = report["diagnostics"]
    assert report["ok"] and diag["code"] == "shadowed_alternative"
    assert (diag["line"], diag["column"], diag["severity"]) == (1, 16, "warning")
    assert diag["fix"] == diag["hint"] == "remove alternative 2"


def test_schema_files_detected_or_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = '{\n  "type": "array",\n  "items": {"type": "integer"}\n}\n'
    path = write(tmp_path, "s.json", schema)
    assert main(["check", "--json", path]) == 0
    [report] = json.loads(capsys.readouterr().out)
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["pointer"], diag["line"], diag["column"]) == (
        "endless_extras",
        "",
        1,
        1,
    )
    assert report["generated"] == []
    odd = write(tmp_path, "s.txt", '{"type": "string", "maxLength": 3}')
    assert main(["check", "--schema", odd]) == 0
    assert capsys.readouterr().err == ""


def test_bad_schema_is_invalid_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.json", '{"type": "nonsense"}')
    assert main(["check", path]) == 1
    assert "error[schema]" in capsys.readouterr().err


def test_dialect_and_rewrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "g.gbnf", 'root ::= my_rule{,3}\nmy_rule ::= "a"\n')
    assert main(["check", "--dialect", "llama.cpp", "--rewrite", path]) == 0
    captured = capsys.readouterr()
    assert captured.out == 'root ::= my-rule{0,3}\nmy-rule ::= "a"\n'
    assert captured.err.count("warning[llama_cpp]") == 2
    assert main(["check", "--rewrite", path]) == 2  # needs --dialect


def test_explain_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grammar = write(tmp_path, "g.gbnf", 'root ::= "ab" [0-9]+\n')
    assert main(["explain", "--grammar", grammar, "--text", "ab12"]) == 0
    assert "accepts the whole text" in capsys.readouterr().out
    assert main(["explain", "--grammar", grammar, "--text", "abx"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == [
        "the text leaves the grammar at byte 2 (line 1, column 3): 0x78 'x' is not allowed",
        "  in rule: root",
        "  expected: '0'-'9'",
    ]
    text = write(tmp_path, "t.txt", "ab")
    assert main(["explain", "--grammar", grammar, "--file", text, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["accepted"], data["complete"], data["offset"]) == (True, False, 2)


def test_explain_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = write(tmp_path, "s.json", '{"type": "array", "items": {"type": "boolean"}}')
    assert main(["explain", "--schema", schema, "--text", "[true, 1]", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["offset"], data["json_pointer"]) == (7, "/1")
