"""Mask cost of triggered grammars: free stretches vs a plain "any text" grammar, bodies vs the
plain body grammar, cold and warm, on real vocabularies.

    python bench/triggered_masks.py [--vocabs llama-bpe qwen2 gemma] [--repeat 5]

Document: a paragraph of free text (with near-misses of the trigger: ``<``, ``<tool``,
``<tool_cal``) then ``<tool_call>`` and a tool call's JSON (a Hermes-style call), tokenized by
the vocabulary's own tokenizer. Grammars, each compiled fresh (``cache=False``):

  triggered  ``Grammar.triggered(call, "<tool_call>")`` (free text, trigger, call JSON);
  any-text   ``t ::= "" | [^\\uD800-\\uDFFF] t`` (the free stretch's language without the trigger
             search: the floor a triggered grammar can reach in its free stretch);
  body       the call grammar alone (replayed on the body's tokens only).

Per step, three clocks: ``native`` is the time of the C++ fill alone, measured inside the
extension (what the native llama.cpp sampler pays: no Python in its loop; builds without the
``_fill_mask_ns`` hook skip it), ``core`` times the extension's fill_mask call from Python (adds
the binding's argument checks and the call), ``python`` times ``Matcher.fill_mask`` (adds the
Python wrapper's checks). ``cold`` is the first replay on a fresh compile (each mask
cache entry is filled inside the step that first meets its state: the classification cost);
``warm`` is the median over ``--repeat`` further replays. Each compile starts from an empty shared
mask cache (``clear_cache()``) without background precompute (``precompute=False`` where the
build has it), so cold steps classify their own states. Prints p50/p99 in microseconds and the
ratios triggered/any-text (free stretch) and triggered/body (inside the body). ``--json PATH``
also writes the summary numbers (for an A/B of two builds: bench/ab_builds.py; only this file,
bench/mask_latency.py and tests/ are read from the checkout).
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gbnf_sampler as gs
from gbnf_sampler.compiled import clear_cache
from mask_latency import load_model

FREE_TEXT = (
    "Sure! Let me think about that. The weather in Paris is usually mild in spring; "
    "temperatures < 20 degrees are common, and a <tool or a <tool_cal is not a call. "
    "I could also check the forecast, compare it with Lyon, and write a short summary "
    "with numbers like 12.5, 3 < 4, and emoji 🌤️ before answering.\n\n"
)
CALL = '\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>'
TRIGGER = "<tool_call>"
CALL_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"const": "get_weather"},
        "arguments": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "unit"],
        },
    },
    "required": ["name", "arguments"],
}
ANY_TEXT = 'root ::= t\nt ::= "" | [^\\uD800-\\uDFFF] t\n'


def call_grammar() -> gs.Grammar:
    body = gs.Grammar.from_json_schema(CALL_SCHEMA)
    rules = body.to_gbnf().replace("root ::=", "call ::=", 1)
    return gs.Grammar.from_gbnf('root ::= "\\n" call "\\n</tool_call>"\n' + rules)


def replay(m: gs.Matcher, tokens: list[int], clock: str) -> list[float]:
    """Microseconds per fill_mask over the document (the document's token checked each step)."""
    row = np.zeros(int(m._core.mask_words), dtype=np.int32)
    fill = m._core.fill_mask if clock == "core" else m.fill_mask
    out = []
    for tid in tokens:
        if clock == "native":
            out.append(m._core._fill_mask_ns(row, 0) / 1e3)
        else:
            a = time.perf_counter_ns()
            fill(row, 0)
            out.append((time.perf_counter_ns() - a) / 1e3)
        if not (int(row[tid >> 5]) >> (tid & 31)) & 1 or not m.accept_token(tid):
            raise AssertionError(f"the document's token {tid} was refused")
    return out


def measure(
    grammar: gs.Grammar, vocab: gs.Vocab, tokens: list[int], repeat: int, clock: str
) -> tuple[list[float], list[float]]:
    """(cold per-step us, warm per-step us: the median of ``repeat`` replays per step)."""
    clear_cache()
    kw = {"precompute": False} if "precompute" in inspect.signature(gs.compile).parameters else {}
    compiled = gs.compile(grammar, vocab, cache=False, **kw)
    cold = replay(gs.Matcher(compiled), tokens, clock)
    runs = [replay(gs.Matcher(compiled), tokens, clock) for _ in range(repeat)]
    warm = [statistics.median(step) for step in zip(*runs, strict=True)]
    return cold, warm


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def row(name: str, values: list[float]) -> str:
    return f"| {name} | {pct(values, 0.5):.2f} | {pct(values, 0.99):.2f} | {max(values):.1f} |"


def run_vocab(name: str, repeat: int, summary: dict[str, float]) -> list[str]:
    llm: Any = load_model(name)
    vocab = gs.Vocab.from_llama(llm)

    def tok(text: str) -> list[int]:
        return [int(t) for t in llm.tokenize(text.encode(), add_bos=False, special=False)]

    # The vocabulary's token trie is built on its first use: build it before any clock runs, so
    # that cold steps time the classification alone.
    warm_up = gs.Matcher(gs.compile(gs.Grammar.from_gbnf('root ::= "a"'), vocab, cache=False))
    warm_up.fill_mask(np.zeros(int(warm_up._core.mask_words), dtype=np.int32))
    free = tok(FREE_TEXT)
    call = tok(CALL)
    trigger = tok(TRIGGER)
    document = free + trigger + call
    triggered = gs.Grammar.triggered(call_grammar(), TRIGGER)
    lines = [
        f"\n### {name} ({vocab.size} tokens): {len(free)} free + {len(trigger)} trigger + "
        f"{len(call)} body tokens\n",
        "| grammar, clock, steps | p50 us | p99 us | max us |",
        "|---|---|---|---|",
    ]
    ratios = []
    clocks = ["native"] if hasattr(warm_up._core, "_fill_mask_ns") else []
    for clock in [*clocks, "core", "python"]:
        t_cold, t_warm = measure(triggered, vocab, document, repeat, clock)
        a_cold, a_warm = measure(gs.Grammar.from_gbnf(ANY_TEXT), vocab, free, repeat, clock)
        b_cold, b_warm = measure(call_grammar(), vocab, call, repeat, clock)
        n_free, n_body = len(free), len(call)
        body_from = len(free) + len(trigger)
        for label, values in (
            (f"triggered, {clock}, free, warm", t_warm[:n_free]),
            (f"any-text, {clock}, warm", a_warm),
            (f"triggered, {clock}, body, warm", t_warm[body_from:]),
            (f"body alone, {clock}, warm", b_warm),
            (f"triggered, {clock}, free, cold", t_cold[:n_free]),
            (f"any-text, {clock}, cold", a_cold),
            (f"triggered, {clock}, trigger steps, cold", t_cold[n_free:body_from]),
            (f"triggered, {clock}, body, cold", t_cold[body_from:]),
            (f"body alone, {clock}, cold", b_cold),
        ):
            lines.append(row(label, values))
        summary.update(
            {
                f"{clock} free warm p50": pct(t_warm[:n_free], 0.5),
                f"{clock} any-text warm p50": pct(a_warm, 0.5),
                f"{clock} body warm p50": pct(t_warm[body_from:], 0.5),
                f"{clock} body-alone warm p50": pct(b_warm, 0.5),
                f"{clock} free cold first step": t_cold[0],
                f"{clock} free cold sum": sum(t_cold[:n_free]),
                f"{clock} any-text cold sum": sum(a_cold),
                f"{clock} body cold sum": sum(t_cold[body_from:]),
                f"{clock} body-alone cold sum": sum(b_cold),
            }
        )
        ratios.append(
            f"{clock}: free-stretch p50 triggered/any-text = "
            f"{pct(t_warm[:n_free], 0.5) / pct(a_warm, 0.5):.2f}x warm, "
            f"body p50 triggered/plain = {pct(t_warm[body_from:], 0.5) / pct(b_warm, 0.5):.2f}x "
            f"warm; first free step cold {t_cold[0]:.0f} us vs any-text {a_cold[0]:.0f} us; "
            f"sum of cold free steps {sum(t_cold[:n_free]) / 1e3:.1f} ms vs any-text "
            f"{sum(a_cold) / 1e3:.1f} ms"
        )
        del n_body
    lines += ["", *ratios]
    llm.close()
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocabs", nargs="+", default=["llama-bpe", "qwen2", "gemma"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="also write the summary numbers (microseconds) there")
    args = ap.parse_args()
    summaries: dict[str, dict[str, float]] = {}
    for name in args.vocabs:
        summaries[name] = {}
        print("\n".join(run_vocab(name, args.repeat, summaries[name])), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(summaries))


if __name__ == "__main__":
    main()
