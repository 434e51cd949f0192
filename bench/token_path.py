"""Where one decoding step of the native sampler goes, per component, in µs/token.

    python bench/token_path.py [--threads 1] [--cases "schema object" ...] [--repeat 5]

For each grammar of bench/e2e.py, a native greedy generation (gs.llama.generate with
jump_forward=False) is replayed step by step, and each component of a step is timed on its own
at that step's state (process CPU time; the fastest of --repeat runs, averaged over the steps):

  decode      llama_decode of the token (the model, with its row of logits)
  mask fill   TokenMatcher.FillMask at the step's state (Matcher.fill_mask)
  sample      the rest of GrammarSampler.sample: the candidate array of the allowed tokens, the
              sampler chain on it (our apply: nothing left to do; greedy's pick), the chain's
              accept (ours included)
  accept      of which our accept (the grammar sampler advances by the token)
  loop        the rest of generate's time per step (Python, detokenize, ctypes and pybind11
              calls, the grammar sampler's creation, the prompt's tokenization): a generation's
              CPU time outside llama_decode and GrammarSampler.sample, per step, in one run

For comparison, "llama.cpp sample" is llama_sampler_sample with llama.cpp's logit-bias sampler
and greedy (what the unconstrained loop pays per token: a candidate array of the whole 262k
vocabulary, scanned), and "apply, 262k" is our apply on such an array (the grammar sampler in
someone else's llama.cpp chain), at the same states. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import gbnf_sampler as gs
from gbnf_sampler.llama.models import load_llama
from gbnf_sampler.llama.native_sampler import GrammarSampler, address_of
from gbnf_sampler.llama.speculative import EvaluatedTokens

sys.path.insert(0, str(Path(__file__).parent))
from e2e import cases

COMPONENTS = ["decode", "mask fill", "sample", "accept", "loop"]
OURS = ["mask fill", "sample", "loop"]  # accept is part of sample


def _cpu_us(fn: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None) -> float:
    """The fastest of ``repeat`` runs of ``fn`` (each after an untimed ``setup``), in µs."""
    best = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.process_time_ns()
        fn()
        best = min(best, time.process_time_ns() - start)
    return best / 1000


class Candidates:
    """An identity candidate array (data[i].id == i) over the vocabulary, refilled from the
    current logits, the way llama_sampler_sample builds it."""

    def __init__(self, llama_cpp: Any, n_vocab: int) -> None:
        self.n = n_vocab
        self.data = (llama_cpp.llama_token_data * n_vocab)()
        self.template = (llama_cpp.llama_token_data * n_vocab)()
        self.array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self.data, ctypes.POINTER(llama_cpp.llama_token_data)),
            size=n_vocab,
            selected=-1,
            sorted=False,
        )
        view = np.ctypeslib.as_array(self.template).view(
            np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        )
        view["id"] = np.arange(n_vocab)
        self._view = view

    def load(self, logits: np.ndarray) -> None:
        self._view["logit"] = logits

    def reset(self) -> None:
        ctypes.memmove(self.data, self.template, ctypes.sizeof(self.data))
        self.array.size, self.array.selected, self.array.sorted = self.n, -1, False


def _chain(llama_cpp: Any, *samplers: Any) -> Any:
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    for sampler in samplers:
        llama_cpp.llama_sampler_chain_add(chain, sampler)
    return chain


def replay(llm: Any, prompt: str, grammar: gs.Grammar, repeat: int) -> dict[str, float]:
    """µs/token of each component over a native greedy generation of ``prompt``."""
    import llama_cpp

    gs.llama.generate(llm, prompt, grammar, max_tokens=128, jump_forward=False)  # warm caches
    out, loop_us = _loop_time(llama_cpp, llm, prompt, grammar)
    tokens = out["choices"][0]["token_ids"]
    prompt_tokens = [int(t) for t in llm.tokenize(prompt.encode(), add_bos=True, special=True)]
    n_vocab = int(llm.n_vocab())
    ctx = llm._ctx.ctx
    evaluated = EvaluatedTokens(llm)
    matcher = gs.llama.matcher_for(llm, grammar)
    bitmask = gs.allocate_bitmask(1, n_vocab)
    bias = (llama_cpp.llama_logit_bias * 1)(llama_cpp.llama_logit_bias(int(llm.token_eos()), -1e30))
    free_chain = _chain(
        llama_cpp,
        llama_cpp.llama_sampler_init_logit_bias(n_vocab, 1, bias),
        llama_cpp.llama_sampler_init_greedy(),
    )
    sample_free = partial(llama_cpp.llama_sampler_sample, free_chain, ctx, -1)
    candidates = Candidates(llama_cpp, n_vocab)
    sampler, follower = GrammarSampler(matcher), GrammarSampler(matcher)
    chain = _chain(llama_cpp)
    sampler.add_to(chain)
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
    sample = partial(sampler.sample, address_of(chain), address_of(ctx), -1)
    steps: dict[str, list[float]] = {c: [] for c in COMPONENTS if c != "loop"}
    steps["llama.cpp sample"], steps["apply, 262k"] = [], []
    llm.reset()
    llm.eval(prompt_tokens[:-1])
    previous = prompt_tokens[-1]
    for token in tokens:
        steps["decode"].append(_cpu_us(partial(evaluated.decode, [previous], [True]), 1))
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
        candidates.load(logits)
        fill = _cpu_us(partial(matcher.fill_mask, bitmask), repeat)
        steps["mask fill"].append(fill)
        steps["llama.cpp sample"].append(_cpu_us(sample_free, repeat))
        steps["apply, 262k"].append(_apply_us(llama_cpp, matcher, candidates, repeat))
        # Once per step (they advance): the sampler of generate and an accept-only follower.
        start = time.process_time_ns()
        picked = sample()
        steps["sample"].append((time.process_time_ns() - start) / 1000 - fill)
        assert picked == token, "the replay left the generation's path"
        accept = partial(llama_cpp.llama_sampler_accept, follower.pointer, token)
        steps["accept"].append(_cpu_us(accept, 1))
        assert matcher.accept_token(token)
        previous = token
    llama_cpp.llama_sampler_free(free_chain)
    llama_cpp.llama_sampler_free(chain)
    follower.close()
    result = {name: statistics.fmean(values) for name, values in steps.items()}
    result["loop"] = loop_us
    result["tokens"] = len(tokens)
    return result


def _apply_us(llama_cpp: Any, matcher: gs.Matcher, candidates: Candidates, repeat: int) -> float:
    """Our apply on a whole-vocabulary array (mask filled first, untimed)."""
    sampler = GrammarSampler(matcher)
    array = ctypes.byref(candidates.array)
    candidates.reset()
    llama_cpp.llama_sampler_apply(sampler.pointer, array)  # fills the mask
    best = _cpu_us(
        partial(llama_cpp.llama_sampler_apply, sampler.pointer, array), repeat, candidates.reset
    )
    sampler.close()
    return best


def _loop_time(
    llama_cpp: Any, llm: Any, prompt: str, grammar: gs.Grammar
) -> tuple[dict[str, Any], float]:
    """A generation, and its CPU time per step outside llama_decode and GrammarSampler.sample
    (both timed in the same run)."""
    inside = [0]
    decode, sample = EvaluatedTokens.decode, GrammarSampler.sample

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            start = time.process_time_ns()
            try:
                return fn(*args)
            finally:
                inside[0] += time.process_time_ns() - start

        return call

    EvaluatedTokens.decode = timed(decode)  # type: ignore[method-assign]
    GrammarSampler.sample = timed(sample)  # type: ignore[method-assign]
    try:
        start = time.process_time_ns()
        out = gs.llama.generate(llm, prompt, grammar, max_tokens=128, jump_forward=False)
        total = time.process_time_ns() - start
    finally:
        EvaluatedTokens.decode = decode  # type: ignore[method-assign]
        GrammarSampler.sample = sample  # type: ignore[method-assign]
    steps = len(out["choices"][0]["token_ids"]) + 1
    return out, (total - inside[0]) / steps / 1000


def markdown(table: dict[str, dict[str, float]]) -> str:
    extra = ["ours besides decode", "llama.cpp sample", "apply, 262k"]
    head = "| grammar | tokens | " + " | ".join(COMPONENTS + extra) + " |"
    lines = [head, "|---" * (len(COMPONENTS) + len(extra) + 2) + "|"]
    for case, row in table.items():
        row = {**row, "ours besides decode": sum(row[c] for c in OURS)}
        cells = [f"{row[c]:,.1f}" for c in COMPONENTS + extra]
        lines.append(f"| {case} | {int(row['tokens'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nµs of process CPU time per token.\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cases", nargs="*")
    args = parser.parse_args()
    llm = load_llama(None, threads=args.threads)
    table = {}
    for name, case in cases().items():
        if args.cases and name not in args.cases:
            continue
        table[name] = replay(llm, case.prompt, case.grammar, args.repeat)
        print(f"{name}: done", file=sys.stderr)
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
