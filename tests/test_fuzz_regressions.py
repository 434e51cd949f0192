"""Replays the fuzzers' corpora and any crash they ever found through the Python API: every
input must either parse (and round-trip through the printer) or raise GrammarError."""

from __future__ import annotations

from pathlib import Path

import pytest

import gbnf_sampler as gs

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
PARSER_INPUTS = sorted(
    [
        *(FUZZ / "corpus" / "parser_fuzzer").glob("*"),
        *(FUZZ / "regressions" / "parser_fuzzer").glob("*"),
    ]
)


def test_parser_corpus_is_present() -> None:
    assert len(PARSER_INPUTS) > 0, "run fuzz/run.sh to (re)create fuzz/corpus/parser_fuzzer"


@pytest.mark.parametrize("path", PARSER_INPUTS, ids=lambda p: p.name[:16])
def test_parser_input_parses_or_raises_grammar_error(path: Path) -> None:
    data = path.read_bytes()
    try:
        grammar = gs.Grammar.from_gbnf(data)
    except gs.GrammarError as e:
        assert e.code
        return
    assert gs.Grammar.from_gbnf(grammar.to_gbnf()) == grammar
