"""What ``#@ distinct-items`` costs a mask fill: the same documents replayed token by token on
two grammars of one schema shape, one with ``uniqueItems: true`` (the matcher keeps the items
distinct) and one without, interleaved in one process.

    python bench/distinct_items.py [--vocab llama-bpe] [--rounds 5] [--items 12] [--json PATH]

Each document is an array of ``--items`` distinct items (strings; objects with a string key;
closed objects whose string member is followed by a constant, where the matcher walks the forced
rest; integers, searched at every digit), tokenized greedily with the vocabulary's longest
tokens. Kinds that this version cannot keep distinct are skipped. Every replay compiles afresh
(cold: the mask cache starts empty) and is replayed twice more on the same compiled grammar
(warm).
Prints per grammar and phase the p50/p90/max of ``fill_mask`` in microseconds, and the ratios
distinct / plain. Masks of the distinct grammar are checked to allow every replayed token.
``--json`` writes ``{kind: {metric: microseconds}}`` (for bench/ab_builds.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import gbnf_sampler as gs
from gbnf_sampler.schema import schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from assets import vocab_gguf
from mask_helpers import normal_tokens


def documents(count: int) -> dict[str, tuple[dict, bytes]]:
    words = [f"item-{i}-{'x' * (i % 5)}" for i in range(count)]
    strings = ("[" + ", ".join(f'"{w}"' for w in words) + "]").encode()
    objects = (
        "[" + ", ".join(f'{{"name": "{w}", "n": {i}}}' for i, w in enumerate(words)) + "]"
    ).encode()
    closed = ("[" + ", ".join(f'{{"name": "{w}", "kind": "tool"}}' for w in words) + "]").encode()
    integers = ("[" + ", ".join(str(i * 37 % 1000) for i in range(count)) + "]").encode()
    return {
        "strings": ({"type": "array", "items": {"type": "string"}}, strings),
        "objects": (
            {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            objects,
        ),
        "closed": (
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"name": {"type": "string"}, "kind": {"const": "tool"}},
                    "required": ["name", "kind"],
                },
            },
            closed,
        ),
        "integers": ({"type": "array", "items": {"type": "integer"}}, integers),
    }


def longest_first(data: bytes, table: dict[bytes, int]) -> list[int]:
    longest = max(len(t) for t in table)
    out, i = [], 0
    while i < len(data):
        j = next(j for j in range(min(len(data), i + longest), i, -1) if data[i:j] in table)
        out.append(table[data[i:j]])
        i = j
    return out


def replay(compiled: gs.CompiledGrammar, tokens: list[int], row: np.ndarray) -> list[float]:
    m = gs.Matcher(compiled)
    times = []
    for t in tokens:
        start = time.perf_counter_ns()
        m.fill_mask(row)
        times.append((time.perf_counter_ns() - start) / 1000)
        if not (row.view(np.uint32)[t // 32] >> (t % 32)) & 1:
            raise SystemExit(f"token {t} refused by its own mask")
        if not m.accept_token(t):
            raise SystemExit(f"token {t} refused")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", default="llama-bpe")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--json", type=Path, help="write {kind: {metric: us}} here")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    vocab = gs.Vocab.from_gguf(vocab_gguf(args.vocab))
    table = normal_tokens(vocab)
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    for kind, (schema, doc) in documents(args.items).items():
        tokens = longest_first(doc, table)
        grammars = {
            "plain": gs.Grammar.from_gbnf(schema_to_gbnf(schema)),
            "distinct": gs.Grammar.from_gbnf(
                schema_to_gbnf({**schema, "uniqueItems": True}, strict=False)
            ),
        }
        if "#@ distinct-items" not in grammars["distinct"].to_gbnf():
            print(f"{kind}: skipped (no distinct-items directive in this version)")
            continue
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name, grammar in grammars.items():
                compiled = gs.compile(grammar, vocab, cache=False)
                times.setdefault((name, "cold"), []).extend(replay(compiled, tokens, row))
                for _ in range(2):
                    times.setdefault((name, "warm"), []).extend(replay(compiled, tokens, row))
        print(f"{kind}: {len(tokens)} tokens, {args.rounds} rounds ({args.vocab})")
        for phase in ("cold", "warm"):
            stats = {}
            for name in grammars:
                xs = sorted(times[(name, phase)])
                stats[name] = (statistics.median(xs), xs[int(0.9 * (len(xs) - 1))], xs[-1])
                p50, p90, top = stats[name]
                print(f"  {phase} {name:>8}: p50 {p50:9.1f}  p90 {p90:9.1f}  max {top:9.1f} us")
                metrics = results.setdefault(kind, {})
                metrics.update({f"{phase} {name} p50": p50, f"{phase} {name} p90": p90})
            ratios = [d / p for d, p in zip(stats["distinct"], stats["plain"], strict=True)]
            p50, p90, top = ratios
            print(f"  {phase}    ratio: p50 {p50:.2f}x  p90 {p90:.2f}x  max {top:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
