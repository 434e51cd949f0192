"""gbnf_sampler.engines without an engine: request kinds to grammars, structural tags, and the
GBNF printer that embeds one grammar in another (checked against the original's language)."""

from __future__ import annotations

import json

import pytest

import gbnf_sampler as gs
from gbnf_sampler.engines import EngineGrammars, grammar_for
from gbnf_sampler.engines.gbnf_text import embed_rules, literal

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
            ["x <tool>y</tool>"], ["no tag", "x <tool>y</tool> more"],
        ),
    ],
)  # fmt: skip
def test_structural_tag_formats(fmt: dict, accepted: list[str], rejected: list[str]) -> None:
    grammar = grammar_for("structural_tag", json.dumps({"type": "structural_tag", "format": fmt}))
    for text in accepted:
        assert _accepts(grammar, text), text
    for text in rejected:
        assert not _accepts(grammar, text), text


def test_unsupported_structural_tags_name_the_problem() -> None:
    with pytest.raises(ValueError, match="'qwen_xml_parameter' is not supported"):
        grammar_for("structural_tag", '{"format": {"type": "qwen_xml_parameter"}}')
    with pytest.raises(ValueError, match=r"tags\[0\].begin does not start with any trigger"):
        fmt = {**TRIGGERED["format"], "triggers": ["<call>"]}
        grammar_for("structural_tag", json.dumps({"format": fmt}))
    with pytest.raises(ValueError, match="not valid JSON"):
        grammar_for("structural_tag", "{")


def test_embedded_rules_keep_the_language() -> None:
    source = gs.Grammar.from_gbnf(
        'root ::= item ("," item)*\nitem ::= [a-c\\]-] | "\\"q\\u00e9" | "x"{2,3} | .\n'
    )
    rules = embed_rules(source, "p-")
    text = "root ::= p-root\n" + "\n".join(f"{k} ::= {v}" for k, v in rules.items())
    embedded = gs.Grammar.from_gbnf(text)
    for sample in ["a", "]", "-", '"qé', "xx", "xxx", "a,xx,z", "é"]:
        assert _accepts(source, sample) and _accepts(embedded, sample), sample
    for sample in ["", "dd", "xxxx", "a,", '"q']:
        assert not _accepts(source, sample) and not _accepts(embedded, sample), sample
    assert literal('a"\\\n') == '"a\\u0022\\u005c\\u000a"'


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
