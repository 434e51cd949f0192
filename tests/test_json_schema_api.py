"""Pydantic models, choices, tool calls, response_format, any-JSON and the convert command."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Literal

import pydantic
import pytest

import gbnf_sampler as gs
from gbnf_sampler.cli import main as cli_main
from gbnf_sampler.cli.status import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from gbnf_sampler.schema import (
    JSON_GBNF,
    choices_to_gbnf,
    response_format_to_gbnf,
    schema_to_gbnf,
    tools_to_gbnf,
)
from schema_helpers import accepts


class Color(str, Enum):
    RED = "red"
    GREEN = "green"


class Pet(pydantic.BaseModel):
    kind: Literal["cat", "dog"]
    name: str = pydantic.Field(min_length=1, max_length=10)


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0, le=150)
    color: Color | None = None
    pets: list[Pet] = []
    score: int | float = 0


def test_pydantic_model_class() -> None:
    grammar = gs.Grammar.from_json_schema(Person)
    good = Person(name="Ann", age=40, color=Color.RED, pets=[Pet(kind="cat", name="Tom")])
    assert accepts(grammar, good.model_dump_json())
    assert accepts(grammar, json.dumps(good.model_dump(mode="json"), indent=2))
    assert accepts(grammar, '{"name": "Bo", "age": 0}')
    assert not accepts(grammar, '{"name": "Bo", "age": 151}')
    assert not accepts(grammar, '{"name": "Bo", "age": 3, "color": "blue"}')
    assert not accepts(grammar, '{"name": "Bo", "age": 3, "pets": [{"kind": "cow", "name": "x"}]}')


def test_json_gbnf_accepts_any_json() -> None:
    grammar = gs.Grammar.json()
    for doc in [None, 1, -0.5e-3, "x\u00e9😀", [], {}, {"a": [1, {"b": None}]}]:
        assert accepts(grammar, json.dumps(doc))
        assert accepts(grammar, json.dumps(doc, ensure_ascii=False, indent=2))
    for bad in ["", "{", "[1,]", "01", "'x'", '"\\x"', '"\\ud800"', "nul", '{"a" 1}']:
        assert not accepts(grammar, bad)
    assert "string-tail ::=" in JSON_GBNF


def test_choices() -> None:
    grammar = choices_to_gbnf(["yes", "no", 'say "hi"\n'])
    assert accepts(grammar, "yes")
    assert accepts(grammar, 'say "hi"\n')
    assert not accepts(grammar, "ye")
    assert not accepts(grammar, "yesno")
    assert accepts(gs.Grammar.from_choices(["é", "😀"]), "😀")
    with pytest.raises(gs.SchemaError):
        choices_to_gbnf([])
    with pytest.raises(TypeError):
        choices_to_gbnf("yes")  # type: ignore[arg-type]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "$defs": {"id": {"type": "integer"}},
                "properties": {"id": {"$ref": "#/$defs/id"}},
                "required": ["id"],
            },
        },
    },
]


def test_tools_auto() -> None:
    grammar = tools_to_gbnf(TOOLS)
    call = {"name": "get_weather", "arguments": {"city": "Oslo", "unit": "C"}}
    assert accepts(grammar, json.dumps(call))
    assert accepts(grammar, json.dumps([call, {"name": "lookup", "arguments": {"id": 4}}]))
    assert accepts(grammar, "It is sunny.")
    assert not accepts(grammar, json.dumps({"name": "lookup", "arguments": {"id": "4"}}))
    assert not accepts(grammar, json.dumps({"name": "other", "arguments": {}}))
    assert not accepts(grammar, '{"not a call": 1}')


def test_tools_required_and_named() -> None:
    required = gs.Grammar.from_tools(TOOLS, tool_choice="required")
    assert not accepts(required, "text")
    assert accepts(required, '{"name": "lookup", "arguments": {"id": 1}}')
    named = tools_to_gbnf(TOOLS, {"type": "function", "function": {"name": "lookup"}})
    assert accepts(named, '{"name": "lookup", "arguments": {"id": 1}}')
    assert not accepts(named, '{"name": "get_weather", "arguments": {"city": "x"}}')
    assert not accepts(named, '[{"name": "lookup", "arguments": {"id": 1}}]')
    none = tools_to_gbnf(TOOLS, "none")
    assert accepts(none, "plain")
    assert not accepts(none, '{"name": "lookup", "arguments": {"id": 1}}')
    with pytest.raises(gs.SchemaError):
        tools_to_gbnf(TOOLS, {"type": "function", "function": {"name": "missing"}})


def test_response_format() -> None:
    obj = response_format_to_gbnf({"type": "json_object"})
    assert accepts(obj, '{"a": [1]}')
    assert not accepts(obj, "[1]")
    spec = {
        "type": "json_schema",
        "json_schema": {
            "name": "x",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
            },
        },
    }
    grammar = gs.Grammar.from_response_format(spec)
    assert accepts(grammar, '{"a": 1}')
    assert not accepts(grammar, '{"a": 1, "b": 2}')
    assert accepts(response_format_to_gbnf({"type": "text"}), "anything at all\n")
    with pytest.raises(gs.SchemaError) as info:
        response_format_to_gbnf({"type": "xml"})
    assert info.value.path == "/type"


def test_indent_mode_recursive_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
        "additionalProperties": False,
    }
    grammar = schema_to_gbnf(schema, whitespace="indent")
    doc = {"kids": [{"kids": []}, {"kids": [{}]}]}
    assert accepts(grammar, json.dumps(doc, indent=2))
    assert not accepts(grammar, json.dumps(doc))
    assert not accepts(grammar, json.dumps(doc, indent=4))


def test_convert_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps({"type": "integer", "minimum": 3}))
    assert cli_main(["convert", str(schema_file)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("root ::=")
    assert accepts(out, "4") and not accepts(out, "2")
    assert cli_main(["convert", "--regex", "a+b"]) == EXIT_OK
    assert accepts(capsys.readouterr().out, "aab")
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "array", "contains": {}, "uniqueItems": true}')
    assert cli_main(["convert", str(bad)]) == EXIT_INVALID
    assert "/contains" in capsys.readouterr().err
    assert cli_main(["convert", str(tmp_path / "missing.json")]) == EXIT_USAGE
    assert "cannot read" in capsys.readouterr().err
    args = ["convert", "--whitespace", "compact", "--no-additional-properties", str(schema_file)]
    assert cli_main(args) == EXIT_OK
