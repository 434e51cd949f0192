"""The grammar doctor's checks: a table of grammars per warning with the expected code, position
(line, column) and fix; grammars that must stay clean; the measured ambiguous_growth; the schema
check endless_extras; the vocabulary checks."""

from __future__ import annotations

import json

import pytest

import gbnf_sampler as gs
from gbnf_sampler.doctor import CODES, diagnose, diagnose_schema
from gbnf_sampler.doctor.facts import Facts
from gbnf_sampler.doctor.findings import Finding

# (grammar, code, line, column, text the fix must contain)
FINDINGS: list[tuple[str, str, int, int, str]] = [
    # empty_output: the root can match "", found through rules and at the construct to change.
    ('root ::= item*\nitem ::= "a"\n', "empty_output", 1, 10, "write item+ instead of item*"),
    ('root ::= "a" | ""\n', "empty_output", 1, 16, 'remove the empty literal ""'),
    ('root ::= "a" |\n', "empty_output", 1, 14, "remove the empty alternative"),
    ("root ::= body\nbody ::= x\nx ::= [a-z]{0,3}\n", "empty_output", 3, 7, "[a-z]{1,3}"),
    ('root ::= a b\na ::= "x"?\nb ::= "y"*\n', "empty_output", 2, 7, 'write "x" instead of "x"?'),
    # unbounded_filler: endless whitespace where the output could end.
    ('root ::= obj ws\nobj ::= "{}"\nws ::= [ \\t\\n]*\n', "unbounded_filler", 3, 8, "{0,8}"),
    ('root ::= "x" [ ]+\n', "unbounded_filler", 1, 14, "[ ]{1,8}"),
    ('root ::= "x" ws\nws ::= " " ws | ""\n', "unbounded_filler", 2, 8, 'give "ws" a fixed'),
    ('root ::= ("a" nl)+\nnl ::= "\\n"+\n', "unbounded_filler", 2, 8, '"\\n"{1,8}'),
    ('root ::= "a" ("\\u200b")*\n', "unbounded_filler", 1, 14, "{0,8}"),
    # shadowed_alternative: duplicates and cheap inclusions, the later/covered one reported.
    ('root ::= "a" | "b" | "a"\n', "shadowed_alternative", 1, 22, "remove alternative 3"),
    ('root ::= [a-z] | "q"\n', "shadowed_alternative", 1, 18, "remove alternative 2"),
    ('root ::= "q" | [a-z]\n', "shadowed_alternative", 1, 10, "remove alternative 1"),
    ("root ::= [a-c] | [a-z]\n", "shadowed_alternative", 1, 10, "remove alternative 1"),
    ('root ::= x\nx ::= "id" | [a-z]+\n', "shadowed_alternative", 2, 7, "remove alternative 1"),
    ('root ::= w | "ab"\nw ::= [ab] [ab]\n', "shadowed_alternative", 1, 14, "alternative 2"),
    ('root ::= . | "\u00e9"\n', "shadowed_alternative", 1, 14, "remove alternative 2"),
    ('root ::= ("x" "y" | "xy") "z"\n', "shadowed_alternative", 1, 21, "remove alternative 2"),
    # The core's warnings, with a fix added.
    ('root ::= "a"\nx ::= "b"\n', "unused_rule", 2, 1, "delete it"),
    ('root ::= "a"\nx ::= y\ny ::= "b"\n', "unreachable_rule", 3, 1, "delete it"),
    ('root ::= "a"\nroot ::= "b"\n', "redefined_rule", 2, 1, "delete the earlier definition"),
    # ambiguous_growth: measured, the alternative named.
    ('root ::= e\ne ::= e "+" e | "a"\n', "ambiguous_growth", 2, 7, 'e ::= "a" ("+" "a")*'),
    ('root ::= x\nx ::= x x | "a" | "b"\n', "ambiguous_growth", 2, 7, "each text has one parse"),
]

# Grammars on which a code must not fire.
CLEAN: list[tuple[str, str]] = [
    ('root ::= item+\nitem ::= "a"\n', "empty_output"),
    ('root ::= obj ws\nobj ::= "{}"\nws ::= [ \\t\\n]{0,20}\n', "unbounded_filler"),
    ('root ::= "[" ws "]"\nws ::= [ \\t\\n]*\n', "unbounded_filler"),  # not where output ends
    ('root ::= "x" [a ]*\n', "unbounded_filler"),  # carries text, not filler
    ('root ::= "ab" | [a-z]\n', "shadowed_alternative"),  # "ab" is two characters
    ("root ::= [a-m] | [k-z]\n", "shadowed_alternative"),  # overlap is not inclusion
    ('root ::= "a" x | "a" y\nx ::= "b"\ny ::= "c"\n', "shadowed_alternative"),
    ('root ::= l\nl ::= l "+" n | n\nn ::= [0-9]+\n', "ambiguous_growth"),  # left recursion
    ('root ::= "(" root ")" root | ""\n', "ambiguous_growth"),  # nested parentheses
    ('root ::= "a" root | "b"\n', "ambiguous_growth"),  # right recursion
]


def _only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


@pytest.mark.parametrize(("grammar", "code", "line", "column", "fix"), FINDINGS)
def test_finding_table(grammar: str, code: str, line: int, column: int, fix: str) -> None:
    report = diagnose(grammar)
    assert report.ok
    found = _only(report.findings, code)
    assert found, [f.rendered for f in report.findings]
    first = found[0]
    assert (first.line, first.column) == (line, column), first.rendered
    assert fix in first.fix, first.fix
    assert first.hint == first.fix and first.severity == "warning"
    assert first.snippet == grammar.splitlines()[line - 1]
    assert f"line {line}, column {column}:" in first.rendered


@pytest.mark.parametrize(("grammar", "code"), CLEAN)
def test_clean_table(grammar: str, code: str) -> None:
    report = diagnose(grammar)
    assert report.ok
    assert not _only(report.findings, code), [f.rendered for f in report.findings]


def test_every_code_is_documented_and_tabled() -> None:
    tabled = {code for _, code, *_ in FINDINGS}
    others = {"endless_extras", "unspellable", "no_start", "llama_cpp"}  # tests below and apart
    assert tabled | others == set(CODES)


def test_empty_output_through_rules_empty_only_indirectly() -> None:
    # b is empty only because c is: the nullable analysis must follow rules.
    grammar = 'root ::= a\na ::= b\nb ::= c\nc ::= "x"?\n'
    [finding] = _only(diagnose(grammar).findings, "empty_output")
    assert (finding.rule, finding.line) == ("c", 4)
    assert "root -> a -> b -> c" in finding.message


# Nullability decided inside one recursive component, in an order where each rule turns
# nullable only after a rule it references (and a rule that never does).
NULLABLE_CYCLES = [
    ('root ::= a\na ::= b b\nb ::= c | "x"\nc ::= a | ""\n', {"root", "a", "b", "c"}),
    (
        'root ::= a\na ::= "(" a ")" | b\nb ::= c\nc ::= a "!" | d\nd ::= ""\n',
        {"root", "a", "b", "c", "d"},
    ),
    ('root ::= a\na ::= b "x"\nb ::= a | ""\nz ::= z "q"\n', {"b"}),
]


@pytest.mark.parametrize(("grammar", "nullable"), NULLABLE_CYCLES)
def test_nullable_rules_through_cycles(grammar: str, nullable: set[str]) -> None:
    g = gs.Grammar.from_gbnf(grammar)
    assert Facts(g.rules, g.root).nullable_rules == nullable


def test_growth_names_every_culprit_and_measures() -> None:
    grammar = 'root ::= "a" root "b" | "a" root | ""\n'
    [finding] = _only(diagnose(grammar).findings, "ambiguous_growth")
    assert 'alternatives 1 or 2 of "root"' in finding.message
    # The measured sizes are in the message and grow with the length.
    sizes = [int(part.split()[0]) for part in finding.message.split(": ", 1)[1].split(", ")[:4]]
    assert sizes == sorted(sizes) and sizes[-1] >= 4 * sizes[0]


def test_growth_is_measured_not_guessed() -> None:
    # Structurally like e ::= e "+" e, but the two sides cannot both match the same text, so
    # the state stays bounded: no warning.
    grammar = 'root ::= e\ne ::= "(" e "+" e ")" | "a"\n'
    assert not _only(diagnose(grammar).findings, "ambiguous_growth")


def test_skip_and_grammar_object() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "a" | "a"\n')
    assert _only(diagnose(grammar).findings, "shadowed_alternative")
    assert not diagnose(grammar, skip={"shadowed_alternative"}).findings


def test_errors_are_reported_not_raised() -> None:
    report = diagnose('root ::= "a\n')
    assert not report.ok and report.errors[0].code == "unterminated_literal"


def test_to_dict_has_fix() -> None:
    [finding] = diagnose('root ::= "a" | "a"\n').findings
    data = finding.to_dict()
    assert data["fix"] == finding.fix and data["code"] == "shadowed_alternative"
    assert data["rule"] == "root"


# --- endless_extras ---------------------------------------------------------------------------

SCHEMA = """{
  "type": "object",
  "properties": {
    "tags": {"type": "array", "items": {"type": "string"}},
    "meta": {"type": "object", "additionalProperties": {"type": "string"}},
    "fixed": {
      "type": "object",
      "properties": {"a": {"type": "integer"}},
      "additionalProperties": false
    },
    "few": {"type": "array", "maxItems": 3},
    "pair": {"type": "array", "prefixItems": [{}, {}], "items": false}
  },
  "additionalProperties": false
}"""


def test_endless_extras_positions_and_fixes() -> None:
    report = diagnose_schema(SCHEMA)
    found = {f.pointer: f for f in report.findings}
    assert set(found) == {"/properties/tags", "/properties/meta"}
    tags, meta = found["/properties/tags"], found["/properties/meta"]
    assert (tags.line, tags.column, tags.code) == (4, 5, "endless_extras")
    assert 'set "maxItems": N' in tags.fix
    assert (meta.line, meta.column) == (5, 5)
    assert 'set "maxProperties": N' in meta.fix


def test_endless_extras_follows_the_converter_option() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "object"}}}
    pointers = {f.pointer for f in diagnose_schema(schema).findings}
    assert pointers == {"", "/properties/a"}
    assert "additionalProperties" in diagnose_schema(schema).findings[0].fix
    assert not diagnose_schema(schema, additional_properties=False).findings


def test_schema_grammar_findings_are_apart() -> None:
    report = diagnose_schema(json.dumps({"enum": ["a", "b"]}))
    assert report.gbnf is not None and report.grammar is not None
    assert report.findings == [] and report.generated == []


# --- vocabulary checks ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def toy_vocab() -> gs.Vocab:
    tokens = [b"a", b"b", b"ab", b"<|end|>", b"<", b"x", b"\xc3", b"\xa9", b"</s>"]
    return gs.Vocab(tokens, eos_ids=[8], special_ids=[3, 8])


def test_unspellable_literal_special_text_and_class(toy_vocab: gs.Vocab) -> None:
    grammar = 'root ::= "ab" "<|end|>" | "q" | "\u00e9" [qz]\n'
    found = _only(diagnose(grammar, vocab=toy_vocab).findings, "unspellable")
    assert [(f.line, f.column) for f in found] == [(1, 15), (1, 27), (1, 37)]
    special, letter, klass = found
    assert "special token 3" in special.message and "<[3]>" in special.fix
    assert "<|end|>" in special.fix
    assert '"q"' in letter.message
    assert "class" in klass.message


def test_spellable_across_token_boundaries(toy_vocab: gs.Vocab) -> None:
    # "b<" needs a token boundary inside "ab"? no: "a" then "b" then "<" - spellable; "xab" too.
    grammar = 'root ::= "xab" "b<" "\u00e9a"\n'
    assert not _only(diagnose(grammar, vocab=toy_vocab).findings, "unspellable")


def test_no_start(toy_vocab: gs.Vocab) -> None:
    [finding] = _only(diagnose('root ::= [qz] "a"\n', vocab=toy_vocab).findings, "no_start")
    assert (finding.line, finding.column) == (1, 1)
    assert "allows nothing" in finding.message and "one of: 'q', 'z'" in finding.message
    assert not _only(diagnose('root ::= "ab"\n', vocab=toy_vocab).findings, "no_start")


def test_vocab_with_every_byte_is_always_spellable() -> None:
    vocab = gs.Vocab([bytes([i]) for i in range(256)] + [b"<s>"], eos_ids=[256], special_ids=[])
    assert not diagnose('root ::= "\U0001f600" [\u4e00-\u4e05]\n', vocab=vocab).findings


def test_deepest_nesting_the_core_allows() -> None:
    # 256 nested groups (the core's limit): the tree conversion falls back to its iterative
    # form, and every check, the dialect one included, still runs and places its findings.
    depth = 256
    text = "root ::= " + '("a" ' * depth + '"z"' + ' | "b" | "b")*' * depth + "\n"
    report = diagnose(text, dialect="llama.cpp")
    assert report.skipped == []
    codes = {f.code for f in report.findings}
    assert {"empty_output", "shadowed_alternative"} <= codes
    assert all(f.line == 1 and f.column > 0 for f in report.findings)


def test_unspellable_on_a_vocabulary_without_byte_fallback() -> None:
    pytest.importorskip("llama_cpp", reason="Vocab.from_gguf reads GGUF through llama-cpp-python")
    from assets import require, vocab_gguf

    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("bert-bge")))  # WordPiece, uncased
    report = diagnose('root ::= "ok " mood\nmood ::= "\U0001f600" | "fine"\n', vocab=vocab)
    [finding] = _only(report.findings, "unspellable")
    assert (finding.line, finding.column, finding.rule) == (2, 10, "mood")
    assert "0xf0" in finding.message
    assert not _only(report.findings, "no_start")
