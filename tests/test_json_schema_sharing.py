"""Work the JSON Schema converter does once and shares: a string rule per set of string
keywords, a flat form per subschema, an automaton per regex tree. Sharing must not change the
language: the shared grammars accept and refuse exactly what jsonschema says."""

from __future__ import annotations

import json
import re
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.regex import automata, parser, tree
from gbnf_sampler.schema import convert, scalars, schema_to_gbnf
from schema_helpers import accepts
from test_json_schema import is_valid

CODE = {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$", "maxLength": 6}


def test_one_string_rule_per_set_of_string_keywords(monkeypatch: Any) -> None:
    made: list[Any] = []
    original = scalars._new_string_rule

    def counted(rules: Any, schema: dict[str, Any], path: str, hint: str) -> str | None:
        made.append(schema.get("maxLength"))
        return original(rules, schema, path, hint)

    monkeypatch.setattr(scalars, "_new_string_rule", counted)
    schema = {
        "type": "object",
        "properties": {
            "from": CODE,
            "to": {**CODE, "description": "annotations do not matter"},
            "via": {"type": "array", "items": CODE},
            "other": {**CODE, "maxLength": 5},  # (no string of 6 is shorter than 6: empty)
        },
    }
    text = schema_to_gbnf(schema)
    assert sorted(made) == [5, 6]  # from, to and via's items: one rule made

    def value_rules(key: str) -> set[str]:
        return set(re.findall(rf'"\\"{key}\\"" ws ":" ws ([\w-]+)', text))

    (code,) = value_rules("from")
    assert value_rules("to") == {code}, text
    (items,) = value_rules("via")
    assert re.search(rf"^{items} ::= .*ws {code} \(ws \",\" ws {code}\)\*", text, re.M), text
    grammar = gs.Grammar.from_gbnf(text)
    cases: list[tuple[Any, bool]] = [
        ({"from": "AB-123", "to": "CD-456", "via": ["EF-789"]}, True),
        ({"from": "AB-123", "to": "CD-45"}, False),
        ({"via": ["AB-123", "ab-123"]}, False),
        ({"other": "AB-123"}, False),
    ]
    for value, valid in cases:
        assert is_valid(schema, value) is valid, value
        text_value = json.dumps(value)
        assert accepts(grammar, text_value) is valid, text_value


def test_each_subschema_flattened_once(monkeypatch: Any) -> None:
    """A oneOf whose branches share a definition: the analyses flatten it again and again,
    the converter makes its flat form once per reference chain and analysis."""
    made: list[int] = []
    original = convert.Converter.new_flat

    def counted(self: Any, schema: dict[str, Any], path: str, seen: tuple[str, ...]) -> Any:
        made.append(id(schema))
        return original(self, schema, path, seen)

    monkeypatch.setattr(convert.Converter, "new_flat", counted)
    branches = [
        {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"const": k}}}]}
        for k in ("a", "b", "c", "d", "e", "f")
    ]
    schema = {
        "$defs": {"base": {"type": "object", "required": ["kind"], "properties": {"n": {}}}},
        "oneOf": branches,
    }
    grammar = gs.Grammar.from_json_schema(schema)
    assert max(made.count(i) for i in set(made)) <= 2  # once outside, once inside an analysis
    assert accepts(grammar, '{"n": 1, "kind": "c"}')  # (the base's properties come first)
    assert not accepts(grammar, '{"kind": "g"}')
    assert not accepts(grammar, '{"n": 1}')


def test_one_automaton_per_regex_tree() -> None:
    node = parser.parse("[a-c]+x?", "both")
    first = automata.from_regex(node)
    assert automata.from_regex(parser.parse("[a-c]+x?", "both")) is first  # equal trees
    assert first.matches("abx") and not first.matches("x")
    huge = tree.Rep(tree.Chars(((97, 98),)), 60_000, 60_000)  # past the NFA state limit
    for _ in range(2):  # a cached failure is raised again, every time
        try:
            automata.from_regex(huge)
        except automata.TooLarge:
            pass
        else:
            raise AssertionError("TooLarge expected")


def test_one_key_rule_per_set_of_declared_names() -> None:
    # The keys beside the declared ones depend on the names alone: objects declaring the same
    # names share one rule for them, whatever their values.
    def point(y: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"x": {"type": "integer"}, "y": y}}

    schema = {
        "type": "object",
        "properties": {
            "a": point({"type": "integer"}),
            "c": point({"type": "string"}),
            "d": {"type": "object", "properties": {"x": {"type": "integer"}}},
        },
    }
    text = schema_to_gbnf(schema)
    key_rules = re.findall(r'^(key(?:-\d+)?) ::= "\\"" key-[\d-]+$', text, re.M)
    assert len(key_rules) == 3, text  # {x, y}, {x} and {a, c, d}
    grammar = gs.Grammar.from_gbnf(text)
    cases: list[Any] = [
        {"a": {"x": 1, "y": 2, "z": "free"}, "c": {"x": 1, "y": "s", "yy": 0}},
        {"a": {"y": "2"}},
        {"c": {"y": 2}},
        {"d": {"x": 3, "y": "any"}},  # (declared names first: property_order="schema")
        {"d": {"x": "3"}},
        {"a": {"xy": None}, "b": 1},
    ]
    for value in cases:
        text_value = json.dumps(value)
        assert accepts(grammar, text_value) is is_valid(schema, value), text_value
