"""The gbnf-sampler command line, run in-process and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gbnf_sampler.cli import main

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_check_clean_file_is_silent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.gbnf", 'root ::= "yes" | "no"\n')
    assert main(["check", good]) == 0
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "")


def test_check_reports_file_line_column_code_and_snippet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.gbnf", 'root ::= answer\nanswr ::= "yes"\n')
    assert main(["check", bad]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        f'{bad}:1:10: error[undefined_rule]: undefined rule "answer" (did you mean "answr"?)'
    )
    assert lines[1] == " 1 | root ::= answer"
    assert lines[2] == "   |          ^^^^^^"
    assert lines[3].startswith(f"{bad}:2:1: warning[unused_rule]: ")


def test_check_warnings_alone_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "w.gbnf", 'root ::= "a"\nextra ::= "b"\n')
    assert main(["check", path]) == 0
    assert "warning[unused_rule]" in capsys.readouterr().err


def test_check_several_files_and_root_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.gbnf", 'start ::= "a"\n')
    b = write(tmp_path, "b.gbnf", "start ::= [\n")
    assert main(["check", "--root", "start", a, b]) == 1
    err = capsys.readouterr().err
    assert f"{b}:1:11: error[unterminated_class]" in err
    assert a not in err


def test_check_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.gbnf", 'root ::= "a"\n')
    bad = write(tmp_path, "bad.gbnf", 'root ::= "a"{3,1}\n')
    assert main(["check", "--json", good, bad]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [r["ok"] for r in report] == [True, False]
    [diag] = report[1]["diagnostics"]
    assert (diag["code"], diag["line"], diag["column"], diag["severity"]) == (
        "bad_repetition_bounds",
        1,
        13,
        "error",
    )


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.gbnf")]) == 2
    assert "error[io]" in capsys.readouterr().err


def test_stdin_and_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gbnf_sampler", "check", "-"],
        input="root ::= “yes”\n".encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "<stdin>:1:10: error[typographic_quote]" in proc.stderr.decode()


def test_console_script_checks_shipped_examples() -> None:
    examples = sorted(str(p) for p in (REPO / "examples").glob("*.gbnf"))
    assert examples
    proc = subprocess.run(["gbnf-sampler", "check", *examples], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == b""
