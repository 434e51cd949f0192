"""Replays every fuzzer's corpus and every crash it ever found, through the Python API, without
needing atheris or clang:

* parser_fuzzer (libFuzzer): every input parses (and round-trips through the printer) or raises
  GrammarError;
* matcher_fuzzer (libFuzzer) and the atheris targets (schema, regex, token matcher): the input
  goes through the target's own ``run_one`` (fuzz/targets/), which raises only on a bug.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import gbnf_sampler as gs

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
sys.path.insert(0, str(FUZZ / "targets"))

# corpus directory -> module of fuzz/targets whose run_one replays it
REPLAYED_BY = {
    "matcher_fuzzer": "matcher_target",
    "schema_target": "schema_target",
    "regex_target": "regex_target",
    "token_matcher_target": "token_matcher_target",
}


def _inputs(fuzzer: str) -> list[Path]:
    return sorted(
        [*(FUZZ / "corpus" / fuzzer).glob("*"), *(FUZZ / "regressions" / fuzzer).glob("*")]
    )


PARSER_INPUTS = _inputs("parser_fuzzer")
TARGET_INPUTS = [(fuzzer, path) for fuzzer in REPLAYED_BY for path in _inputs(fuzzer)]


@pytest.mark.parametrize("fuzzer", ["parser_fuzzer", *REPLAYED_BY])
def test_corpus_is_present(fuzzer: str) -> None:
    assert _inputs(fuzzer), f"fuzz/corpus/{fuzzer} is empty: run fuzz/run.sh or run_atheris.sh"


@pytest.mark.parametrize("path", PARSER_INPUTS, ids=lambda p: p.name[:16])
def test_parser_input_parses_or_raises_grammar_error(path: Path) -> None:
    data = path.read_bytes()
    try:
        grammar = gs.Grammar.from_gbnf(data)
    except gs.GrammarError as e:
        assert e.code
        return
    assert gs.Grammar.from_gbnf(grammar.to_gbnf()) == grammar


def _run_one(fuzzer: str) -> Callable[[bytes], None]:
    module = importlib.import_module(REPLAYED_BY[fuzzer])
    run: Callable[[bytes], None] = module.run_one
    return run


@pytest.mark.parametrize(
    ("fuzzer", "path"), TARGET_INPUTS, ids=[f"{f}-{p.name[:12]}" for f, p in TARGET_INPUTS]
)
def test_target_input_runs_clean(fuzzer: str, path: Path) -> None:
    _run_one(fuzzer)(path.read_bytes())
