"""Triggered (lazy) grammars: free text until a trigger, then the body.

Byte-level tables for the language; then, on real vocabularies (Llama-3, Qwen2, Gemma 3): the
trigger is found at every way the vocabulary can split it into tokens, inside a token that runs
on into the body (exactly when the rest fits), never inside the body's own strings; the masks
equal a hand-written grammar of the same language step by step, equal brute force, and in the
free stretch allow every token the plain "any text" grammar allows except those that complete
the trigger into something the body refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from mask_helpers import decode
from structural_fixtures import VOCABS, load_vocab, tokenize

BODY = 'root ::= "{" [a-z]+ "}" [ \\n]*'
TRIGGER = "<tool_call>"

# The same language as Grammar.triggered(BODY, TRIGGER), written by hand: one rule per length of
# the trigger's prefix matched so far (the trigger has no border, so a mismatch restarts at 0,
# or at 1 on "<").
HAND_WRITTEN = r"""
root ::= s0
s0 ::= "" | [^<] s0 | "<" s1
s1 ::= "" | [^<t] s0 | "<" s1 | "t" s2
s2 ::= "" | [^<o] s0 | "<" s1 | "o" s3
s3 ::= "" | [^<o] s0 | "<" s1 | "o" s4
s4 ::= "" | [^<l] s0 | "<" s1 | "l" s5
s5 ::= "" | [^<_] s0 | "<" s1 | "_" s6
s6 ::= "" | [^<c] s0 | "<" s1 | "c" s7
s7 ::= "" | [^<a] s0 | "<" s1 | "a" s8
s8 ::= "" | [^<l] s0 | "<" s1 | "l" s9
s9 ::= "" | [^<l] s0 | "<" s1 | "l" s10
s10 ::= "" | [^<>] s0 | "<" s1 | ">" body
body ::= "{" [a-z]+ "}" [ \n]*
"""
ANY_TEXT = 'root ::= t\nt ::= "" | [^\\uD800-\\uDFFF] t\n'


def accepts(grammar: gs.Grammar, text: str | bytes) -> bool:
    m = gs.Matcher(grammar)
    data = text.encode() if isinstance(text, str) else text
    return m.accept_bytes(data) and m.can_terminate()


THEN_FORM = [
    ("", True),
    ("just text, < and <tool and <tool_cal", True),
    ("text <tool_call>{abc}", True),
    ("<tool_call>{abc}\n", True),
    ("<tool_call>", False),  # the body must follow
    ("text <tool_call>{ABC}", False),
    ("text <tool_call>{abc} more text", False),  # the body is the rest of the output
    ("<<tool_call>{a}", True),
    ("<tool_call<tool_call>{a}", True),
    ("<tool_call>{a}<tool_call>", False),  # the body's own text is never searched
]


@pytest.mark.parametrize(("text", "ok"), THEN_FORM)
def test_trigger_then_body(text: str, ok: bool) -> None:
    assert accepts(gs.Grammar.triggered(BODY, TRIGGER), text) is ok


@pytest.mark.parametrize(("text", "ok"), THEN_FORM)
def test_body_starting_with_the_trigger_is_the_same_language(text: str, ok: bool) -> None:
    body = f'root ::= "{TRIGGER}" "{{" [a-z]+ "}}" [ \\n]*'
    grammar = gs.Grammar.triggered(body, TRIGGER, trigger_in_body=True)
    assert accepts(grammar, text) is ok


def test_first_occurrence_of_an_overlapping_trigger() -> None:
    # "aa" occurs first at 0 in "aaa{x}": the body must start right after the first "aa".
    then = gs.Grammar.triggered('root ::= "a{x}"', "aa")
    assert accepts(then, "aaa{x}") and not accepts(then, "aa{x}")
    prefix = gs.Grammar.triggered('root ::= "aa" "{x}"', "aa", trigger_in_body=True)
    assert accepts(prefix, "aa{x}") and not accepts(prefix, "aaa{x}")
    assert accepts(prefix, "b aa{x}") and accepts(prefix, "ba{x}") and not accepts(prefix, "baab")


def test_required_and_at_start() -> None:
    required = gs.Grammar.triggered(BODY, TRIGGER, required=True)
    assert not accepts(required, "only text") and accepts(required, "x <tool_call>{a}")
    start = gs.Grammar.triggered(BODY, [TRIGGER, "[CALL]"], at_start=True)
    assert accepts(start, "<tool_call>{a}") and accepts(start, "[CALL]{a}")
    assert not accepts(start, " <tool_call>{a}") and not accepts(start, "")


def test_regex_triggers() -> None:
    g = gs.Grammar.triggered(BODY, gs.Trigger.regex(r"<(tool|fn)[0-9]*>"))
    assert accepts(g, "x <fn12>{a}") and accepts(g, "<tool>{a}") and accepts(g, "<fn")
    assert not accepts(g, "x <fn1> no body")
    anchored = gs.Grammar.triggered(BODY, {"type": "pattern_full", "value": r"\s*CALL:"})
    assert accepts(anchored, "  CALL:{a}") and accepts(anchored, "text CALL: is plain text")
    assert not accepts(anchored, "CALL: plain")


def test_several_triggers_and_excluded_overlaps() -> None:
    g = gs.Grammar.triggered(BODY, ["<a>", "<ab>"])
    assert accepts(g, "x<a>{q}") and accepts(g, "x<ab>{q}")
    assert not accepts(g, "x<ab>") and not accepts(g, "x<a>b>{q}")


def test_trigger_coercion_and_errors() -> None:
    assert gs.Trigger.coerce("<x>") == gs.Trigger.literal("<x>")
    assert gs.Trigger.coerce(7) == gs.Trigger.token(7)
    assert gs.Trigger.coerce({"type": "word", "value": "[T]"}) == gs.Trigger.literal("[T]")
    assert gs.Trigger.coerce({"type": "token", "token": 3, "value": "<|x|>"}).value == 3
    assert gs.Trigger.coerce({"regex": "a+"}) == gs.Trigger.regex("a+")
    with pytest.raises(ValueError, match="non-empty"):
        gs.Trigger.literal("")
    with pytest.raises(ValueError, match="unknown trigger type"):
        gs.Trigger.coerce({"type": "sometimes"})
    with pytest.raises(TypeError):
        gs.Trigger.coerce(1.5)
    with pytest.raises(ValueError, match="regex trigger cannot start the body"):
        gs.Grammar.triggered(BODY, gs.Trigger.regex("x+"), trigger_in_body=True)
    with pytest.raises(gs.SchemaError, match="empty string"):
        gs.Grammar.triggered(BODY, gs.Trigger.regex("x*"))
    with pytest.raises(ValueError, match="at least one trigger"):
        gs.Grammar.triggered(BODY, [])
    with pytest.raises(ValueError, match="MAX_TRIGGERS"):
        gs.Grammar.triggered(BODY, [f"<{i}>" for i in range(gs.limits.MAX_TRIGGERS + 1)])


def test_token_trigger_is_a_token_reference() -> None:
    tokens = [b"a", b"{", b"}", b"<|call|>", b"<", b"|", b"</s>"]
    vocab = gs.Vocab(tokens, eos_ids=[6], special_ids=[3])
    g = gs.Grammar.triggered('root ::= "{" "a"+ "}"', gs.Trigger.token("<|call|>"))
    assert "<|call|>" in g.to_gbnf()
    m = gs.Matcher(gs.compile(g, vocab))
    assert sorted(m.allowed_tokens()) == [0, 1, 2, 3, 4, 5, 6]  # text, the token, EOS
    assert m.accept_token(0) and m.accept_token(3)
    assert list(m.allowed_tokens()) == [1]
    # the same bytes written as text are just text
    m2 = gs.Matcher(gs.compile(g, vocab))
    assert m2.accept_bytes(b"<|call|>") and m2.can_terminate()


# --- real vocabularies ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=VOCABS)
def real(request: pytest.FixtureRequest) -> tuple[Any, gs.Vocab]:
    return load_vocab(request.param)


def _segmentations(vocab: gs.Vocab, text: str, limit: int = 400) -> list[list[int]]:
    """Every way to write ``text`` as a sequence of normal tokens (up to ``limit``)."""
    data = text.encode()
    pieces: dict[int, list[tuple[int, int]]] = {}
    for i in range(len(data)):
        for j in range(i + 1, len(data) + 1):
            for tid in vocab.find_by_text(data[i:j]):
                if not vocab.is_special(tid) and not vocab.is_eos(tid):
                    pieces.setdefault(i, []).append((j, tid))
    out: list[list[int]] = []

    def walk(i: int, acc: list[int]) -> None:
        if len(out) >= limit:
            return
        if i == len(data):
            out.append(list(acc))
            return
        for j, tid in pieces.get(i, []):
            walk(j, [*acc, tid])

    walk(0, [])
    return out


def _allowed(m: gs.Matcher, size: int) -> set[int]:
    row = np.zeros((size + 31) // 32, dtype=np.int32)
    m.fill_mask(row)
    return set(decode(row))


def _bit(m: gs.Matcher, size: int, tid: int) -> bool:
    row = np.zeros((size + 31) // 32, dtype=np.int32)
    m.fill_mask(row)
    return bool((int(row[tid >> 5]) >> (tid & 31)) & 1)


def test_trigger_found_at_every_token_split(real: tuple[Any, gs.Vocab]) -> None:
    llm, vocab = real
    compiled = gs.compile(gs.Grammar.triggered(BODY, TRIGGER), vocab)
    free, body = tokenize(llm, "Here goes: "), tokenize(llm, "{abc}")
    splits = _segmentations(vocab, TRIGGER, limit=150)
    assert len(splits) > 10  # byte tokens at least, and merges
    start = gs.Matcher(compiled)
    assert all(start.accept_token(t) for t in free)
    for split in splits:
        m = start.fork()
        for tid in split + body:
            assert _bit(m, vocab.size, tid), (split, vocab.token_bytes(tid))
            assert m.accept_token(tid)
        assert m.can_terminate()
        assert (
            not gs.Matcher(compiled).fork().accept_bytes(b"Here goes: " + TRIGGER.encode() + b"!")
        )


def test_tokens_completing_the_trigger_and_running_into_the_body(
    real: tuple[Any, gs.Vocab],
) -> None:
    """After each proper prefix of the trigger, every token that finishes the trigger is
    allowed exactly when its remaining bytes fit the body (byte-level matcher as reference)."""
    _, vocab = real
    grammar = gs.Grammar.triggered(BODY, TRIGGER)
    compiled = gs.compile(grammar, vocab)
    tokens = vocab.tokens()
    checked = 0
    for cut in range(len(TRIGGER)):
        m = gs.Matcher(compiled)
        assert m.accept_bytes(b"text " + TRIGGER[:cut].encode())
        reference = gs.Matcher(grammar)
        assert reference.accept_bytes(b"text " + TRIGGER[:cut].encode())
        allowed = _allowed(m, vocab.size)
        rest = TRIGGER[cut:].encode()
        for tid, data in enumerate(tokens):
            if vocab.is_special(tid) or vocab.is_eos(tid) or not data.startswith(rest):
                continue
            checked += 1
            assert (tid in allowed) == reference.fork().accept_bytes(data), (cut, data)
    assert checked > 0


def test_trigger_inside_the_body_is_text(real: tuple[Any, gs.Vocab]) -> None:
    llm, vocab = real
    body = gs.Grammar.from_json_schema(
        {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}
    )
    compiled = gs.compile(gs.Grammar.triggered(body, TRIGGER), vocab)
    m = gs.Matcher(compiled)
    doc = 'x <tool_call>{"note": "a <tool_call> inside, <tool_call>{"}'
    for tid in tokenize(llm, doc):
        assert m.accept_token(tid)
    assert m.can_terminate()
    # still inside the body: text after it is refused
    assert not m.fork().accept_bytes(b" more")


def test_masks_equal_the_hand_written_grammar_and_brute_force(real: tuple[Any, gs.Vocab]) -> None:
    llm, vocab = real
    triggered = gs.Matcher(gs.compile(gs.Grammar.triggered(BODY, TRIGGER), vocab))
    in_body = gs.Grammar.triggered(
        f'root ::= "{TRIGGER}" "{{" [a-z]+ "}}" [ \\n]*', TRIGGER, trigger_in_body=True
    )
    prefixed = gs.Matcher(gs.compile(in_body, vocab))
    hand = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(HAND_WRITTEN), vocab))
    doc = tokenize(llm, "Sure, < and <tool are fine. <tool_call>{abc}\n")
    for step, tid in enumerate(doc):
        expected = _allowed(hand, vocab.size)
        assert _allowed(triggered, vocab.size) == expected, step
        assert _allowed(prefixed, vocab.size) == expected, step
        if step in (0, len(doc) // 2):
            brute = {t for t in range(vocab.size) if triggered.fork().accept_token(t)}
            assert expected == brute, step
        for m in (triggered, prefixed, hand):
            assert m.accept_token(tid)


def test_free_stretch_masks_allow_all_text(real: tuple[Any, gs.Vocab]) -> None:
    """In the free stretch the mask is the plain any-text mask, except tokens holding the whole
    trigger (allowed only when their rest fits the body)."""
    llm, vocab = real
    triggered = gs.Matcher(gs.compile(gs.Grammar.triggered(BODY, TRIGGER), vocab))
    any_text = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(ANY_TEXT), vocab))
    tokens = vocab.tokens()
    holding = {t for t, data in enumerate(tokens) if TRIGGER.encode() in data}
    for tid in tokenize(llm, "Plain words, numbers 12.5 and emoji 🙂 here."):
        free = _allowed(any_text, vocab.size)
        got = _allowed(triggered, vocab.size)
        assert free - holding <= got <= free
        assert len(free) > vocab.size * 0.9
        assert triggered.accept_token(tid) and any_text.accept_token(tid)
