"""``property_order="any"`` vs ``"schema"``: grammar size, conversion and compile time, mask-cache
states and per-step mask latency on objects of 5, 8 and 12 properties.

    python bench/property_order.py [--sizes 5 8 12] [--docs 20] [--vocab llama-bpe] [--seed 0]

For each size n: an object schema of n properties of mixed kinds (strings, integers, booleans,
enums, a nested object, an array), half of them required, plus variants with
``additionalProperties: false`` and with ``maxProperties``. Documents: ``--docs`` random valid
objects (random subsets of the optional properties), written with ``json.dumps``; the "schema"
grammar replays them with keys in the schema's order, the "any" grammar replays the same objects
with keys shuffled (and, for comparison, in the schema's order too). Each replay runs on a fresh
``gs.compile(cache=False)`` of the grammar on the vocabulary (Llama-3's by default, tokenized by
llama.cpp), token by token: ``fill_mask`` then ``accept_token``; every document's own next token
must be allowed (violations are counted; must be 0). Reports per mode: GBNF bytes and rules,
conversion ms, compile ms, ``CompiledGrammar.cached_states`` after replaying all documents,
fill-mask p50/p99 (µs), and the any/schema ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import gbnf_sampler as gs
from gbnf_sampler.schema import schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

_KINDS: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string", "maxLength": 20}, lambda r: r.choice(["alpha", "beta gamma", "x"])),
    ({"type": "integer", "minimum": 0}, lambda r: r.randrange(0, 5000)),
    ({"type": "boolean"}, lambda r: r.random() < 0.5),
    ({"enum": ["red", "green", "blue"]}, lambda r: r.choice(["red", "green", "blue"])),
    (
        {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
            "additionalProperties": False,
        },
        lambda r: {"x": r.randrange(100), "y": round(r.random() * 10, 2)},
    ),
    ({"type": "array", "items": {"type": "string"}}, lambda r: ["a", "bc"][: r.randrange(3)]),
]
_NAMES = [
    "id",
    "name",
    "status",
    "count",
    "enabled",
    "color",
    "position",
    "tags",
    "owner",
    "created",
    "size",
    "label",
]


def make_schema(n: int, variant: str) -> tuple[dict[str, Any], list[Any]]:
    props = {_NAMES[i]: _KINDS[i % len(_KINDS)][0] for i in range(n)}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": list(props)[: n // 2],
    }
    if variant == "closed":
        schema["additionalProperties"] = False
    if variant == "max":
        schema["maxProperties"] = n // 2 + 2
    makers = [_KINDS[i % len(_KINDS)][1] for i in range(n)]
    return schema, makers


def make_docs(
    schema: dict[str, Any], makers: list[Any], k: int, rng: random.Random
) -> list[dict[str, Any]]:
    names = list(schema["properties"])
    required = set(schema["required"])
    cap = schema.get("maxProperties", len(names))
    out = []
    for _ in range(k):
        doc = {}
        optional = [x for x in names if x not in required]
        chosen = set(
            rng.sample(optional, rng.randrange(0, min(len(optional), cap - len(required)) + 1))
        )
        for name, make in zip(names, makers, strict=True):
            if name in required or name in chosen:
                doc[name] = make(rng)
        out.append(doc)
    return out


def shuffled(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    items = list(doc.items())
    rng.shuffle(items)
    return dict(items)


def replay(
    compiled: gs.CompiledGrammar, vocab: gs.Vocab, tokens: list[int]
) -> tuple[list[float], int]:
    m = gs.Matcher(compiled)
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    steps: list[float] = []
    for tid in tokens:
        t0 = time.perf_counter_ns()
        m.fill_mask(row)
        steps.append((time.perf_counter_ns() - t0) / 1e3)
        if not (int(row[tid >> 5]) >> (tid & 31)) & 1 or not m.accept_token(tid):
            return steps, 1
    m.fill_mask(row)
    ok = any((int(row[e >> 5]) >> (e & 31)) & 1 for e in vocab.eos_ids)
    return steps, 0 if ok else 1


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


def measure(
    schema: dict[str, Any], order: str, texts: list[str], llm: Any, vocab: gs.Vocab
) -> dict[str, float]:
    t0 = time.perf_counter()
    gbnf = schema_to_gbnf(schema, property_order=order)
    t1 = time.perf_counter()
    grammar = gs.Grammar.from_gbnf(gbnf)
    t2 = time.perf_counter()
    compiled = gs.compile(grammar, vocab, cache=False)
    t3 = time.perf_counter()
    steps: list[float] = []
    bad = 0
    for text in texts:
        tokens = llm.tokenize(text.encode(), add_bos=False, special=False)
        s, v = replay(compiled, vocab, tokens)
        steps += s
        bad += v
    return {
        "bytes": len(gbnf),
        "rules": gbnf.count("\n"),
        "convert_ms": (t1 - t0) * 1e3,
        "compile_ms": (t3 - t2) * 1e3,
        "states": compiled.cached_states,
        "p50": pct(steps, 0.5),
        "p99": pct(steps, 0.99),
        "violations": bad,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[5, 8, 12])
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--vocab", default="llama-bpe")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from assets import vocab_gguf
    from gbnf_sampler.llama.vocab import load_vocab_only

    path = vocab_gguf(args.vocab)
    llm = load_vocab_only(path)
    vocab = gs.Vocab.from_gguf(path)
    print(f"# {args.vocab}: {vocab.size} tokens; {args.docs} documents per schema")
    head = "| n | variant | mode (docs) | GBNF bytes | rules | convert ms | compile ms |"
    print(head + " cached states | p50 µs | p99 µs | violations |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for n in args.sizes:
        for variant in ("open", "closed", "max"):
            rng = random.Random(args.seed)
            schema, makers = make_schema(n, variant)
            docs = make_docs(schema, makers, args.docs, rng)
            in_order = [json.dumps(d) for d in docs]
            any_order = [json.dumps(shuffled(d, rng)) for d in docs]
            try:
                rows = {
                    "schema (schema order)": measure(schema, "schema", in_order, llm, vocab),
                    "any (schema order)": measure(schema, "any", in_order, llm, vocab),
                    "any (shuffled)": measure(schema, "any", any_order, llm, vocab),
                }
            except gs.SchemaError as err:
                print(f"| {n} | {variant} | any | SchemaError: {err.message[:90]} |")
                continue
            for label, r in rows.items():
                bad += int(r["violations"])
                print(
                    f"| {n} | {variant} | {label} | {r['bytes']:,} | {r['rules']:,} | "
                    f"{r['convert_ms']:.1f} | {r['compile_ms']:.1f} | {r['states']:,} | "
                    f"{r['p50']:.1f} | {r['p99']:.1f} | {r['violations']} |"
                )
            base, other = rows["schema (schema order)"], rows["any (shuffled)"]
            print(
                f"|   | {variant} | ratio any/schema | {other['bytes'] / base['bytes']:.1f}x | "
                f"{other['rules'] / base['rules']:.1f}x | "
                f"{other['convert_ms'] / base['convert_ms']:.1f}x | "
                f"{other['compile_ms'] / max(base['compile_ms'], 1e-3):.1f}x | "
                f"{other['states'] / max(base['states'], 1):.1f}x | "
                f"{other['p50'] / max(base['p50'], 1e-3):.1f}x | "
                f"{other['p99'] / max(base['p99'], 1e-3):.1f}x | |"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
