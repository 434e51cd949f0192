"""End-to-end tokens/s on the embedded Gemma 3 270M model, greedy, fixed max tokens.

    python bench/e2e.py [--rounds 5] [--max-tokens 96] [--out bench/results]

Configurations, run interleaved round by round (A B C D E, A B C D E, ...):
  unconstrained            llama-cpp-python's create_completion, EOS banned
  llama.cpp grammar        create_completion(grammar=LlamaGrammar)  (llama.cpp's own sampler)
  ours: logits processor   create_completion(logits_processor=gs.llama.logits_processor(...))
  ours: native sampler     gs.llama.generate(jump_forward=False)
  ours: native + jump-fwd  gs.llama.generate(jump_forward=True)
Grammars: a JSON-schema object, free JSON, a GBNF choice list, a C-like grammar. Reports the
median decode tokens/s per configuration (time after the first token, so prompt processing and
output length do not skew it), its ratio to unconstrained, and checks every constrained output
is valid: the JSON cases parse (and match the schema), the choice is one of the list, the C-like
output is a complete sentence of its grammar. An invalid constrained output (a truncated one
included) fails the run with exit status 1. Writes a markdown table and a PNG chart
(matplotlib) into --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

import gbnf_sampler as gs
from gbnf_sampler.cli.demo import TICKET_PROMPT, TICKET_SCHEMA
from gbnf_sampler.llama.models import load_llama

C_LIKE_GBNF = r"""
root      ::= (function ws)+
function  ::= type " " ident "(" params? ")" ws "{" ws (statement ws)* "}"
params    ::= type " " ident ("," ws type " " ident)*
statement ::= type " " ident ws "=" ws expr ";" | "return " expr ";" | ident "(" args? ");"
args      ::= expr ("," ws expr)*
expr      ::= term (ws [-+*/] ws term)*
term      ::= ident | [0-9]+ | "(" expr ")"
type      ::= "int" | "float" | "char" | "void"
ident     ::= [a-z_] [a-z0-9_]{0,15}
ws        ::= [ \n]{0,4}
"""
CHOICES = [
    "positive: the customer liked the product and would buy it again",
    "negative: the customer disliked the product and wants a refund",
    "neutral: the customer has no strong opinion about the product",
]

CASES: dict[str, tuple[str, Any, Callable[[str], bool]]] = {
    "schema object": (TICKET_PROMPT, TICKET_SCHEMA, lambda t: _is_json(t, TICKET_SCHEMA)),
    "free JSON": ("Write a JSON object describing a book.\nJSON: ", None, lambda t: _is_json(t)),
    "choice list": ("Review: I loved it!\nSentiment: ", "choices", lambda t: t in CHOICES),
    "C-like": (
        "/* A small C function that adds two numbers */\n",
        C_LIKE_GBNF,
        lambda t: _is_sentence(C_LIKE_GBNF, t),
    ),
}


def _is_sentence(gbnf: str, text: str) -> bool:
    """The whole text is a complete sentence of the grammar (our byte-level matcher)."""
    matcher = gs.Matcher(gs.Grammar.from_gbnf(gbnf))
    return matcher.accept_bytes(text.encode("utf-8")) and matcher.can_terminate()


def _is_json(text: str, schema: dict[str, Any] | None = None) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    if schema is None:
        return True
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError:
        return False
    return True


def _grammar(spec: Any) -> gs.Grammar:
    if spec is None:
        return gs.Grammar.json()
    if spec == "choices":
        return gs.Grammar.from_choices(CHOICES)
    if isinstance(spec, str):
        return gs.Grammar.from_gbnf(spec)
    return gs.Grammar.from_json_schema(spec)


def _timed(fn: Callable[[], Any]) -> tuple[str, int, float]:
    """Runs one streaming generation: (text, completion tokens, decode tokens/s).

    The rate counts the tokens after the first one over the time after the first chunk, so
    prompt processing and output length (constrained outputs stop early, the unconstrained
    baseline never does) do not skew the comparison. Jump-forward chunks carry several tokens.
    """
    start = time.perf_counter()
    first = None
    pieces = []
    usage: dict[str, Any] = {}
    for chunk in fn():
        now = time.perf_counter()
        if first is None:
            first = now
        pieces.append(chunk["choices"][0]["text"])
        usage = chunk.get("usage") or usage
    end = time.perf_counter()
    text = "".join(pieces)
    tokens = int(usage.get("completion_tokens", len(pieces)))
    decode = end - (first if first is not None else start)
    rate = (tokens - 1) / decode if tokens > 1 and decode > 0 else 0.0
    return text, tokens, rate


def _configs(llm: Any, prompt: str, grammar: gs.Grammar, n: int) -> dict[str, Callable[[], Any]]:
    import llama_cpp

    llama_grammar = llama_cpp.LlamaGrammar.from_string(grammar.to_gbnf(), verbose=False)
    eos_ban = {int(llm.token_eos()): -1e9}
    greedy = {"max_tokens": n, "temperature": 0.0, "seed": 0, "stream": True}
    return {
        "unconstrained": lambda: llm.create_completion(prompt, logit_bias=eos_ban, **greedy),
        "llama.cpp grammar": lambda: llm.create_completion(prompt, grammar=llama_grammar, **greedy),
        "ours: logits processor": lambda: llm.create_completion(
            prompt, logits_processor=gs.llama.logits_processor(llm, grammar), **greedy
        ),
        "ours: native sampler": lambda: gs.llama.generate(
            llm, prompt, grammar, max_tokens=n, jump_forward=False, stream=True
        ),
        "ours: native + jump-forward": lambda: gs.llama.generate(
            llm, prompt, grammar, max_tokens=n, stream=True
        ),
    }


def run(rounds: int, max_tokens: int, invalid: list[str]) -> dict[str, dict[str, float]]:
    """Median decode tokens/s per grammar and configuration; invalid outputs go to ``invalid``."""
    llm = load_llama(None)
    table: dict[str, dict[str, float]] = {}
    for case, (prompt, spec, valid) in CASES.items():
        configs = _configs(llm, prompt, _grammar(spec), max_tokens)
        rates: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(rounds):
            for name, fn in configs.items():
                text, tokens, rate = _timed(fn)
                if name != "unconstrained" and not valid(text):
                    invalid.append(f"{case}, {name}: {text!r}")
                    print(f"INVALID output ({case}, {name}): {text!r}", file=sys.stderr)
                if tokens > 1:
                    rates[name].append(rate)
        table[case] = {name: statistics.median(r) if r else 0.0 for name, r in rates.items()}
        print(
            f"{case}: " + ", ".join(f"{k} {v:.1f}" for k, v in table[case].items()), file=sys.stderr
        )
    return table


def markdown(table: dict[str, dict[str, float]]) -> str:
    configs = list(next(iter(table.values())))
    lines = ["| grammar | " + " | ".join(configs) + " |", "|---" * (len(configs) + 1) + "|"]
    for case, row in table.items():
        base = row["unconstrained"]
        cells = [f"{row[c]:.1f} tok/s ({row[c] / base:.2f}x)" for c in configs]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def chart(table: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(next(iter(table.values())))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(configs)
    for i, config in enumerate(configs):
        xs = [j + i * width for j in range(len(table))]
        ax.bar(
            xs, [row[config] / row["unconstrained"] for row in table.values()], width, label=config
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(table))], list(table))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("tokens/s relative to unconstrained")
    ax.set_title("Gemma 3 270M, greedy: constrained decoding speed")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    invalid: list[str] = []
    table = run(args.rounds, args.max_tokens, invalid)
    args.out.mkdir(parents=True, exist_ok=True)
    text = markdown(table)
    (args.out / "e2e.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    try:
        chart(table, args.out / "e2e.png")
    except ImportError:
        print("matplotlib not installed: no chart (pip install '.[bench]')", file=sys.stderr)
    if invalid:
        print(f"FAILED: {len(invalid)} invalid constrained outputs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
