"""gbnf_sampler.sglang driven through SGLang's own code: the plugin registration, SGLang's
backend factory ``create_grammar_backend`` with our name, its compile executor and cache
(``get_cached_or_future_value``), its ``GrammarRow`` batched fill and ``InvalidGrammarObject``.
Tokenizers are real Hugging Face fast tokenizers rebuilt from llama.cpp's vocab GGUFs. Each
replay compares every mask with the core's, rollback with a fresh replay, and jump-forward text
with ``forced_bytes``."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch", reason="SGLang needs torch")

import torch

import gbnf_sampler as gs
from engine_helpers import REQUESTS, hf_tokenizer, import_engine, replay_masks, tokenize

base = import_engine("sglang.srt.constrained.base_grammar_backend", "sglang")
runtime_context = import_engine("sglang.srt.runtime_context", "sglang")
choices = import_engine("sglang.srt.arg_groups.choices", "sglang")
gss = import_engine("gbnf_sampler.sglang", "sglang")

SGLANG_KINDS = {
    "json": "json",
    "regex": "regex",
    "gbnf": "ebnf",
    "structural_tag": "structural_tag",
}


def _sglang_key(kind: str, spec: str) -> tuple[str, str] | None:
    """Our request as SGLang's (key_type, key_string); None for kinds SGLang does not send."""
    if kind == "json" and spec == "":
        return ("json", "$$ANY$$")
    if kind in SGLANG_KINDS:
        return (SGLANG_KINDS[kind], spec)
    return None


class _Published:
    """Publishes ``exec.kernel.grammar_backend`` in SGLang's runtime context, which is all
    ``create_grammar_backend`` reads. (SGLang's own ``override_server_args`` resolves a whole
    ServerArgs, which imports its multimodal configs and so torchvision, not installable next
    to the CPU torch here.)"""

    def __init__(self, name: str) -> None:
        ctx = runtime_context.get_context()
        self.saved = ctx._config_bags
        exec_bag = runtime_context._ConfigBag("exec")
        kernel = runtime_context._ConfigBag("exec.kernel")
        kernel._set("grammar_backend", name)
        exec_bag._set_sub("kernel", kernel)
        ctx._config_bags = {"exec": exec_bag}

    def restore(self) -> None:
        runtime_context.get_context()._config_bags = self.saved


@pytest.fixture(scope="module", params=["llama-bpe", "qwen2"])
def backend(request: Any) -> Any:
    tokenizer = hf_tokenizer(request.param)
    gss.register()
    published = _Published("gbnf_sampler")
    try:
        created = base.create_grammar_backend(None, tokenizer, len(tokenizer), None)
    finally:
        published.restore()
    yield created
    created.executor.shutdown(wait=True)


def test_registration_through_sglang_plugins() -> None:
    from importlib.metadata import entry_points

    points = [ep for ep in entry_points(group="sglang.srt.plugins") if ep.name == "gbnf_sampler"]
    assert [ep.value for ep in points] == ["gbnf_sampler.sglang:register"]
    points[0].load()()
    points[0].load()()  # idempotent
    assert choices.GRAMMAR_BACKEND_CHOICES.count("gbnf_sampler") == 1
    assert base.GRAMMAR_BACKEND_REGISTRY["gbnf_sampler"] is gss.create_backend


def test_backend_is_sglangs_kind(backend: Any) -> None:
    assert isinstance(backend, base.BaseGrammarBackend)
    assert issubclass(gss.GbnfSamplerGrammar, base.BaseGrammarObject)


def _compile_all(backend: Any, keys: list[tuple[str, str]]) -> list[Any]:
    """Through SGLang's cache-or-executor path, all submitted before any is awaited."""
    pending = [backend.get_cached_or_future_value(key, False)[0] for key in keys]
    return [p.result() if hasattr(p, "result") else p for p in pending]


def test_replays_match_core_masks(backend: Any) -> None:
    requests = [(k, s, d) for k, s, d in REQUESTS if _sglang_key(k, s) is not None]
    keys = [_sglang_key(k, s) for k, s, _ in requests]
    grammars = _compile_all(backend, keys)  # type: ignore[arg-type]
    vocab = backend.grammars.vocab
    token_lists = [tokenize(vocab, doc) for _, _, doc in requests]
    expected = [replay_masks(g.compiled, t) for g, t in zip(grammars, token_lists, strict=True)]
    rows = list(range(len(grammars) + 2))
    random.Random(7).shuffle(rows)  # the batch's rows are not the requests' order
    for step in range(max(len(t) for t in token_lists) + 1):
        live = [i for i, t in enumerate(token_lists) if step <= len(t)]
        mask = grammars[0].allocate_vocab_mask(vocab.size, len(rows), "cpu")
        entries = [base.GrammarRow(row=rows[i], grammar=grammars[i]) for i in live]
        grammars[0].fill_vocab_mask_batched(entries, mask)
        for i in live:
            np.testing.assert_array_equal(mask[rows[i]].numpy(), expected[i][step])
        for i in set(range(len(rows))) - {rows[i] for i in live}:
            assert (mask[i] == -1).all()  # rows not listed keep their value
        for i in live:
            if step < len(token_lists[i]):
                grammars[i].accept_token(token_lists[i][step])


def test_rollback_and_jump_forward_equal_a_fresh_replay(backend: Any) -> None:
    vocab = backend.grammars.vocab
    for kind, spec, doc in REQUESTS:
        key = _sglang_key(kind, spec)
        if key is None:
            continue
        grammar = _compile_all(backend, [key])[0]
        tokens = tokenize(vocab, doc)
        for token in tokens:
            grammar.accept_token(token)
        back = min(5, len(tokens))
        grammar.rollback(back)
        fresh = gs.Matcher(grammar.compiled)
        for token in tokens[: len(tokens) - back]:
            assert fresh.accept_token(token)
        mask = grammar.allocate_vocab_mask(vocab.size, 1, "cpu")
        grammar.fill_vocab_mask(mask, 0)
        reference = gs.allocate_bitmask(1, vocab.size)
        fresh.fill_mask(reference, 0)
        np.testing.assert_array_equal(mask.numpy(), reference)
        helper = grammar.try_jump_forward(None)
        forced = fresh.forced_bytes()
        if helper is None:
            assert forced.decode("utf-8", "ignore") == ""
        else:
            text, state = grammar.jump_forward_str_state(helper)
            assert forced.startswith(text.encode()) and text and state == -1


def test_jump_and_retokenize_replays_the_new_ids(backend: Any) -> None:
    vocab = backend.grammars.vocab
    grammar = _compile_all(backend, [("regex", r"The answer is (yes|no)\.")])[0]
    old = tokenize(vocab, "The ")
    for token in old:
        grammar.accept_token(token)
    text, _ = grammar.jump_forward_str_state(grammar.try_jump_forward(None))
    assert text == "answer is "
    new = [vocab.find_by_text(b"The")[0], *tokenize(vocab, " answer is ")]
    grammar.jump_and_retokenize(old, new, -1)
    fresh = gs.Matcher(grammar.compiled)
    assert all(fresh.accept_token(t) for t in new)
    assert grammar.matcher.forced_bytes() == fresh.forced_bytes() == b""
    assert grammar.matcher.accept_bytes(b"yes.") and grammar.matcher.can_terminate()


def test_bad_grammars_are_sglangs_invalid_object_and_do_not_affect_others(backend: Any) -> None:
    keys = [
        ("ebnf", 'root ::= "a" valu\nvalue ::= "b"'),
        ("json", '{"$ref": "#/$defs/missing"}'),
        ("json", '{"type": "object"'),
        ("regex", "(unclosed"),
        ("structural_tag", '{"type": "structural_tag", "format": {"type": "qwen_xml_parameter"}}'),
        ("json", '{"type": "integer"}'),
    ]
    results = _compile_all(backend, keys)
    for result in results[:-1]:
        assert isinstance(result, base.InvalidGrammarObject)
    assert "line 1, column 14" in results[0].error_message
    assert 'did you mean "value"' in results[0].error_message
    assert "qwen_xml_parameter" in results[4].error_message
    good = results[-1]
    assert isinstance(good, gss.GbnfSamplerGrammar)
    for token in tokenize(backend.grammars.vocab, "-42"):
        good.accept_token(token)
    assert good.matcher.can_terminate()
    with pytest.raises(ValueError, match="not allowed"):
        good.accept_token(tokenize(backend.grammars.vocab, "x")[0])


def test_copy_is_a_fresh_state_of_the_cached_grammar(backend: Any) -> None:
    key = ("json", '{"type": "boolean"}')
    first = _compile_all(backend, [key])[0]
    backend.set_cache(key, first.copy())
    first.accept_token(tokenize(backend.grammars.vocab, "true")[0])
    again, hit = backend.get_cached_or_future_value(key, False)
    assert hit and again.compiled is first.compiled and again.grammar_stats.is_cache_hit
    assert again.matcher.state_size == gs.Matcher(first.compiled).state_size
    assert not again.matcher.can_terminate() and first.matcher.can_terminate()


def test_apply_vocab_mask_on_cpu_logits(backend: Any) -> None:
    vocab = backend.grammars.vocab
    grammar = _compile_all(backend, [("regex", "[0-9]+")])[0]
    mask = grammar.allocate_vocab_mask(vocab.size, 2, "cpu")
    grammar.fill_vocab_mask(mask, 1)
    mask = grammar.move_vocab_mask(mask, "cpu")
    padded = vocab.size + 64  # models pad their logits past the vocabulary
    logits = torch.randn(2, padded)
    before = logits.clone()
    grammar.apply_vocab_mask(logits, mask)
    bits = np.unpackbits(mask.numpy().view(np.uint8), bitorder="little").reshape(2, -1)
    allowed = np.zeros((2, padded), dtype=bool)
    allowed[:, : vocab.size] = bits[:, : vocab.size].astype(bool)
    expected = torch.where(torch.from_numpy(allowed), before, torch.tensor(float("-inf")))
    assert torch.equal(logits, expected)
    assert allowed[1].sum() == len(grammar.matcher.allowed_tokens())


# SGLang's tool-call parsers whose structural tags use what gbnf_sampler.structural does not
# support yet; each is reported to SGLang as an invalid grammar naming the feature.
UNSUPPORTED_TOOL_TAGS = {
    "beam": "free text that may not end",
    "glm47": "unknown style 'glm_xml'",
    "kimi_k3": "qwen_xml arguments must be an object schema",
}


def _tool_constraints(choice: str) -> dict[str, tuple[str, str]]:
    """SGLang's own constraint for each tool-call parser (FunctionCallParser, as its OpenAI
    server builds it for ``tool_choice``), serialized as SGLang's server does."""
    parser_mod = import_engine("sglang.srt.function_call.function_call_parser", "sglang")
    protocol = import_engine("sglang.srt.entrypoints.openai.protocol", "sglang")
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
        "required": ["city"],
    }
    function = protocol.Function(
        name="get_weather", description="w", strict=True, parameters=schema
    )
    tools = [protocol.Tool(type="function", function=function)]
    out = {}
    for name in sorted(parser_mod.FunctionCallParser.ToolCallParserEnum):
        if name == "response_template":  # needs a template of the deployment
            continue
        constraint = parser_mod.FunctionCallParser(tools, name).get_structure_constraint(choice)
        if constraint is not None:
            kind, value = constraint
            if hasattr(value, "model_dump"):
                value = value.model_dump(by_alias=True)
            out[name] = (kind, value if isinstance(value, str) else json.dumps(value))
    return out


def test_sglang_tool_call_constraints_compile(backend: Any) -> None:
    """Every structural tag / schema SGLang's tool-call parsers send for ``tool_choice:
    "required"`` compiles through our backend, except the listed ones, which are SGLang's
    invalid-grammar object with our diagnostic."""
    constraints = _tool_constraints("required")
    assert len(constraints) >= 30
    keys = [
        ("json" if kind == "json_schema" else kind, spec) for kind, spec in constraints.values()
    ]
    results = dict(zip(constraints, _compile_all(backend, keys), strict=True))
    failed = {n: r.error_message for n, r in results.items() if not hasattr(r, "matcher")}
    assert sorted(failed) == sorted(UNSUPPORTED_TOOL_TAGS)
    for name, fragment in UNSUPPORTED_TOOL_TAGS.items():
        assert fragment in failed[name], failed[name]
    # Qwen 2.5: the legacy form with at_least_one: the output is one tool call, no free text.
    qwen = results["qwen25"]
    call = '<tool_call>\n{"name":"get_weather", "arguments":{"city": "Oslo"}}\n</tool_call>'
    assert qwen.copy().matcher.accept_bytes(call.encode())
    assert not qwen.copy().matcher.accept_bytes(b"Sure, ")
    bad = call.replace('"city"', '"town"')
    assert not qwen.copy().matcher.accept_bytes(bad.encode())


def _bits(row: torch.Tensor) -> np.ndarray:
    return np.unpackbits(row.numpy().view(np.uint8), bitorder="little").astype(bool)


@pytest.mark.parametrize("is_allowed", [True, False])
@pytest.mark.parametrize("reset", [True, False])
def test_token_filter_sets_exactly_the_named_bits(is_allowed: bool, reset: bool) -> None:
    """Against a bool-array reference: ids in one word, repeated ids, the sign bit's id, the
    last id of the row; the other rows untouched."""
    rng = np.random.default_rng(7)
    mask = torch.from_numpy(
        rng.integers(-(2**31), 2**31, size=(3, 40), dtype=np.int64).astype(np.int32)
    )
    before = mask.clone()
    ids = [0, 5, 5, 31, 32, 63, 700, 1279]
    gss.GbnfSamplerBackend.set_token_filter(mask, ids, 1, is_allowed, reset)
    expected = _bits(before[1])
    if reset:
        expected[:] = not is_allowed
    expected[ids] = is_allowed
    assert np.array_equal(_bits(mask[1]), expected)
    assert torch.equal(mask[0], before[0]) and torch.equal(mask[2], before[2])


def test_token_filter_refuses_ids_outside_the_row() -> None:
    mask = torch.zeros((1, 4), dtype=torch.int32)
    with pytest.raises(ValueError, match="token id 128 is outside the bitmask's 128 ids"):
        gss.set_token_filter(mask, [3, 128], 0)
    with pytest.raises(ValueError, match="token id -1"):
        gss.set_token_filter(mask, [-1], 0, is_allowed=False)


def test_strict_thinking_through_sglangs_reasoner(monkeypatch: pytest.MonkeyPatch) -> None:
    """SGLang's ReasonerGrammarBackend with strict thinking accepts our backend (it refuses a
    backend without a token filter) and masks the thinking stretch through our filter: every
    token but the format's excluded markers while thinking, only the end marker once the budget
    is spent; after the end marker our grammar's own mask."""
    reasoner_mod = import_engine("sglang.srt.constrained.reasoner_grammar_backend", "sglang")
    parser_mod = import_engine("sglang.srt.parser.reasoning_parser", "sglang")
    envs = import_engine("sglang.srt.environ", "sglang").envs
    tokenizer = hf_tokenizer("qwen2")
    ours = gss.GbnfSamplerBackend(tokenizer, len(tokenizer))
    try:
        monkeypatch.setenv("SGLANG_MAX_THINK_TOKENS", "3")
        assert envs.SGLANG_MAX_THINK_TOKENS.get() == 3
        parser = parser_mod.ReasoningParser("qwen3", tokenizer=tokenizer)
        reasoner = reasoner_mod.ReasonerGrammarBackend(
            ours, parser, tokenizer, enable_strict_thinking=True
        )
        schema = json.dumps({"type": "object", "properties": {"ok": {"type": "boolean"}}})
        grammar = reasoner._init_value_dispatch(("json", schema), True)
        vocab = ours.grammars.vocab
        excluded = {
            t
            for marker in ("<tool_call>", "</tool_call>", "<|im_end|>", "<|endoftext|>")
            for t in tokenizer.encode(marker, add_special_tokens=False)
        }
        mask = grammar.allocate_vocab_mask(vocab.size, 1, "cpu")
        grammar.fill_vocab_mask(mask, 0)
        allowed = set(np.flatnonzero(_bits(mask[0])[: vocab.size]).tolist())
        assert allowed == set(range(vocab.size)) - excluded
        text = tokenize(vocab, "Hmm, ok")[:3]
        for tid in text:
            grammar.accept_token(tid)
        end_ids = tokenizer.encode("</think>", add_special_tokens=False)
        grammar.fill_vocab_mask(mask, 0)  # the budget is spent: the end marker only
        assert set(np.flatnonzero(_bits(mask[0])[: vocab.size]).tolist()) == {end_ids[0]}
        for tid in end_ids:
            grammar.accept_token(tid)
        grammar.fill_vocab_mask(mask, 0)
        core = gs.Matcher(ours.grammars.compile("json", schema))
        assert set(np.flatnonzero(_bits(mask[0])[: vocab.size]).tolist()) == set(
            core.allowed_tokens().tolist()
        )
    finally:
        ours.executor.shutdown(wait=True)
