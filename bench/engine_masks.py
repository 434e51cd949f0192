"""Batched mask fills as the serving engines call them, side by side in one run.

64 requests (the mixed kinds of tests/engine_helpers.py: JSON schemas, any JSON, regex, GBNF,
choice, a structural tag) replay their documents token by token on the Llama-3 vocabulary
(llama.cpp's ggml-vocab-llama-bpe.gguf rebuilt as a Hugging Face tokenizer). Each step fills the
masks of every live request:

* ``gbnf_sampler (SGLang)``: ``GbnfSamplerGrammar.fill_vocab_mask_batched`` (one threaded call);
* ``gbnf_sampler (vLLM)``: ``fill_bitmask`` per request, as vLLM's manager calls it;
* ``xgrammar (SGLang)`` and ``llguidance (SGLang)``: SGLang's own backends, same calls;
* ``core fill_masks``: the adapter-free call, to measure the adapter's Python overhead.

    python bench/engine_masks.py              # all cores
    python bench/engine_masks.py --cores 1    # pinned to one core (sched_setaffinity)

"cold" replays start from an empty compiled-grammar cache (the other backends precompute at
compile time; ours computes the first masks there for up to ENGINE_PRECOMPUTE_MS per new grammar
and fills the rest lazily in the timed steps; compile times are printed apart),
``--cold-repeats`` times;
"warm" replays reuse the compiled grammars, ``--repeats`` times. Within each repeat the backends
take turns in a rotating order, so that a change in the machine's load hits all of them.
Prints p50 / p99 / max per batch step (ms) over all repeats, the load average, and the
adapter's Python overhead per request per step (us). Exits 1 if our adapter refuses a document
token (the masks would be wrong).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
warnings.simplefilter("ignore")

BATCH = 64


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return statistics.median(ordered), p99, ordered[-1]


def _backends(tokenizer: Any, vocab_size: int) -> dict[str, Any]:
    from sglang.srt.constrained.llguidance_backend import GuidanceBackend
    from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend

    import gbnf_sampler.sglang as gss

    out: dict[str, Any] = {"gbnf_sampler": gss.GbnfSamplerBackend(tokenizer, vocab_size)}
    out["xgrammar"] = XGrammarGrammarBackend(tokenizer, vocab_size=vocab_size)
    try:
        out["llguidance"] = GuidanceBackend(tokenizer=tokenizer, n_vocab=vocab_size)
    except Exception as e:  # report, keep the others
        print(f"llguidance backend unavailable: {type(e).__name__}: {e}")
    return out


def _requests(vocab: Any) -> list[tuple[tuple[str, str], list[int]]]:
    from engine_helpers import REQUESTS, tokenize

    kinds = {"json": "json", "regex": "regex", "gbnf": "ebnf", "structural_tag": "structural_tag"}
    out = []
    for kind, spec, doc in REQUESTS:
        if kind in kinds:
            key = (kinds[kind], "{}" if kind == "json" and not spec else spec)  # any JSON
            out.append((key, tokenize(vocab, doc)))
    return [out[i % len(out)] for i in range(BATCH)]


REFUSED: dict[str, int] = {}
# Seconds of each replay's compiles (the 64 requests' grammar objects), by SGLang backend class.
COMPILES: dict[str, list[float]] = {}


def _replay(backend: Any, requests: list[Any], overhead: list[float]) -> list[float]:
    """Per-step seconds of the batched fill over fresh grammar objects. A document token
    refused by another engine drops that request (counted in REFUSED); refused by ours, it is an
    error. For ours, ``overhead`` gets (adapter - core fill_masks) / live requests per step,
    both timed at the same step."""
    from sglang.srt.constrained.base_grammar_backend import GrammarRow

    name = type(backend).__name__
    start = time.perf_counter()
    grammars = [backend._init_value_dispatch(key, False) for key, _ in requests]
    COMPILES.setdefault(name, []).append(time.perf_counter() - start)
    for g, (key, _) in zip(grammars, requests, strict=True):
        if type(g).__name__ == "InvalidGrammarObject":
            raise RuntimeError(f"{name} refused {key}: {g!r}")
    times, dropped = [], set()
    for step in range(max(len(t) for _, t in requests)):
        live = [i for i, (_, t) in enumerate(requests) if step < len(t) and i not in dropped]
        mask = grammars[0].allocate_vocab_mask(128256, BATCH, "cpu")
        entries = [GrammarRow(row=i, grammar=grammars[i]) for i in live]
        start = time.perf_counter()
        grammars[0].fill_vocab_mask_batched(entries, mask)
        times.append(time.perf_counter() - start)
        if name == "GbnfSamplerBackend":
            overhead.append(_python_overhead(grammars[0], entries, mask) / len(live))
        for i in live:
            try:
                grammars[i].accept_token(requests[i][1][step])
            except (ValueError, RuntimeError):
                if name == "GbnfSamplerBackend":
                    raise
                dropped.add(i)
                REFUSED[name] = REFUSED.get(name, 0) + 1
    return times


def _python_overhead(grammar: Any, entries: list[Any], mask: Any) -> float:
    """Seconds of the adapter's batched fill with the C++ fill replaced by a no-op: the Python
    layer alone (entry scan, matcher and row lists, the tensor's DLPack view, checks)."""
    from gbnf_sampler import matcher

    real = matcher._core.fill_masks
    matcher._core.fill_masks = lambda *args: None
    try:
        start = time.perf_counter()
        grammar.fill_vocab_mask_batched(entries, mask)
        return time.perf_counter() - start
    finally:
        matcher._core.fill_masks = real


def _vllm_backend(tokenizer: Any) -> Any:
    from types import SimpleNamespace

    import gbnf_sampler.vllm as gsv

    config = SimpleNamespace(structured_outputs_config=None, speculative_config=None)
    return gsv.GbnfSamplerBackend(config, tokenizer=tokenizer, vocab_size=len(tokenizer))


def _replay_vllm(backend: Any, requests: list[Any]) -> list[float]:
    """Per-step seconds of vLLM's per-request ``fill_bitmask`` calls over fresh grammars."""
    from vllm.v1.structured_output.backend_types import StructuredOutputOptions as Opt

    kinds = {"json": Opt.JSON, "regex": Opt.REGEX, "ebnf": Opt.GRAMMAR,
             "structural_tag": Opt.STRUCTURAL_TAG}  # fmt: skip
    grammars = [backend.compile_grammar(kinds[k], s) for (k, s), _ in requests]
    bitmask = backend.allocate_token_bitmask(BATCH)
    times = []
    for step in range(max(len(t) for _, t in requests)):
        live = [i for i, (_, t) in enumerate(requests) if step < len(t)]
        start = time.perf_counter()
        for i in live:
            grammars[i].fill_bitmask(bitmask, i)
        times.append(time.perf_counter() - start)
        for i in live:
            if not grammars[i].accept_tokens(str(i), [requests[i][1][step]]):
                raise RuntimeError(f"vLLM adapter refused a document token of request {i}")
    return times


def _runs(
    backends: dict[str, Any], vllm: Any, requests: list[Any], run: str, repeats: int
) -> tuple[dict[str, list[float]], list[float]]:
    """``repeats`` replays of every backend, in a rotating order; cold runs clear our
    compiled-grammar cache before each of our replays."""
    import gbnf_sampler as gs

    players = [(f"{name} (SGLang) {run}", b) for name, b in backends.items()]
    players.append((f"gbnf_sampler (vLLM) {run}", vllm))
    results: dict[str, list[float]] = {name: [] for name, _ in players}
    overhead: list[float] = []
    for r in range(repeats):
        for name, backend in players[r % len(players) :] + players[: r % len(players)]:
            if run == "cold":
                gs.compiled.clear_cache()
            if backend is vllm:
                results[name] += _replay_vllm(vllm, requests)
            else:
                results[name] += _replay(backend, requests, overhead)
    return results, overhead


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cores", type=int, default=0, help="pin to this many cores (0: all)")
    parser.add_argument("--repeats", type=int, default=20, help="warm replays per backend")
    parser.add_argument("--cold-repeats", type=int, default=3, help="cold replays per backend")
    parser.add_argument(
        "--precompute-ms", type=int, help="our compile's first-mask budget (default: the limit)"
    )
    args = parser.parse_args()
    if args.cores:
        os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[: args.cores]))
    from engine_helpers import hf_tokenizer

    tokenizer = hf_tokenizer("llama-bpe")
    backends = _backends(tokenizer, len(tokenizer))
    vllm = _vllm_backend(tokenizer)
    if args.precompute_ms is not None:  # our adapters' compile-time budget for first masks
        backends["gbnf_sampler"].grammars.precompute_ms = args.precompute_ms
        vllm.grammars.precompute_ms = args.precompute_ms
    requests = _requests(backends["gbnf_sampler"].grammars.vocab)
    cores = len(os.sched_getaffinity(0))
    print(f"{BATCH} requests, Llama-3 vocabulary ({len(tokenizer)} tokens), {cores} core(s)")
    results, _ = _runs(backends, vllm, requests, "cold", args.cold_repeats)
    cold_compiles = {name: list(times) for name, times in COMPILES.items()}
    warm, overhead = _runs(backends, vllm, requests, "warm", args.repeats)
    results.update(warm)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end: {load} (other processes share these cores)")
    print(f"{'backend':32} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'steps':>6}")
    for name, times in results.items():
        p50, p99, worst = _percentiles(times)
        print(f"{name:32} {p50 * 1e3:8.3f} {p99 * 1e3:8.3f} {worst * 1e3:8.3f} {len(times):6d}")
    for name, times in cold_compiles.items():
        median, worst = statistics.median(times) * 1e3, max(times) * 1e3
        print(f"{name}: a cold replay's compiles (64 requests, 5 grammars): median "
              f"{median:.1f} ms, max {worst:.1f} ms")  # fmt: skip
    for name, count in REFUSED.items():
        print(f"{name}: {count} refusals of a document token over all runs (request dropped)")
    p50, p99, _ = _percentiles(overhead)
    print(f"adapter Python overhead (SGLang batched fill, C++ fill stubbed, warm): p50 "
          f"{p50 * 1e6:.2f} us, p99 {p99 * 1e6:.2f} us per request per step")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
