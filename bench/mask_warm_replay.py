"""Warm mask latency of one build: the replays after the first, on the calling thread's CPU clock.

    python bench/mask_warm_replay.py [--reps 6] [--vocab llama-bpe]

For an A/B of two builds, run it alternately with each build's own interpreter (for example
``/work/main/.venv/bin/python bench/mask_warm_replay.py`` and this branch's), several times
each (bench/ab_builds.py does the alternation, through ``--json``): only this file and tests/
are read from the checkout, so the same script measures any build that has ``gs.compile``. Each
document of tests/mask_documents.py is compiled once (``cache=False``; ``precompute=False``
where the build has it), replayed ``--reps`` times token by token with one ``fill_mask`` per
step; the first replay fills the mask cache and is left out. Prints per-document p50/p90 and
the pooled p50/p90/p99/max in microseconds.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
from assets import llama_cpp_assets, llama_cpp_grammars
from mask_documents import documents


def pick(sorted_us: list[float], q: float) -> float:
    return sorted_us[min(len(sorted_us) - 1, int(q * len(sorted_us)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--vocab", default="llama-bpe")
    ap.add_argument("--json", help="also write the p50s in microseconds there (bench/ab_builds.py)")
    args = ap.parse_args()
    from gbnf_sampler.llama.vocab import load_vocab_only

    llm = load_vocab_only(llama_cpp_assets() / "models" / f"ggml-vocab-{args.vocab}.gguf")
    vocab = gs.Vocab.from_llama(llm)
    grammars_dir = Path(next(iter(llama_cpp_grammars().values()))).parent
    kw = {"precompute": False} if "precompute" in inspect.signature(gs.compile).parameters else {}
    pooled: list[float] = []
    summary: dict[str, float] = {}
    for name, grammar, text in documents(grammars_dir):
        tokens = llm.tokenize(text.encode(), add_bos=False, special=False)
        compiled = gs.compile(gs.Grammar.from_gbnf(grammar), vocab, cache=False, **kw)
        row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
        steps: list[float] = []
        for rep in range(args.reps):
            m = gs.Matcher(compiled)
            for tid in tokens:
                a = time.thread_time_ns()
                m.fill_mask(row)
                if rep > 0:
                    steps.append((time.thread_time_ns() - a) / 1e3)
                if not m.accept_token(tid):
                    print(f"FAILED: {name} refused its own token {tid}")
                    return 1
        steps.sort()
        pooled += steps
        summary[f"{name} p50"] = pick(steps, 0.5)
        print(f"  {name:10s} p50={pick(steps, 0.5):7.1f} p90={pick(steps, 0.9):7.1f} us")
    pooled.sort()
    print(
        f"{gs.__file__}: warm steps={len(pooled)} p50={pick(pooled, 0.5):.1f} "
        f"p90={pick(pooled, 0.9):.1f} p99={pick(pooled, 0.99):.1f} max={pooled[-1]:.1f} us"
    )
    summary.update({f"pooled {q}": pick(pooled, v) for q, v in (("p50", 0.5), ("p90", 0.9))})
    if args.json:
        Path(args.json).write_text(json.dumps({args.vocab: summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
