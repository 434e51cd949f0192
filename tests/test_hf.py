"""``gs.hf.LogitsProcessor`` with ``model.generate``: a tiny randomly initialised 2-layer GPT-2 and
a byte-level BPE tokenizer, both built here (no hub download). Every output must be in its
grammar; the processor's masks must equal a fresh matcher's after any history the batch takes
(new tokens, beams reordered or duplicated, rollback, finished rows, a new prompt)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="torch is optional (pip install gbnf-sampler[hf])")
transformers = pytest.importorskip(
    "transformers", reason="transformers is optional (pip install gbnf-sampler[hf])"
)

import jsonschema  # noqa: E402

import gbnf_sampler as gs  # noqa: E402
from hf_fixtures import EOS, PAD, byte_level_tokenizer, wrap  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "ok": {"type": "boolean"},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
    },
    "required": ["name", "ok", "n"],
    "additionalProperties": False,
}
# Finite languages: every output ends (with EOS) well within MAX_NEW_TOKENS.
SCHEMA_GRAMMAR = gs.Grammar.from_json_schema(SCHEMA, whitespace="compact")
CHOICES = 'root ::= "yes" | "no" | "maybe so"'
SUMS = 'root ::= [0-9]{1,3} (" + " [0-9]{1,3}){0,2}'
MAX_NEW_TOKENS = 80
PROMPTS = ["hello", "yes no maybe, what is the name"]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    tok = byte_level_tokenizer(odd_added_tokens=False)
    return wrap(tok, eos_token=EOS, pad_token=PAD, padding_side="left")


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    # A model this small runs ~10x slower when torch's threads contend for a busy CPU.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> Any:
    torch.manual_seed(0)
    padded = (len(tokenizer) + 63) // 64 * 64  # wider logits than the tokenizer, as is common
    config = transformers.GPT2Config(
        vocab_size=padded,
        n_positions=160,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return transformers.GPT2LMHeadModel(config).eval()


def _generate(model: Any, tokenizer: Any, proc: Any, **kwargs: Any) -> list[list[int]]:
    inputs = tokenizer(PROMPTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(
            **inputs,
            logits_processor=[proc] if proc is not None else None,
            max_new_tokens=MAX_NEW_TOKENS,
            pad_token_id=tokenizer.pad_token_id,
            **kwargs,
        )
    return [row.tolist() for row in out[:, inputs["input_ids"].shape[1] :]]


def _check_output(tokenizer: Any, ids: list[int], grammar: Any) -> str:
    """The row ended with EOS and its text (the tokenizer's own decode) is in the grammar."""
    assert tokenizer.eos_token_id in ids, f"no EOS within {MAX_NEW_TOKENS} tokens: {ids}"
    text = tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    matcher = gs.Matcher(gs.Grammar.coerce(grammar))
    assert matcher.accept_bytes(text.encode()) and matcher.can_terminate(), text
    if grammar is SCHEMA_GRAMMAR:
        jsonschema.validate(json.loads(text), SCHEMA)
    return text


def test_unconstrained_model_output_is_not_in_the_grammar(model: Any, tokenizer: Any) -> None:
    # The control: what the tests below check is the processor's doing.
    for ids in _generate(model, tokenizer, None, do_sample=False):
        text = tokenizer.decode(ids, skip_special_tokens=True)
        matcher = gs.Matcher(SCHEMA_GRAMMAR)
        assert not (matcher.accept_bytes(text.encode()) and matcher.can_terminate())


def test_greedy_batch(model: Any, tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(SCHEMA_GRAMMAR, tokenizer)
    outputs = _generate(model, tokenizer, proc, do_sample=False)
    assert len(outputs) == 2
    texts = [_check_output(tokenizer, ids, SCHEMA_GRAMMAR) for ids in outputs]
    assert texts[0] != texts[1]  # different prompts, different documents


def test_sampling_with_a_grammar_per_prompt(model: Any, tokenizer: Any) -> None:
    torch.manual_seed(1)
    proc = gs.hf.LogitsProcessor([SCHEMA_GRAMMAR, CHOICES], tokenizer)
    outputs = _generate(model, tokenizer, proc, do_sample=True, num_return_sequences=3)
    assert len(outputs) == 6  # prompt 0's three rows, then prompt 1's
    for ids in outputs[:3]:
        _check_output(tokenizer, ids, SCHEMA_GRAMMAR)
    for ids in outputs[3:]:
        _check_output(tokenizer, ids, CHOICES)


def test_beam_search(model: Any, tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor([SUMS, SCHEMA_GRAMMAR], tokenizer)
    outputs = _generate(model, tokenizer, proc, num_beams=3, num_return_sequences=2)
    for ids, grammar in zip(outputs, [SUMS, SUMS, SCHEMA_GRAMMAR, SCHEMA_GRAMMAR], strict=True):
        _check_output(tokenizer, ids, grammar)


def test_processor_reused_for_a_second_generation(model: Any, tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(SUMS, tokenizer)
    first = _generate(model, tokenizer, proc, do_sample=False)
    torch.manual_seed(2)
    second = _generate(model, tokenizer, proc, do_sample=True)
    for ids in first + second:
        _check_output(tokenizer, ids, SUMS)


# --- the processor called directly: masks against a fresh matcher ---


def _expected(proc: Any, grammar: Any, tokens: list[int]) -> set[int]:
    matcher = gs.Matcher(gs.compile(gs.Grammar.coerce(grammar), proc.vocab))
    for t in tokens:
        assert matcher.accept_token(t)
    if matcher.is_terminated():
        return set(proc.vocab.eos_ids)
    return {int(i) for i in matcher.allowed_tokens()}


def _step(proc: Any, rows: list[list[int]], width: int) -> list[set[int]]:
    scores = torch.zeros((len(rows), width))
    out = proc(torch.tensor(rows), scores)
    assert out is scores  # in place
    return [set(torch.isfinite(row).nonzero().flatten().tolist()) for row in scores]


def test_masks_follow_every_history(tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(SUMS, tokenizer)
    width = len(tokenizer) + 40  # padded logits: the extra columns must be masked

    def ids(text: str) -> list[int]:  # one token per character ("Ġ" is the space)
        return [tokenizer.convert_tokens_to_ids(c) for c in text]

    prompt = tokenizer.encode("sum:", add_special_tokens=False)
    a, b = ids("12Ġ+Ġ3"), ids("7Ġ+Ġ45")
    eos, pad, six, nine = tokenizer.eos_token_id, tokenizer.pad_token_id, *ids("69")
    steps = [  # (generated tokens of each row); rows always have equal lengths
        ([], []),  # first call: the prompt alone
        (a[:1], b[:1]),  # one token per row
        (a[:4], b[:4]),  # three at once
        (b[:5], a[:5]),  # beams swapped, one token further
        ([*a[:5], nine], [*a[:5], nine]),  # two beams from one parent
        (a[:2], b[:2]),  # back to a shorter history: rollback
        ([*a, eos], [*b, six]),  # row 0 finished
        ([*a, eos, pad], [*b, six, eos]),  # padded after EOS; row 1 finished
    ]
    for generated in steps:
        masks = _step(proc, [prompt + g for g in generated], width)
        for r, g in enumerate(generated):
            consumed = g[: g.index(eos) + 1] if eos in g else g
            assert masks[r] == _expected(proc, SUMS, consumed), (generated, r)

    new_prompt = tokenizer.encode("another prompt", add_special_tokens=False)
    assert _step(proc, [new_prompt, new_prompt], width) == [_expected(proc, SUMS, [])] * 2
    assert len(proc.matchers) == 2


def test_rollback_past_the_history_replays(tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor('root ::= "a"{0,400}', tokenizer)
    a = tokenizer.convert_tokens_to_ids("a")
    prompt = tokenizer.encode("x", add_special_tokens=False)
    width = len(tokenizer)
    for length in (0, 300):  # 300 single-token steps would exceed the 256-accept history
        _step(proc, [prompt + [a] * length], width)
    masks = _step(proc, [prompt + [a] * 10], width)
    assert masks == [_expected(proc, 'root ::= "a"{0,400}', [a] * 10)]


@pytest.mark.parametrize("form", ["dict", "pydantic", "gbnf"])
def test_grammar_forms(tokenizer: Any, form: str) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Item(pydantic.BaseModel):  # type: ignore[misc, unused-ignore]
        name: str
        ok: bool

    schema = Item.model_json_schema()
    grammar = gs.Grammar.from_json_schema(schema)
    given = {"dict": schema, "pydantic": Item, "gbnf": grammar.to_gbnf()}[form]
    proc = gs.hf.LogitsProcessor(given, tokenizer)
    prompt = tokenizer.encode("q", add_special_tokens=False)
    brace = tokenizer.convert_tokens_to_ids("{")
    masks = _step(proc, [prompt], len(tokenizer))
    assert masks == [_expected(proc, grammar, [])] and brace in masks[0]
    masks = _step(proc, [[*prompt, brace]], len(tokenizer))
    assert masks == [_expected(proc, grammar, [brace])]


def test_vocab_size_pads_the_vocabulary(tokenizer: Any, model: Any) -> None:
    proc = gs.hf.LogitsProcessor(CHOICES, tokenizer, vocab_size=model.config.vocab_size)
    assert proc.vocab.size == model.config.vocab_size > len(tokenizer)


def test_eos_ids_are_added(tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(CHOICES, tokenizer, eos_ids=[tokenizer.pad_token_id])
    assert proc.vocab.eos_ids == sorted([tokenizer.eos_token_id, tokenizer.pad_token_id])


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda tok: gs.hf.LogitsProcessor(CHOICES, object()), TypeError, "fast Hugging Face"),
        (lambda tok: gs.hf.LogitsProcessor(CHOICES, wrap(tok.backend_tokenizer)), ValueError,
         "eos_token_id"),
        (lambda tok: gs.hf.LogitsProcessor([], tok), ValueError, "empty list"),
        (lambda tok: gs.hf.LogitsProcessor(42, tok), TypeError, "JSON Schema"),
        (lambda tok: gs.hf.LogitsProcessor(CHOICES, tok)(torch.zeros((1, 3), dtype=torch.long),
         torch.zeros((1, len(tok) - 1))), ValueError, "columns"),
        (lambda tok: gs.hf.LogitsProcessor(CHOICES, tok)(torch.zeros((2, 3), dtype=torch.long),
         torch.zeros((1, len(tok)))), ValueError, "shapes"),
        (lambda tok: gs.hf.LogitsProcessor(CHOICES, tok)([[1, 2]], torch.zeros((1, len(tok)))),
         TypeError, "torch tensors"),
        (lambda tok: gs.hf.LogitsProcessor([CHOICES, SUMS], tok)(
         torch.zeros((3, 2), dtype=torch.long), torch.zeros((3, len(tok)))), ValueError,
         "3 rows for 2 grammars"),
    ],
)  # fmt: skip
def test_bad_arguments(tokenizer: Any, call: Any, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        call(tokenizer)


def test_a_token_the_grammar_refuses_is_an_error(tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(CHOICES, tokenizer)
    prompt = tokenizer.encode("q", add_special_tokens=False)
    _step(proc, [prompt], len(tokenizer))
    bad = tokenizer.encode("{", add_special_tokens=False)
    with pytest.raises(ValueError, match="not allowed by the grammar") as err:
        _step(proc, [prompt + bad], len(tokenizer))
    assert "row 0" in str(err.value)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to torch")
def test_logits_on_a_cuda_device(tokenizer: Any) -> None:
    proc = gs.hf.LogitsProcessor(SUMS, tokenizer)
    prompt = tokenizer.encode("sum:", add_special_tokens=False)
    scores = torch.zeros((1, len(tokenizer)), device="cuda")
    proc(torch.tensor([prompt], device="cuda"), scores)
    allowed = set(torch.isfinite(scores[0]).nonzero().flatten().cpu().tolist())
    assert allowed == _expected(proc, SUMS, [])
