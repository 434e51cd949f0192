"""llama.cpp's own example grammars (fetched from the llama-cpp-python sdist) all parse."""

from __future__ import annotations

from pathlib import Path

import pytest

import gbnf_sampler as gs

EXPECTED = ["arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list"]


def test_all_example_grammars_are_present(llama_grammars: dict[str, Path]) -> None:
    assert set(EXPECTED) <= set(llama_grammars)


@pytest.mark.parametrize("name", EXPECTED)
def test_example_grammar_parses_cleanly_and_round_trips(
    llama_grammars: dict[str, Path], name: str
) -> None:
    text = llama_grammars[name].read_bytes()
    grammar = gs.Grammar.from_gbnf(text)
    assert grammar.warnings == []
    assert "root" in grammar.rules
    again = gs.Grammar.from_gbnf(grammar.to_gbnf())
    assert again == grammar
    assert again.rules == grammar.rules


def test_json_grammar_structure(llama_grammars: dict[str, Path]) -> None:
    grammar = gs.Grammar.from_gbnf(llama_grammars["json"].read_bytes())
    assert {"root", "value", "object", "array", "string", "number", "ws"} <= set(grammar.rules)


def test_cli_checks_every_example(
    llama_grammars: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from gbnf_sampler.cli import main

    assert main(["check", *[str(llama_grammars[n]) for n in EXPECTED]]) == 0
    # No errors; the doctor's warnings are allowed (c.gbnf's root may be empty, and it says so).
    diagnostics = [line for line in capsys.readouterr().err.splitlines() if ": " in line]
    assert not [line for line in diagnostics if "error[" in line]
