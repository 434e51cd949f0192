"""gbnf_sampler.vllm driven through vLLM's own code: its request types
(``SamplingParams`` / ``StructuredOutputsParams`` -> ``get_structured_output_key``), its abstract
base classes, ``StructuredOutputManager._fill_bitmasks`` over our allocated bitmask, and its
V1 logits-processor types (``BatchUpdate``, ``MoveDirectionality``). Tokenizers are real Hugging
Face fast tokenizers rebuilt from llama.cpp's vocab GGUFs. Replays compare every mask with the
core's; speculative validation and rollback with a fresh replay."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch", reason="vLLM needs torch")

import torch

import gbnf_sampler as gs
from engine_helpers import REQUESTS, hf_tokenizer, import_engine, replay_masks, tokenize

backend_types = import_engine("vllm.v1.structured_output.backend_types", "vllm")
so_manager = import_engine("vllm.v1.structured_output", "vllm")
so_request = import_engine("vllm.v1.structured_output.request", "vllm")
sampling = import_engine("vllm.sampling_params", "vllm")
logits_api = import_engine("vllm.v1.sample.logits_processor", "vllm")
vllm_errors = import_engine("vllm.exceptions", "vllm")
gsv = import_engine("gbnf_sampler.vllm", "vllm")


def _params(kind: str, spec: str) -> Any:
    """Our request as vLLM's StructuredOutputsParams."""
    fields = {
        "json": lambda: {"json": json.loads(spec) if spec else {}},
        "json_object": lambda: {"json_object": True},
        "regex": lambda: {"regex": spec},
        "gbnf": lambda: {"grammar": spec},
        "choice": lambda: {"choice": json.loads(spec)},
        "structural_tag": lambda: {"structural_tag": spec},
    }[kind]()
    return sampling.StructuredOutputsParams(**fields)


def _config(spec_tokens: int = 0) -> Any:
    return SimpleNamespace(
        structured_outputs_config=SimpleNamespace(disable_any_whitespace=False),
        speculative_config=SimpleNamespace(num_speculative_tokens=spec_tokens),
    )


@pytest.fixture(scope="module", params=["llama-bpe", "qwen2"])
def backend(request: Any) -> Any:
    tokenizer = hf_tokenizer(request.param)
    created = gsv.GbnfSamplerBackend(_config(), tokenizer=tokenizer, vocab_size=len(tokenizer))
    yield created
    created.destroy()


def _fill(bitmask: Any, batch: list[tuple[Any, int, bool, tuple[int, ...]]]) -> None:
    """vLLM's own StructuredOutputManager._fill_bitmasks over our bitmask."""
    owner = SimpleNamespace(
        _grammar_bitmask=bitmask, _full_mask=torch.tensor(-1, dtype=torch.int32)
    )
    so_manager.StructuredOutputManager._fill_bitmasks(owner, batch)


def test_classes_are_vllms() -> None:
    assert issubclass(gsv.GbnfSamplerBackend, backend_types.StructuredOutputBackend)
    assert issubclass(gsv.GbnfSamplerGrammar, backend_types.StructuredOutputGrammar)
    assert issubclass(gsv.GrammarLogitsProcessor, logits_api.LogitsProcessor)
    assert not gsv.GbnfSamplerBackend.__abstractmethods__
    assert not gsv.GbnfSamplerGrammar.__abstractmethods__
    assert not gsv.GrammarLogitsProcessor.__abstractmethods__


def test_replays_match_core_masks(backend: Any) -> None:
    keys = [so_request.get_structured_output_key(_params(k, s)) for k, s, _ in REQUESTS]
    grammars = [backend.compile_grammar(t, spec) for t, spec in keys]
    vocab = backend.grammars.vocab
    token_lists = [tokenize(vocab, doc) for _, _, doc in REQUESTS]
    expected = [replay_masks(g.compiled, t) for g, t in zip(grammars, token_lists, strict=True)]
    bitmask = backend.allocate_token_bitmask(len(grammars) + 1)
    for step in range(max(len(t) for t in token_lists) + 1):
        live = [i for i, t in enumerate(token_lists) if step <= len(t)]
        _fill(bitmask, [(grammars[i], i, True, ()) for i in live])
        for i in live:
            np.testing.assert_array_equal(bitmask[i].numpy(), expected[i][step])
        for i in live:
            if step < len(token_lists[i]):
                assert grammars[i].accept_tokens(f"r{i}", [token_lists[i][step]])
    for i, grammar in enumerate(grammars):  # ended with EOS: terminated, rest ignored
        assert grammar.accept_tokens(f"r{i}", [vocab.eos_ids[0]]) and grammar.is_terminated()


def test_speculative_validation_and_rollback_equal_a_fresh_replay(backend: Any) -> None:
    vocab = backend.grammars.vocab
    for kind, spec, doc in REQUESTS:
        grammar = backend.compile_grammar(
            *so_request.get_structured_output_key(_params(kind, spec))
        )
        tokens = tokenize(vocab, doc)
        half = len(tokens) // 2
        assert grammar.accept_tokens("r", tokens[:half])
        bad = tokenize(vocab, "\x07")[0]  # BEL: in no grammar here
        draft = [*tokens[half : half + 4], bad, *tokens[half + 4 :]]
        step = tokens[half : half + 4]
        assert grammar.validate_tokens(draft) == step
        assert grammar.num_processed_tokens == half
        assert grammar.accept_tokens("r", step)
        back = min(3, len(step))
        grammar.rollback(back)
        assert grammar.num_processed_tokens == half + len(step) - back
        fresh = gs.Matcher(grammar.compiled)
        assert all(fresh.accept_token(t) for t in tokens[: half + len(step) - back])
        bitmask = backend.allocate_token_bitmask(2)
        grammar.fill_bitmask(bitmask, 1)
        reference = gs.allocate_bitmask(1, vocab.size)
        fresh.fill_mask(reference, 0)
        np.testing.assert_array_equal(bitmask[1].numpy(), reference[0])
        grammar.reset()
        assert grammar.num_processed_tokens == 0 and not grammar.is_terminated()


def test_stop_tokens_are_eos_until_the_grammar_ends(backend: Any) -> None:
    vocab = backend.grammars.vocab
    stop = tokenize(vocab, "!")[0]  # a user stop token that is text for the tokenizer
    key = so_request.get_structured_output_key(_params("regex", "[a-z]+!?"))
    grammar = backend.compile_grammar(*key, stop_token_ids={stop, *vocab.eos_ids})
    bitmask = backend.allocate_token_bitmask(1)
    grammar.fill_bitmask(bitmask, 0)
    assert not gs.kernels._core._bitmask_test(bitmask[0].numpy(), stop)
    assert grammar.validate_tokens([stop]) == []
    assert grammar.accept_tokens("r", tokenize(vocab, "abc"))
    grammar.fill_bitmask(bitmask, 0)
    assert gs.kernels._core._bitmask_test(bitmask[0].numpy(), stop)
    assert grammar.validate_tokens([stop]) == [stop] and not grammar.is_terminated()
    assert grammar.accept_tokens("r", [stop]) and grammar.is_terminated()
    grammar.rollback(1)
    assert not grammar.is_terminated() and grammar.matcher.accept_bytes(b"d")


def test_bad_grammars_raise_with_the_diagnostic(backend: Any) -> None:
    options = backend_types.StructuredOutputOptions
    with pytest.raises(ValueError, match=r"line 2, column 11"):
        backend.compile_grammar(options.GRAMMAR, 'root ::= x\nx ::= "a" (')
    with pytest.raises(ValueError, match="looks like Lark"):
        backend.compile_grammar(options.GRAMMAR, 'start: "a"')
    with pytest.raises(ValueError, match="choice"):
        backend.compile_grammar(options.CHOICE, "[1, 2]")
    ok = backend.compile_grammar(options.CHOICE, '["x"]')  # others unaffected
    assert ok.accept_tokens("r", tokenize(backend.grammars.vocab, "x"))


def _processor(backend: Any) -> Any:
    return gsv.GrammarLogitsProcessor.from_grammars(backend.grammars)


def test_logits_processor_follows_the_persistent_batch(backend: Any) -> None:
    vocab = backend.grammars.vocab
    proc = _processor(backend)
    outputs: list[list[int]] = [[], [], []]
    params = [
        sampling.SamplingParams(extra_args={"regex": "[0-9]+"}),
        sampling.SamplingParams(),  # unconstrained
        sampling.SamplingParams(extra_args={"choice": ["yes", "no"]}),
    ]
    added = [(i, p, [1, 2], outputs[i]) for i, p in enumerate(params)]
    proc.update_state(logits_api.BatchUpdate(3, [], added, []))
    outputs[0].extend(tokenize(vocab, "12"))
    logits = torch.zeros(3, vocab.size)
    proc.apply(logits)
    digits = gs.Matcher(backend.grammars.compile("regex", "[0-9]+"))
    assert all(digits.accept_token(t) for t in tokenize(vocab, "12"))
    expected = np.where(_allowed(digits, vocab.size), 0.0, -np.inf)
    np.testing.assert_array_equal(logits[0].numpy(), expected)
    assert (logits[1] == 0).all()
    yes_no = gs.Matcher(backend.grammars.compile("choice", '["yes", "no"]'))
    np.testing.assert_array_equal(
        logits[2].numpy(), np.where(_allowed(yes_no, vocab.size), 0.0, -np.inf)
    )
    # Swap rows 0 and 2, drop row 1: masks follow their requests.
    proc.update_state(
        logits_api.BatchUpdate(2, [1], [], [(0, 2, logits_api.MoveDirectionality.SWAP)])
    )
    logits = torch.zeros(3, vocab.size)
    proc.apply(logits)
    np.testing.assert_array_equal(logits[2].numpy(), expected)
    assert (logits[1] == 0).all()


def _allowed(matcher: gs.Matcher, size: int) -> np.ndarray:
    allowed = np.zeros(size, dtype=bool)
    allowed[matcher.allowed_tokens()] = True
    return allowed


def test_logits_processor_validates_requests() -> None:
    proc = gsv.GrammarLogitsProcessor
    proc.validate_params(sampling.SamplingParams(extra_args={"gbnf": 'root ::= "a"'}))
    proc.validate_params(sampling.SamplingParams(extra_args={"other": 1}))
    with pytest.raises(ValueError, match="line 1, column 10"):
        proc.validate_params(sampling.SamplingParams(extra_args={"gbnf": "root ::= nope"}))
    with pytest.raises(ValueError, match="one grammar per request"):
        proc.validate_params(sampling.SamplingParams(extra_args={"gbnf": "x", "regex": "y"}))
    with pytest.raises(ValueError, match="must be a string"):
        proc.validate_params(sampling.SamplingParams(extra_args={"regex": 5}))


def test_logits_processor_loaded_and_built_by_vllm(tmp_path: Any) -> None:
    """``--logits-processors gbnf_sampler.vllm:GrammarLogitsProcessor``: vLLM's own loader
    resolves the name, its request validation refuses a bad grammar with our diagnostic, and
    the class builds from a vLLM config (tokenizer loaded by vLLM from a local directory)."""
    fqcn = "gbnf_sampler.vllm:GrammarLogitsProcessor"
    assert logits_api._load_logitsprocs_by_fqcns([fqcn]) == [gsv.GrammarLogitsProcessor]
    bad = sampling.SamplingParams(extra_args={"gbnf": 'root ::= "a" (b'})
    with pytest.raises(vllm_errors.VLLMValidationError, match="line 1, column 14"):
        logits_api.validate_logits_processors_parameters([fqcn], bad)
    tokenizer = hf_tokenizer("qwen2")
    tokenizer.save_pretrained(tmp_path)
    model_config = SimpleNamespace(
        skip_tokenizer_init=False,
        hf_config=None,
        model=str(tmp_path),
        tokenizer=str(tmp_path),
        runner_type="generate",
        tokenizer_mode="auto",
        tokenizer_revision=None,
        trust_remote_code=False,
        get_vocab_size=lambda: len(tokenizer) + 64,  # padded logits, as models have
    )
    proc = gsv.GrammarLogitsProcessor(
        SimpleNamespace(model_config=model_config), torch.device("cpu"), False
    )
    vocab = proc.grammars.vocab
    assert vocab.size == len(tokenizer) + 64 and vocab.eos_ids == [tokenizer.eos_token_id]
    output: list[int] = []
    params = sampling.SamplingParams(extra_args={"json_schema": {"type": "boolean"}})
    proc.update_state(logits_api.BatchUpdate(1, [], [(0, params, [1], output)], []))
    logits = torch.zeros(1, vocab.size)
    proc.apply(logits)
    boolean = gs.Matcher(proc.grammars.compile("json", '{"type": "boolean"}'))
    expected = np.where(_allowed(boolean, vocab.size), 0.0, -np.inf)
    np.testing.assert_array_equal(logits[0].numpy(), expected)


def _manager(tokenizer_dir: str, vocab_size: int, spec_tokens: int) -> Any:
    """vLLM's own StructuredOutputManager, with our backend installed the way the documented
    upstream registration would (``grammar_init`` builds it when the backend name is ours)."""
    model_config = SimpleNamespace(
        skip_tokenizer_init=False,
        hf_config=None,
        model=tokenizer_dir,
        tokenizer=tokenizer_dir,
        runner_type="generate",
        tokenizer_mode="auto",
        tokenizer_revision=None,
        trust_remote_code=False,
        is_diffusion=False,
        get_vocab_size=lambda: vocab_size,
    )
    structured = SimpleNamespace(
        reasoning_parser_plugin=None,
        reasoning_parser=None,
        enable_in_reasoning=False,
        disable_any_whitespace=False,
    )
    config = SimpleNamespace(
        model_config=model_config,
        structured_outputs_config=structured,
        parallel_config=SimpleNamespace(distributed_executor_backend=None),
        scheduler_config=SimpleNamespace(max_num_seqs=4),
        num_speculative_tokens=spec_tokens,
    )
    manager = so_manager.StructuredOutputManager(config)
    manager.backend = gsv.GbnfSamplerBackend(
        config, tokenizer=manager.tokenizer, vocab_size=vocab_size
    )
    manager.backend_name = "gbnf_sampler"
    return manager


def _request(kind: str, spec: str) -> Any:
    params = sampling.SamplingParams(structured_outputs=_params(kind, spec))
    params.structured_outputs._backend = "gbnf_sampler"
    return SimpleNamespace(
        request_id="r",
        sampling_params=params,
        structured_output_request=so_request.StructuredOutputRequest.from_sampling_params(params),
        use_structured_output=True,
    )


def test_speculative_decoding_through_vllms_manager(tmp_path: Any) -> None:
    """vLLM's scheduler-side calls with 3 draft tokens per step: ``grammar_init`` (compile on
    vLLM's executor), ``grammar_bitmask`` (a row per draft position: accept, fill, then roll
    back), ``validate_tokens`` and ``accept_tokens``; every row equals a fresh replay's mask."""
    tokenizer = hf_tokenizer("llama-bpe")
    tokenizer.save_pretrained(tmp_path)
    manager = _manager(str(tmp_path), len(tokenizer), spec_tokens=3)
    kind, spec, doc = REQUESTS[0]  # the person schema
    request = _request(kind, spec)
    manager.grammar_init(request)
    request.structured_output_request._grammar.result()  # compiled on vLLM's executor
    grammar = request.structured_output_request.grammar
    assert isinstance(grammar, gsv.GbnfSamplerGrammar)
    vocab = manager.backend.grammars.vocab
    tokens = tokenize(vocab, doc)
    expected = replay_masks(grammar.compiled, tokens)
    bad = tokenize(vocab, "\x07")[0]
    done = 0
    while done < len(tokens):
        draft = tokens[done : done + 3]
        if done % 2:  # every other step a draft the grammar refuses at its second token
            draft = [*draft[:1], bad, *draft[2:]]
        masks = manager.grammar_bitmask({"r": request}, ["r"], {"r": draft})
        assert masks.shape[0] == 4
        valid = manager.validate_tokens(request, draft)
        assert valid == (draft[:1] if bad in draft else draft)
        for row in range(len(draft) + 1):  # rows after a refused draft token repeat its row
            np.testing.assert_array_equal(masks[row], expected[done + min(row, len(valid))])
        assert grammar.num_processed_tokens == done  # grammar_bitmask rolled back
        assert manager.accept_tokens(request, valid)
        done += len(valid)
    assert grammar.matcher.can_terminate()
    manager.clear_backend()
