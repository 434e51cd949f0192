"""Tool calls, structural tags and the reasoning budget through ``gs.hf``: a tiny randomly
initialised GPT-2 and a byte-level BPE tokenizer (built here, no download). The model writes
noise; the processor must keep it inside the format, the parser must read the calls back, and
the budget must close the think section."""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="torch is optional (pip install gbnf-sampler[hf])")
transformers = pytest.importorskip(
    "transformers", reason="transformers is optional (pip install gbnf-sampler[hf])"
)

import gbnf_sampler as gs  # noqa: E402
from hf_fixtures import EOS, PAD, byte_level_tokenizer, wrap  # noqa: E402

# Finite argument languages: the random model's outputs always finish.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "pick",
            "parameters": {
                "type": "object",
                "properties": {"side": {"enum": ["left", "right"]}},
                "required": ["side"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "stop",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return wrap(
        byte_level_tokenizer(odd_added_tokens=False),
        eos_token=EOS,
        pad_token=PAD,
        padding_side="left",
    )


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> Any:
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=256,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return transformers.GPT2LMHeadModel(config).eval()


def _generate(model: Any, tokenizer: Any, proc: Any, **kwargs: Any) -> list[str]:
    inputs = tokenizer(["hello", "yes no"], return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(
            **inputs,
            logits_processor=[proc],
            max_new_tokens=200,
            pad_token_id=tokenizer.pad_token_id,
            **kwargs,
        )
    rows = out[:, inputs["input_ids"].shape[1] :]
    for row in rows.tolist():
        assert tokenizer.eos_token_id in row, "the output did not finish"
    return [tokenizer.decode(r, skip_special_tokens=True) for r in rows]


@pytest.mark.parametrize("name", ["hermes", "mistral", "gemma", "qwen3_coder", "gemma4"])
def test_tool_call_processor_required(model: Any, tokenizer: Any, name: str) -> None:
    proc, constraint = gs.hf.tool_call_processor(
        tokenizer, TOOLS, "required", tool_format=name, parallel_tool_calls=False
    )
    for text in _generate(model, tokenizer, proc, do_sample=True, top_k=0):
        message = constraint.message(text)
        (call,) = message["tool_calls"]
        args = json.loads(call["function"]["arguments"])
        assert (call["function"]["name"], args) in [
            ("pick", {"side": "left"}),
            ("pick", {"side": "right"}),
            ("stop", {}),
        ]


def test_structural_tag_as_a_grammar(model: Any, tokenizer: Any) -> None:
    spec = {
        "type": "structural_tag",
        "format": {
            "type": "sequence",
            "elements": [
                {
                    "type": "tag",
                    "begin": "<a>",
                    "content": {"type": "regex", "pattern": "[xy]{2,4}"},
                    "end": "</a>",
                },
                {"type": "const_string", "value": "!"},
            ],
        },
    }
    proc = gs.hf.LogitsProcessor(spec, tokenizer)
    for text in _generate(model, tokenizer, proc, do_sample=False):
        m = gs.Matcher(gs.Grammar.from_structural_tag(spec))
        assert m.accept_bytes(text.encode()) and m.can_terminate(), text


def test_reasoning_budget_closes_the_think_section(model: Any, tokenizer: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    proc, constraint = gs.hf.tool_call_processor(
        tokenizer,
        tool_format="hermes",
        reasoning={"budget": 6},
        response_format={"type": "json_schema", "json_schema": {"schema": schema}},
    )
    assert constraint.budget is not None and constraint.budget.max_tokens == 6
    for text in _generate(model, tokenizer, proc, do_sample=True, top_k=0):
        message = constraint.message(text)
        assert json.loads(message["content"]) in ({"ok": True}, {"ok": False})
        thought = tokenizer.encode(
            text.split("</think>")[0][len("<think>") :], add_special_tokens=False
        )
        assert len(thought) <= 6 + 2, text  # re-tokenizing may split a token or two
        assert message["reasoning_content"] is not None
