"""The doctor stays quiet on grammars that generate well: llama.cpp's shipped grammars and our own
JSON Schema output raise no warning except the documented ones (docs/notes/doctor.md):

* c.gbnf: ``empty_output`` (``root ::= (declaration)*`` accepts an empty program; true).
* schema grammars: the converter's unused rules (``diagnose_schema`` leaves them out) and
  ``endless_extras`` on schemas that bound nothing (a schema-level check, not a grammar one).
"""

from __future__ import annotations

import pytest

import gbnf_sampler as gs
from assets import llama_cpp_grammars, require
from gbnf_sampler.doctor import diagnose, diagnose_schema
from gbnf_sampler.schema import JSON_GBNF, schema_to_gbnf, tools_to_gbnf
from test_json_schema import CASES

DOCUMENTED = {"c": {"empty_output"}}


@pytest.fixture(scope="module")
def shipped() -> dict[str, str]:
    paths = require(llama_cpp_grammars)
    return {name: path.read_text(encoding="utf-8") for name, path in paths.items()}


def test_llama_cpp_grammars_only_documented_findings(shipped: dict[str, str]) -> None:
    assert len(shipped) >= 8
    for name, text in shipped.items():
        codes = {f.code for f in diagnose(text).findings}
        assert codes == DOCUMENTED.get(name, set()), (name, codes)


def test_llama_cpp_grammars_are_llama_cpp_dialect(shipped: dict[str, str]) -> None:
    for name, text in shipped.items():
        found = [f for f in diagnose(text, dialect="llama.cpp").findings if f.code == "llama_cpp"]
        assert not found, (name, [f.rendered for f in found])


@pytest.mark.parametrize("whitespace", ["flexible", "compact", "indent"])
def test_schema_output_has_no_grammar_findings(whitespace: str) -> None:
    checked = 0
    for name, (schema, _, _) in CASES.items():
        try:
            text = schema_to_gbnf(schema, whitespace=whitespace)
        except gs.SchemaError:
            continue
        findings = diagnose(text).findings
        assert not findings, (name, [f.rendered for f in findings])
        checked += 1
    assert checked >= len(CASES) - 5


def test_any_json_and_tool_grammars_are_clean() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "maxLength": 40}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    for text in (JSON_GBNF, tools_to_gbnf(tools), tools_to_gbnf(tools, tool_choice="required")):
        assert not diagnose(text).findings


def test_schema_report_leaves_out_converter_artifacts() -> None:
    # An unused definition becomes an unreachable rule of the generated grammar: the core warns,
    # diagnose() reports it, diagnose_schema() (for a schema author) does not.
    schema = {
        "$defs": {"unused": {"type": "string", "pattern": "^[a-z]+$"}},
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    text = schema_to_gbnf(schema)
    raw = {f.code for f in diagnose(text).findings}
    report = diagnose_schema(schema)
    assert report.findings == [] and report.generated == []
    assert raw <= {"unused_rule", "unreachable_rule"}
