"""``max_whitespace``: every run of whitespace bytes (space, tab, LF, CR) in the output is at most
N, exactly: a text is accepted iff the grammar accepts it and none of its runs is longer; masks
equal a brute-force check of every token; history, fork and rollback keep the run; JSON Schema
grammars get a bound that never refuses their own layout."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

import gbnf_sampler as gs
from assets import require, vocab_gguf
from gbnf_sampler.schema import layout_whitespace_run, output_whitespace_bound

WS = re.compile(rb"[ \t\n\r]+")
GRAMMAR = (
    'root ::= ws (word ws)* end\nword ::= [a-z]+ | "x y"\nws ::= [ \\t\\n\\r]*\nend ::= "." ws\n'
)


def longest_run(data: bytes) -> int:
    return max((len(m.group()) for m in WS.finditer(data)), default=0)


def texts(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    pieces = [b"a", b"bc", b"x y", b" ", b"  ", b"\t", b"\n", b"\r\n", b".", b"     ", b"q"]
    return [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(count)]


@pytest.mark.parametrize("bound", [0, 1, 2, 3, 5])
def test_byte_level_language_is_exact(bound: int) -> None:
    grammar = gs.Grammar.from_gbnf(GRAMMAR)
    for text in texts(bound, 400):
        free = gs.Matcher(grammar)
        fits = free.accept_bytes(text)
        bounded = gs.Matcher(grammar, max_whitespace=bound)
        assert bounded.accept_bytes(text) == (fits and longest_run(text) <= bound), text
        # Byte by byte, the same: a run is refused at the byte that makes it too long.
        stepwise = gs.Matcher(grammar, max_whitespace=bound)
        ok = all(stepwise.accept_bytes(text[i : i + 1]) for i in range(len(text)))
        assert ok == (fits and longest_run(text) <= bound), text


def test_history_fork_rollback_and_reset_keep_the_run() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf(GRAMMAR), max_whitespace=2)
    assert m.accept_bytes(b"a ") and m.accept_bytes(b" ")
    assert not m.accept_bytes(b" ")  # a third space
    fork = m.fork()
    m.rollback(1)  # back to "a ": one more space fits again, not two
    assert m.accept_bytes(b" ") and not m.accept_bytes(b" ")
    assert not fork.accept_bytes(b"\n") and fork.accept_bytes(b"b")
    m.reset()
    assert m.accept_bytes(b"  ") and not m.accept_bytes(b"\t")


def test_forced_bytes_stop_where_the_bound_refuses() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "a" "    " "b"')
    assert gs.Matcher(grammar).forced_bytes() == b"a    b"
    assert gs.Matcher(grammar, max_whitespace=2).forced_bytes() == b"a  "


def test_grammar_defaults() -> None:
    assert gs.Grammar.from_gbnf(GRAMMAR).max_whitespace is None
    schema = gs.Grammar.from_json_schema({"type": "string"})
    assert schema.max_whitespace == output_whitespace_bound() == 64
    assert gs.Grammar.from_json_schema({}, whitespace="indent", indent=4).max_whitespace == 133
    assert gs.Grammar.json().max_whitespace == 64
    assert output_whitespace_bound(max_whitespace=100) == 102
    assert output_whitespace_bound(whitespace="compact") == 64
    assert layout_whitespace_run("compact") == 0
    # Explicit None switches the bound off; a GBNF grammar can have one.
    m = gs.Matcher(schema, max_whitespace=None)
    assert m.accept_bytes(b'"' + b" " * 200 + b'"')
    assert not gs.Matcher(schema).accept_bytes(b'"' + b" " * 200 + b'"')


def _deep(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"k": [value, {}]}
    return value


@pytest.mark.parametrize(("mode", "indent"), [("flexible", 2), ("indent", 2), ("indent", 4)])
def test_schema_layout_is_never_refused(mode: str, indent: int) -> None:
    grammar = gs.Grammar.from_json_schema({}, whitespace=mode, indent=indent)
    for depth in (0, 3, 40):
        for dumped in (json.dumps(_deep(depth), indent=indent), json.dumps(_deep(depth))):
            if mode == "indent" and "\n" not in dumped and depth:
                continue
            data = dumped.encode()
            if not gs.Matcher(grammar, max_whitespace=None).accept_bytes(data):
                continue  # this layout is not the mode's
            m = gs.Matcher(grammar)
            assert m.accept_bytes(data) and m.can_terminate(), (mode, indent, depth)
    # The flexible layout at its widest: CR LF and 32 spaces around a separator.
    if mode == "flexible":
        widest = b"[1" + b"\r\n" + b" " * 32 + b"," + b"\r\n" + b" " * 32 + b"2]"
        assert longest_run(widest) == layout_whitespace_run()
        assert gs.Matcher(grammar).accept_bytes(widest)


def _mask(m: gs.Matcher, words: int) -> set[int]:
    row = np.zeros(words, dtype=np.int32)
    m.fill_mask(row)
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())


def _brute(m: gs.Matcher, size: int) -> set[int]:
    return {t for t in range(size) if m.fork().accept_token(t)}


def test_masks_equal_brute_force_on_a_toy_vocabulary() -> None:
    tokens = [
        b"a",
        b"b",
        b" ",
        b"  ",
        b"   ",
        b" a",
        b"a  ",
        b"\n\n\n\n",
        b"x y",
        b" .",
        b".",
        b"<e>",
    ]
    tokens += [b" " * n for n in range(4, 80)] + [b"a" + b" " * 70 + b"b", b"\t \r"]
    vocab = gs.Vocab(tokens, eos_ids=[11])
    grammar = gs.Grammar.from_gbnf(GRAMMAR)
    rng = random.Random(7)
    for bound in (0, 1, 3, 8, 70, 100):
        m = gs.Matcher(gs.compile(grammar, vocab, max_whitespace=bound))
        words = (vocab.size + 31) // 32
        for _ in range(25):
            assert _mask(m, words) == _brute(m, vocab.size), bound
            allowed = sorted(_brute(m, vocab.size) - {11})
            if not allowed:
                break
            assert m.accept_token(rng.choice(allowed))


def test_masks_equal_brute_force_on_llama3() -> None:
    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("llama-bpe")))
    grammar = gs.Grammar.from_gbnf(GRAMMAR)
    compiled = gs.compile(grammar, vocab, max_whitespace=6)
    m = gs.Matcher(compiled)
    words = (vocab.size + 31) // 32
    steps = [b"hello", b"   ", b"\n", b"  ", b"x y", b"   "]
    for step in steps:
        assert _mask(m, words) == _brute(m, vocab.size)
        assert m.accept_bytes(step)
    # The text ends in a run of 3: 3 more bytes at most, so no token leads with 4 or more.
    allowed = _mask(m, words)
    assert allowed
    for t in allowed:
        lead = len(vocab.token_bytes(t)) - len(vocab.token_bytes(t).lstrip(b" \t\r\n"))
        assert lead <= 3 or vocab.is_eos(t)


def test_filter_shared_per_vocabulary_is_never_another_vocabularys() -> None:
    # The token filter is built once per (vocabulary, bound) and shared by every compile; a new
    # vocabulary, even one allocated where a dead one was, gets its own.
    grammar = gs.Grammar.from_gbnf(GRAMMAR)
    words = 1
    for round_ in range(6):
        # Same size, same bound, different whitespace per id: a filter of the other would be wrong.
        spaces = [b" " * (1 + (round_ + i) % 5) for i in range(4)]
        vocab = gs.Vocab([b"a", b".", *spaces, b"<e>"], eos_ids=[6])
        for _ in range(2):  # the second compile takes the shared filter
            m = gs.Matcher(gs.compile(grammar, vocab, max_whitespace=2, cache=False))
            assert m.accept_bytes(b"a")
            assert _mask(m, words) == _brute(m, vocab.size), round_
        del vocab, m
    # Two live vocabularies side by side, the same bound.
    wide = gs.Vocab([b"a", b".", b"    ", b"<e>"], eos_ids=[3])
    narrow = gs.Vocab([b"a", b".", b" ", b"<e>"], eos_ids=[3])
    for vocab in (wide, narrow, wide):
        m = gs.Matcher(gs.compile(grammar, vocab.prepare(), max_whitespace=3, cache=False))
        assert _mask(m, words) == _brute(m, vocab.size)


def test_token_level_matcher_takes_the_bound_from_compile() -> None:
    vocab = gs.Vocab([b"a", b" "], eos_ids=[])
    compiled = gs.compile(gs.Grammar.from_gbnf(GRAMMAR), vocab)
    with pytest.raises(TypeError, match="max_whitespace"):
        gs.Matcher(compiled, max_whitespace=3)
    with pytest.raises(ValueError):
        gs.compile(gs.Grammar.from_gbnf(GRAMMAR), vocab, max_whitespace=-1)


def test_generation_on_the_embedded_model_keeps_the_bound() -> None:
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    from gbnf_sampler.llama import generate, vocab_for
    from gbnf_sampler.llama.models import load_llama

    llm = load_llama(None, progress=False)
    grammar = gs.Grammar.from_gbnf('root ::= ws ("yes" | "no") ws\nws ::= [ \\t\\n]*\n')
    prompt = "Question: Is the sky blue? Answer yes or no.\nAnswer:"
    free = generate(llm, prompt, grammar, max_tokens=40)["choices"][0]
    # Without a bound this prompt runs away in newlines (the doctor's unbounded_filler case).
    assert free["finish_reason"] == "length"
    compiled = gs.compile(grammar, vocab_for(llm), max_whitespace=4)
    bounded = generate(llm, prompt, compiled, max_tokens=40)["choices"][0]
    text = bounded["text"].encode()
    assert longest_run(text) <= 4 and bounded["finish_reason"] == "stop"
    assert text.strip() in (b"yes", b"no")
