"""gbnf_sampler.engines without an engine: request kinds to grammars (structural tags through
main's ``Grammar.from_structural_tag``, special tokens of the engine's vocabulary included),
the per-request compile failures of the compile pool."""

from __future__ import annotations

import json
import time

import pytest

import gbnf_sampler as gs
from assets import require, vocab_gguf
from engine_helpers import TOOL_TAG, tokenize
from gbnf_sampler.compiled import CacheStats
from gbnf_sampler.engines import EngineGrammars, grammar_for
from gbnf_sampler.errors import StructuralTagError
from mask_helpers import assert_masks_exact, bpe_vocab

TRIGGERED = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<tool>"],
        "tags": [
            {"type": "tag", "begin": "<tool>", "content": {"type": "any_text"}, "end": "</tool>"}
        ],
    },
}


def _accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return m.accept_bytes(text.encode()) and m.can_terminate()


@pytest.mark.parametrize(
    ("fmt", "accepted", "rejected"),
    [
        ({"type": "const_string", "value": 'say "hi"\n'}, ['say "hi"\n'], ["say hi"]),
        (
            {"type": "sequence", "elements": [
                {"type": "regex", "pattern": "[0-9]+"},
                {"type": "or", "elements": [
                    {"type": "const_string", "value": "!"},
                    {"type": "grammar", "grammar": 'root ::= "?" x\nx ::= "?"'},
                ]},
            ]},
            ["12!", "7??"], ["12", "x!", "7?"],
        ),
        (
            {"type": "tags_with_separator", "separator": ",", "at_least_one": True, "tags": [
                {"type": "tag", "begin": "<a>", "content": {"type": "json_schema",
                 "json_schema": {"type": "integer"}}, "end": ["</a>", "</A>"]}]},
            ["<a>1</a>", "<a>1</A>,<a>-2</a>"], ["", "<a>x</a>", "<a>1</a>,"],
        ),
        (
            TRIGGERED["format"],
            ["", "plain <too text", "a <tool>any < / text</tool> b <tool></tool>"],
            ["a <tool>x", "a <tool>x</tool> <tool>", "<tool>a</tool"],
        ),
        (
            {**TRIGGERED["format"], "at_least_one": True, "stop_after_first": True},
            ["<tool>y</tool>"], ["no tag", "<tool>y</tool> more"],
        ),
    ],
)  # fmt: skip
def test_structural_tag_formats(fmt: dict, accepted: list[str], rejected: list[str]) -> None:
    spec = json.dumps({"type": "structural_tag", "format": fmt})
    grammar = grammar_for("structural_tag", spec)
    same = gs.Grammar.from_structural_tag(json.loads(spec))  # the engines reuse main's compiler
    for text in accepted:
        assert _accepts(grammar, text) and _accepts(same, text), text
    for text in rejected:
        assert not _accepts(grammar, text) and not _accepts(same, text), text


def test_legacy_structural_tag() -> None:
    grammar = grammar_for("structural_tag", json.dumps(TOOL_TAG))
    assert _accepts(grammar, 'Hi <function=get_weather>{"city": "Oslo"}</function> ok')
    assert not _accepts(grammar, 'Hi <function=get_weather>{"town": "Oslo"}</function>')
    assert not _accepts(grammar, "Hi <function=get_time>{}</function>")


def test_structural_tag_fields_sglang_sends() -> None:
    """SGLang's tool-call tags: the legacy form with ``at_least_one`` (``tool_choice:
    "required"``: a tool call first, no free text before it) and ``excludes: []`` on every
    json_schema format (a non-empty list is refused, not ignored)."""
    required = grammar_for("structural_tag", json.dumps({**TOOL_TAG, "at_least_one": True}))
    call = '<function=get_weather>{"city": "Oslo"}</function>'
    assert _accepts(required, call) and not _accepts(required, "Hi " + call)
    optional = grammar_for("structural_tag", json.dumps({**TOOL_TAG, "at_least_one": False}))
    assert _accepts(optional, "Hi " + call) and _accepts(optional, "no call")
    content = {"type": "json_schema", "json_schema": {"type": "integer"}, "excludes": []}
    fmt = {"type": "tag", "begin": "<a>", "content": content, "end": "</a>"}
    tag = grammar_for("structural_tag", json.dumps({"type": "structural_tag", "format": fmt}))
    assert _accepts(tag, "<a>12</a>") and not _accepts(tag, "<a>x</a>")
    content["excludes"] = ["</a>"]
    with pytest.raises(StructuralTagError, match="format/content/excludes: excludes in JSON"):
        grammar_for("structural_tag", json.dumps({"type": "structural_tag", "format": fmt}))
    with pytest.raises(StructuralTagError, match="at_least_one"):
        grammar_for("structural_tag", json.dumps({**TOOL_TAG, "at_least_one": "yes"}))


def test_structural_tag_errors_name_the_problem() -> None:
    with pytest.raises(StructuralTagError, match="'qwen_xml_parameter' is not supported"):
        grammar_for("structural_tag", '{"type": "qwen_xml_parameter"}')
    with pytest.raises(StructuralTagError, match="starts with none of the triggers"):
        fmt = {**TRIGGERED["format"], "triggers": ["<call>"]}
        grammar_for("structural_tag", json.dumps({"type": "structural_tag", "format": fmt}))
    with pytest.raises(ValueError, match="not valid JSON"):
        grammar_for("structural_tag", "{")


def test_structural_tag_special_tokens_of_the_engine_vocabulary() -> None:
    """An engine's structural tag is compiled for its vocabulary: text that spells a special
    token (Llama-3's ``<|start_header_id|>``) is that one token, never the spelled-out text."""
    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("llama-bpe")))
    tag = next(i for i in vocab.special_ids if vocab.token_bytes(i) == b"<|start_header_id|>")
    spec = {
        "type": "structural_tag",
        "format": {
            "type": "tag",
            "begin": "<|start_header_id|>",
            "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
            "end": "",
        },
    }
    grammars = EngineGrammars(vocab, compile_threads=1)
    compiled = grammars.compile("structural_tag", json.dumps(spec))
    as_token = gs.Matcher(compiled)
    assert all(as_token.accept_token(t) for t in [tag, *tokenize(vocab, "42")])
    assert as_token.can_terminate()
    spelled = gs.Matcher(compiled)
    first = tokenize(vocab, "<|start_header_id|>")[0]
    assert first != tag and not spelled.accept_token(first)


def test_kinds_and_whitespace() -> None:
    compact = grammar_for("json", '{"type": "object"}', whitespace="compact")
    assert _accepts(compact, '{"a":1}') and not _accepts(compact, '{"a": 1}')
    assert _accepts(grammar_for("json", "$$ANY$$"), "[1, null]")
    assert _accepts(grammar_for("json_object", ""), "{}")
    assert not _accepts(grammar_for("json_object", ""), "[]")
    assert _accepts(grammar_for("choice", '["a\\n", "b"]'), "a\n")
    with pytest.raises(ValueError, match="unknown request kind"):
        grammar_for("lark", "x")


def test_compile_failures_are_per_request() -> None:
    grammars = EngineGrammars(gs.Vocab([b"a", b"b"], eos_ids=[1]), compile_threads=2)
    try:
        futures = [grammars.submit("gbnf", "root ::= ("), grammars.submit("regex", "a+")]
        bad, good = (f.result() for f in futures)
        assert bad.kind == "gbnf" and "line 1, column 10" in bad.message
        assert isinstance(good, gs.CompiledGrammar)
        assert grammars.grammar("regex", "a+") is grammars.grammar("regex", "a+")
    finally:
        grammars.shutdown()


def _settled(compiled: gs.CompiledGrammar) -> CacheStats:
    """The cache's stats once they stop changing (background work done), within 10 s."""
    last = compiled.stats()
    for _ in range(1000):
        time.sleep(0.01)
        now = compiled.stats()
        if now == last:
            return now
        last = now
    raise AssertionError("the background precompute did not settle")


def test_compile_computes_the_first_masks_on_the_compile_thread() -> None:
    """A new grammar's reachable states are classified inside compile (within precompute_ms),
    so the decoding steps after it classify nothing themselves; masks stay exact."""
    gs.compiled.clear_cache()
    vocab = bpe_vocab()
    grammars = EngineGrammars(vocab, compile_threads=1, precompute_ms=10_000)
    compiled = grammars.compile("json", json.dumps({"type": "object"}))
    assert not compiled.stats().precompute_running  # the plan is over when compile returns
    stats = _settled(compiled)  # states a background worker still held then are done too
    assert stats.filled > 1
    assert stats.classified - stats.background <= 1  # the start state's, filled first
    m = gs.Matcher(compiled)
    for tid in tokenize(vocab, '{"a": [1, "x"]}'):
        assert tid in assert_masks_exact(m, vocab.size)
        assert m.accept_token(tid)
    after = compiled.stats()  # the steps added only empty entries (states the plan leaves out)
    assert after.bytes == stats.bytes and after.background == stats.background


@pytest.mark.parametrize(
    ("value", "error"),
    [(-1, ValueError), (60_001, ValueError), (0.5, TypeError), (True, TypeError)],
)
def test_precompute_ms_is_checked(value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="precompute_ms must be"):
        EngineGrammars(gs.Vocab([b"a"], eos_ids=[0]), precompute_ms=value)  # type: ignore[arg-type]


def test_precompute_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """SGLang and vLLM build our backend themselves: the budget comes from the environment."""
    vocab = gs.Vocab([b"a"], eos_ids=[0])
    monkeypatch.delenv("GBNF_SAMPLER_PRECOMPUTE_MS", raising=False)
    assert EngineGrammars(vocab).precompute_ms == gs.limits.ENGINE_PRECOMPUTE_MS
    monkeypatch.setenv("GBNF_SAMPLER_PRECOMPUTE_MS", "0")
    assert EngineGrammars(vocab).precompute_ms == 0
    assert EngineGrammars(vocab, precompute_ms=7).precompute_ms == 7  # the argument wins
    for bad, error in (("fast", ValueError), ("-5", ValueError), ("1.5", ValueError)):
        monkeypatch.setenv("GBNF_SAMPLER_PRECOMPUTE_MS", bad)
        with pytest.raises(error, match="GBNF_SAMPLER_PRECOMPUTE_MS"):
            EngineGrammars(vocab)
