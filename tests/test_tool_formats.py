"""Per-model tool-call formats: the registry and its errors, chat-template detection, real
transcripts of each family (parsed, accepted byte by byte, replayed token by token on real
vocabularies, streamed as OpenAI deltas), tool_choice / parallel_tool_calls / reasoning, the
reasoning budget tracker, and the OpenAI request/response glue."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from gbnf_sampler.errors import StructuralTagError, UnknownFormatError
from gbnf_sampler.structural import openai
from gbnf_sampler.structural.budget import BudgetTracker
from gbnf_sampler.structural.formats import ReasoningBudget
from structural_fixtures import PARIS, TOKYO, TOOLS, TRANSCRIPTS, VOCABS, load_vocab, tokenize

XGRAMMAR_FAMILIES = [  # xgrammar 0.2.9's built-ins for these families, by our names
    "llama3",  # llama
    "hermes",  # qwen_3
    "qwen3_coder",  # qwen_3_coder, qwen_3_5
    "deepseek_r1",
    "deepseek_v3_1",
    "deepseek_v3_2",
    "deepseek_v4",
    "deepseek_v4_1",
    "harmony",
    "gemma4",  # gemma_4
]


def accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return m.accept_bytes(text.encode()) and m.can_terminate()


def test_registry_names_aliases_and_unknown() -> None:
    names = gs.tool_formats.names()
    for required in [
        "hermes",
        "llama3",
        "mistral",
        "deepseek_v3",
        "harmony",
        "gemma",
        *XGRAMMAR_FAMILIES,
    ]:
        assert required in names
    assert gs.tool_formats.get("Qwen3").name == "hermes"
    assert gs.tool_formats.get("qwen-3-coder").name == "qwen3_coder"
    assert gs.tool_formats.get("gpt-oss").name == "harmony"
    with pytest.raises(UnknownFormatError) as info:
        gs.tool_formats.get("no-such-model")
    assert info.value.name == "no-such-model" and "hermes" in info.value.known
    assert "known formats" in str(info.value)
    hermes = gs.tool_formats.get("hermes")
    clash = gs.tool_formats.TaggedFormat("hermes", calls=hermes.calls)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="already registered"):
        gs.tool_formats.register(clash)
    gs.tool_formats.register(hermes)  # registering the same object again is fine


TEMPLATES = [
    ("{% for t in tools %}{{ t | tojson }}{% endfor %}<tool_call>\n{{ call | tojson }}", "hermes"),
    ("<tool_call>\n<function={{ name }}>\n<parameter={{ k }}>\n", "qwen3_coder"),
    ("<|start_header_id|>ipython<|end_header_id|>{{ '<|python_tag|>' }}", "llama3"),
    ('<|start_header_id|>system{"name": name, "parameters": dict}<|eot_id|>', "llama3"),
    ("[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]{{ calls }}", "mistral"),
    ("[TOOL_CALLS]{{ name }}[ARGS]{{ args }}", "mistral_v11"),
    (
        "{{'<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name']"
        " + '\\n```json' }}",
        "deepseek_v3",
    ),
    ("{{'<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>'}}<think>", "deepseek_r1"),
    (
        "{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + name + '<｜tool▁sep｜>' }}",
        "deepseek_v3_1",
    ),
    ("<｜DSML｜function_calls><｜DSML｜invoke name=", "deepseek_v3_2"),
    ("<｜DSML｜tool_calls>", "deepseek_v4"),
    ("<｜DSML｜ calls><｜DSML｜ invoke", "deepseek_v4_1"),
    ("<|start|>assistant<|channel|>analysis<|message|>", "harmony"),
    ("<|tool_call>call:{{ name }}<tool_call|>", "gemma4"),
    ("{{ bos_token }}<start_of_turn>user\n{{ m }}<end_of_turn>", "gemma"),
]


@pytest.mark.parametrize(("template", "name"), TEMPLATES, ids=[t[1] for t in TEMPLATES])
def test_detect(template: str, name: str) -> None:
    found = gs.tool_formats.detect(template)
    assert found is not None and found.name == name


def test_detect_unknown() -> None:
    assert gs.tool_formats.detect("{{ messages }}") is None
    assert gs.tool_formats.detect(None) is None


IDS = [f"{t[0]}-{i}" for i, t in enumerate(TRANSCRIPTS)]


@pytest.mark.parametrize(("name", "reasoning", "text", "expected"), TRANSCRIPTS, ids=IDS)
def test_transcript_parses_and_fits_the_grammar(
    name: str, reasoning: Any, text: str, expected: tuple[str, list[dict[str, Any]], str | None]
) -> None:
    fmt = gs.tool_formats.get(name)
    parsed = fmt.parse(text, TOOLS, reasoning=reasoning)
    assert (parsed.content, parsed.tool_calls, parsed.reasoning_content) == expected
    assert accepts(fmt.grammar(TOOLS, "auto", reasoning=reasoning), text)
    if expected[1]:
        # the same calls, rendered by the format, fit too and parse back the same
        rendered = fmt.render(expected[0], expected[1], expected[2])
        assert accepts(fmt.grammar(TOOLS, "auto", reasoning=reasoning), rendered)
        assert fmt.parse(rendered, TOOLS, reasoning=reasoning) == parsed


@pytest.mark.parametrize(("name", "reasoning", "text", "expected"), TRANSCRIPTS, ids=IDS)
@pytest.mark.parametrize("chunk", [1, 4, 11])
def test_streaming_deltas_add_up_to_the_parse(
    name: str,
    reasoning: Any,
    text: str,
    expected: tuple[str, list[dict[str, Any]], str | None],
    chunk: int,
) -> None:
    parser = gs.tool_formats.get(name).stream_parser(TOOLS, reasoning=reasoning)
    deltas: list[dict[str, Any]] = []
    for i in range(0, len(text), chunk):
        deltas += parser.feed(text[i : i + chunk])
    deltas += parser.finish()
    content = "".join(d.get("content", "") for d in deltas)
    thinking = "".join(d.get("reasoning_content", "") for d in deltas)
    calls: dict[int, dict[str, Any]] = {}
    for d in deltas:
        for piece in d.get("tool_calls", []):
            call = calls.setdefault(piece["index"], {"name": None, "arguments": ""})
            if "id" in piece:
                assert call["name"] is None and piece["id"].startswith("call_")
                call["name"] = piece["function"]["name"]
            call["arguments"] += piece["function"]["arguments"]
    assert content == expected[0]
    assert thinking == (expected[2] or "")
    got = [
        {"name": c["name"], "arguments": json.loads(c["arguments"])}
        for _, c in sorted(calls.items())
    ]
    assert got == expected[1]


@pytest.fixture(scope="module", params=VOCABS)
def real(request: pytest.FixtureRequest) -> tuple[Any, gs.Vocab]:
    return load_vocab(request.param)


def test_transcripts_replay_on_real_vocabularies(real: tuple[Any, gs.Vocab]) -> None:
    """Each family's transcript, tokenized by a real tokenizer, is never refused by its own
    format's grammar (mask and accept at every step; EOS at the end)."""
    llm, vocab = real
    for name, reasoning, text, _ in TRANSCRIPTS:
        grammar = gs.tool_formats.get(name).grammar(TOOLS, "auto", reasoning=reasoning, vocab=vocab)
        m = gs.Matcher(gs.compile(grammar, vocab))
        row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
        for step, tid in enumerate(tokenize(llm, text)):
            m.fill_mask(row)
            assert (int(row[tid >> 5]) >> (tid & 31)) & 1, (name, step, vocab.token_bytes(tid))
            assert m.accept_token(tid), (name, step)
        assert m.can_terminate(), name


CALL = '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>'


def test_tool_choice_modes() -> None:
    fmt = gs.tool_formats.get("hermes")
    auto = fmt.grammar(TOOLS, "auto")
    required = fmt.grammar(TOOLS, "required")
    none = fmt.grammar(TOOLS, "none")
    named = fmt.grammar(TOOLS, {"type": "function", "function": {"name": "get_weather"}})
    assert accepts(auto, "Hello!") and accepts(auto, "Sure. " + CALL)
    assert accepts(required, CALL) and not accepts(required, "Sure. " + CALL)
    assert not accepts(required, "Hello!")
    assert accepts(none, "Hello! < tool") and not accepts(none, "x " + CALL)
    assert not accepts(named, CALL) and not accepts(named, "Hello!")
    weather = fmt.render("", [PARIS])
    assert accepts(named, weather) and not accepts(named, weather + "\n" + weather)


def test_parallel_tool_calls() -> None:
    for name in ["hermes", "deepseek_v3", "mistral", "harmony", "gemma"]:
        fmt = gs.tool_formats.get(name)
        two = fmt.render("", [PARIS, TOKYO])
        one = fmt.render("", [PARIS])
        assert accepts(fmt.grammar(TOOLS, "required"), two), name
        single = fmt.grammar(TOOLS, "required", parallel_tool_calls=False)
        assert accepts(single, one) and not accepts(single, two), name


def test_extra_arguments_are_refused() -> None:
    fmt = gs.tool_formats.get("hermes")
    extra = {"name": "get_time", "arguments": {"timezone": "UTC", "unit": "celsius"}}
    assert not accepts(fmt.grammar(TOOLS, "required"), fmt.render("", [extra]))


def test_reasoning_section_is_free_and_optional_when_auto() -> None:
    fmt = gs.tool_formats.get("hermes")
    thinking = "<think>\nanything {{ <tool_call> \U0001f642</think>\n\n"
    assert accepts(fmt.grammar(TOOLS, "auto", reasoning=True), thinking + CALL)
    assert not accepts(fmt.grammar(TOOLS, "auto", reasoning=True), CALL)
    assert accepts(fmt.grammar(TOOLS, "auto", reasoning="auto"), CALL)
    assert accepts(fmt.grammar(TOOLS, "auto", reasoning="auto"), thinking + CALL)
    budget = fmt.constraint(TOOLS, reasoning={"budget": 8}).budget
    assert budget == ReasoningBudget("<think>", "</think>", 8)
    opened = gs.tool_formats.get("deepseek_r1").constraint(TOOLS, reasoning={"budget": 3}).budget
    assert opened == ReasoningBudget(None, "</think>", 3)


def test_request_errors() -> None:
    fmt = gs.tool_formats.get("hermes")
    cases = [
        (lambda: fmt.grammar(TOOLS, "sometimes"), "/tool_choice"),
        (lambda: fmt.grammar([], "required"), "/tools"),
        (
            lambda: fmt.grammar(TOOLS, {"type": "function", "function": {"name": "x"}}),
            "/tool_choice",
        ),
        (lambda: fmt.grammar([{"type": "function", "function": {}}]), "/tools/0/function/name"),
        (lambda: fmt.grammar([TOOLS[0], TOOLS[0]]), "/tools"),
        (lambda: fmt.grammar(TOOLS, reasoning={"budget": -1}), "/reasoning"),
        (lambda: gs.tool_formats.get("llama3").grammar(TOOLS, reasoning=True), "/reasoning"),
    ]
    for call, path in cases:
        with pytest.raises(StructuralTagError) as info:
            call()
        assert info.value.path == path


def test_malformed_calls_are_content() -> None:
    fmt = gs.tool_formats.get("hermes")
    text = 'Sure <tool_call>\n{"name": "get_time", "arguments": {"timezone": '
    parsed = fmt.parse(text, TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text.strip()
    broken = "<tool_call>\nnot json\n</tool_call>"
    assert fmt.parse(broken).content == broken
    # cut off (max_tokens) after a whole call: the whole calls are kept
    cut = fmt.render("", [PARIS, TOKYO])[:-20]
    assert fmt.parse(cut, TOOLS).tool_calls == [PARIS]


def test_budget_tracker() -> None:
    tracker = BudgetTracker(ReasoningBudget("<think>", "</think>", 2))
    for piece in [b"<th", b"ink>", b"a"]:
        tracker.on_token(piece)
        assert not tracker.due
    tracker.on_token(b"b")
    assert tracker.due and tracker.end_text == b"</think>"
    tracker.forced()
    assert not tracker.due
    closed = BudgetTracker(ReasoningBudget(None, "</think>", 5))
    for piece in [b"x", b"</th", b"ink>", b"y", b"y", b"y", b"y", b"y", b"y"]:
        closed.on_token(piece)
    assert closed.closed and not closed.due


def test_openai_glue() -> None:
    constraint = openai.chat_constraint(tools=TOOLS, tool_choice="auto", tool_format="hermes")
    assert constraint.grammar is not None and constraint.format is not None
    message = constraint.message("Checking.\n" + CALL)
    assert message["content"] == "Checking."
    (call,) = message["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_time"
    assert json.loads(call["function"]["arguments"]) == {"timezone": "UTC"}
    assert openai.finish_reason(message, "stop") == "tool_calls"
    assert openai.finish_reason(message, "length") == "length"
    only_call = constraint.message(CALL)
    assert only_call["content"] is None
    stream = constraint.stream()
    deltas = [d for piece in ["Checking.\n<tool", CALL[5:]] for d in stream.feed(piece)]
    deltas += stream.finish()
    ids = [p["id"] for d in deltas for p in d.get("tool_calls", []) if "id" in p]
    assert ids == [c["id"] for c in stream.message()["tool_calls"]]
    assert "".join(d.get("content", "") for d in deltas) == "Checking."
    detected = openai.request_constraint(
        {"tools": TOOLS, "tool_choice": "required"}, chat_template="<tool_call>"
    )
    assert detected.format is not None and detected.format.name == "hermes"
    plain = openai.request_constraint({"response_format": {"type": "json_object"}})
    assert plain.format is None and plain.grammar is not None
    assert plain.message('{"a": 1}') == {"role": "assistant", "content": '{"a": 1}'}
    tagged = openai.request_constraint(
        {
            "response_format": {
                "type": "structural_tag",
                "format": {"type": "const_string", "value": "ok"},
            }
        }
    )
    assert tagged.grammar is not None and accepts(tagged.grammar, "ok")
    with pytest.raises(StructuralTagError, match="tool_format"):
        openai.chat_constraint(tools=TOOLS, chat_template="{{ messages }}")
    with pytest.raises(StructuralTagError, match="not supported together"):
        openai.chat_constraint(
            tools=TOOLS, tool_format="hermes", response_format={"type": "json_object"}
        )


def test_reasoning_with_a_structured_answer() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    constraint = openai.chat_constraint(
        reasoning=True,
        tool_format="hermes",
        response_format={"type": "json_schema", "json_schema": {"schema": schema}},
    )
    assert constraint.grammar is not None
    assert accepts(constraint.grammar, '<think>\nfree { text\n</think>\n\n{"a": 1}')
    assert not accepts(constraint.grammar, '<think>\nx\n</think>\n\n{"a": "1"}')
    message = constraint.message('<think>\nhm\n</think>\n\n{"a": 1}')
    assert message == {"role": "assistant", "content": '{"a": 1}', "reasoning_content": "hm"}
