"""End-to-end tokens/s on the embedded Gemma 3 270M model, greedy, interleaved rounds.

    python bench/e2e.py [--rounds 5] [--threads 1] [--out bench/results]

Modes, run interleaved (every mode once per round, the rounds one after another):
  unconstrained (llama-cpp-python)  create_completion with EOS banned (a logit bias, applied by
                                    llama-cpp-python in Python)
  unconstrained (our loop)          gs.llama.generate(grammar=None): our decoding loop, EOS
                                    banned by llama.cpp's logit-bias sampler
  llama.cpp grammar                 create_completion(grammar=LlamaGrammar)
  ours: logits processor            create_completion(logits_processor=gs.llama.logits_processor)
  ours: native sampler              gs.llama.generate(jump_forward=False)
  ours: native + jump-forward       gs.llama.generate(jump_forward=True): forced text and text
                                    guessed from the context (draft_lookup)
  ours: jump-forward, forced only   gs.llama.generate(jump_forward=True, draft_lookup=False)
Grammars: a JSON-schema object (flexible whitespace, the default, and compact), free JSON (an
object, like llama.cpp's json.gbnf), a choice list, a C-like GBNF. Unconstrained runs generate
as many tokens as the case allows; constrained runs stop where the output ends.

Per mode and grammar: tokens/s counting every output token, by the wall clock and by process
CPU time (the machine may be shared; CPU time is what the decoding itself costs), each as the
median over rounds and as a ratio to the unconstrained llama-cpp-python run of the same round;
tokens/s counting only sampled tokens (not the draft tokens jump-forward kept); the share of
such forced tokens; the draft acceptance rate (draft tokens kept / evaluated); whether every
output validated (the JSON cases parse and match the schema, the choice is one of the list, the
C-like output is a complete sentence of its grammar by our byte-level matcher) and, for
jump-forward, whether its tokens are the native sampler's, token for token.

Jump-forward evaluates a draft only where its cost model (learned from the steps it times)
says it pays: on a CPU where a row of logits costs more than a token (Gemma's 262k vocabulary),
only tokens the grammar allows alone. ``--assume-cheap-rows`` fixes the costs as on a GPU (a
row nearly free) to show what the drafts keep on any machine: the forced share is then the
share of tokens written without a step of their own; the speeds are still this machine's.

The run fails (exit status 1) on an invalid or truncated constrained output, or a jump-forward
output that differs from the native one. Writes bench/results/e2e.md and e2e.png (matplotlib).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

import gbnf_sampler as gs
from gbnf_sampler.cli.demo import TICKET_PROMPT, TICKET_SCHEMA
from gbnf_sampler.llama.models import load_llama
from gbnf_sampler.llama.step_costs import step_costs_for

C_LIKE_GBNF = r"""
root      ::= function
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
JSON_OBJECT_GBNF = gs.Grammar.json().to_gbnf().replace("root ::= value", "root ::= object")
BOOK_PROMPT = (
    'Describe the book "Emma" by Jane Austen as a JSON object with title, author and year.\n'
)

UNCONSTRAINED = "unconstrained (llama-cpp-python)"
NATIVE = "ours: native sampler"
JUMP_FORWARD = "ours: native + jump-forward"
FORCED_ONLY = "ours: jump-forward, forced only"


@dataclass(frozen=True)
class Case:
    prompt: str
    grammar: gs.Grammar
    max_tokens: int
    valid: Callable[[str], bool]


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
        return isinstance(value, dict)
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError:
        return False
    return True


def cases() -> dict[str, Case]:
    def schema(whitespace: str) -> gs.Grammar:
        return gs.Grammar.from_json_schema(TICKET_SCHEMA, whitespace=whitespace)

    ticket_valid = lambda t: _is_json(t, TICKET_SCHEMA)  # noqa: E731
    return {
        "schema object": Case(TICKET_PROMPT, schema("flexible"), 96, ticket_valid),
        "schema object (compact)": Case(TICKET_PROMPT, schema("compact"), 96, ticket_valid),
        "free JSON": Case(BOOK_PROMPT, gs.Grammar.from_gbnf(JSON_OBJECT_GBNF), 96, _is_json),
        "choice list": (
            Case(
                "Review: I loved it!\nSentiment: ",
                gs.Grammar.from_choices(CHOICES),
                64,
                CHOICES.__contains__,
            )
        ),
        "C-like": Case(
            "/* A small C function that adds two numbers */\n",
            gs.Grammar.from_gbnf(C_LIKE_GBNF),
            128,
            lambda t: _is_sentence(C_LIKE_GBNF, t),
        ),
    }


@dataclass
class Run:
    text: str
    finish: str
    tokens: int
    forced: int
    drafted: int
    wall: float
    cpu: float
    token_ids: list[int] | None


def _modes(llm: Any, case: Case) -> dict[str, Callable[[], dict[str, Any]]]:
    import llama_cpp

    llama_grammar = llama_cpp.LlamaGrammar.from_string(case.grammar.to_gbnf(), verbose=False)
    eos_ban = {int(llm.token_eos()): -1e9}
    n = case.max_tokens
    greedy = {"max_tokens": n, "temperature": 0.0, "seed": 0}
    p, g = case.prompt, case.grammar
    return {
        UNCONSTRAINED: lambda: llm.create_completion(p, logit_bias=eos_ban, **greedy),
        "unconstrained (our loop)": lambda: gs.llama.generate(llm, p, None, max_tokens=n),
        "llama.cpp grammar": lambda: llm.create_completion(p, grammar=llama_grammar, **greedy),
        "ours: logits processor": lambda: llm.create_completion(
            p, logits_processor=gs.llama.logits_processor(llm, g), **greedy
        ),
        NATIVE: lambda: gs.llama.generate(llm, p, g, max_tokens=n, jump_forward=False),
        JUMP_FORWARD: lambda: gs.llama.generate(llm, p, g, max_tokens=n),
        FORCED_ONLY: lambda: gs.llama.generate(llm, p, g, max_tokens=n, draft_lookup=False),
    }


def _timed(fn: Callable[[], dict[str, Any]]) -> Run:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    usage, choice = out["usage"], out["choices"][0]
    return Run(
        text=choice["text"],
        finish=choice["finish_reason"],
        tokens=int(usage["completion_tokens"]),
        forced=int(usage.get("forced_tokens", 0)),
        drafted=int(usage.get("draft_tokens", 0)),
        wall=wall,
        cpu=cpu,
        token_ids=choice.get("token_ids"),
    )


@dataclass
class Row:
    runs: list[Run] = field(default_factory=list)
    wall_ratio: list[float] = field(default_factory=list)
    cpu_ratio: list[float] = field(default_factory=list)
    valid: bool = True
    same_as_native: bool | None = None


def _problems(case_name: str, mode: str, case: Case, run: Run, native: Run | None) -> list[str]:
    out = []
    if mode.startswith("unconstrained"):
        return out
    if run.finish != "stop" or not case.valid(run.text):
        out.append(f"{case_name}, {mode}: invalid or truncated ({run.finish}): {run.text!r}")
    drafting = mode in (JUMP_FORWARD, FORCED_ONLY)
    if drafting and native is not None and run.token_ids != native.token_ids:
        out.append(f"{case_name}, {mode}: tokens differ from the native sampler's")
    return out


def run_case(llm: Any, name: str, case: Case, rounds: int, failures: list[str]) -> dict[str, Row]:
    modes = _modes(llm, case)
    for fn in modes.values():  # warm-up: caches the prompt and compiles the grammar
        fn()
    rows = {mode: Row() for mode in modes}
    for _ in range(rounds):
        runs = {mode: _timed(fn) for mode, fn in modes.items()}
        base = runs[UNCONSTRAINED]
        for mode, run in runs.items():
            row = rows[mode]
            row.runs.append(run)
            row.wall_ratio.append((run.tokens / run.wall) / (base.tokens / base.wall))
            row.cpu_ratio.append((run.tokens / run.cpu) / (base.tokens / base.cpu))
            problems = _problems(name, mode, case, run, runs.get(NATIVE))
            row.valid = row.valid and not any("invalid" in p for p in problems)
            if mode in (JUMP_FORWARD, FORCED_ONLY):
                same = run.token_ids == runs[NATIVE].token_ids
                row.same_as_native = same and row.same_as_native is not False
            failures += problems
            for p in problems:
                print("FAILED:", p, file=sys.stderr)
    return rows


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def markdown(table: dict[str, dict[str, Row]]) -> str:
    head = (
        "| mode | tok/s wall | ratio wall | tok/s CPU | ratio CPU | sampled tok/s CPU "
        "| forced share | draft acceptance | valid | tokens = native |"
    )
    lines: list[str] = []
    for case, rows in table.items():
        lines += [f"\n**{case}**\n", head, "|---" * 10 + "|"]
        for mode, row in rows.items():
            tokens = sum(r.tokens for r in row.runs)
            forced = sum(r.forced for r in row.runs)
            drafted = sum(r.drafted for r in row.runs)
            rate_wall = _median([r.tokens / r.wall for r in row.runs])
            rate_cpu = _median([r.tokens / r.cpu for r in row.runs])
            sampled = _median([(r.tokens - r.forced) / r.cpu for r in row.runs])
            share = f"{forced / tokens:.0%}" if tokens else "-"
            accept = f"{forced / drafted:.0%} of {drafted / len(row.runs):.1f}" if drafted else "-"
            valid = "-" if mode.startswith("unconstrained") else ("yes" if row.valid else "NO")
            same = {None: "-", True: "yes", False: "NO"}[row.same_as_native]
            lines.append(
                f"| {mode} | {rate_wall:.1f} | {_median(row.wall_ratio):.2f}x | {rate_cpu:.1f} "
                f"| {_median(row.cpu_ratio):.2f}x | {sampled:.1f} | {share} | {accept} "
                f"| {valid} | {same} |"
            )
    return "\n".join(lines).strip() + "\n"


def chart(table: dict[str, dict[str, Row]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = list(next(iter(table.values())))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(modes)
    for i, mode in enumerate(modes):
        xs = [j + i * width for j in range(len(table))]
        ys = [_median(rows[mode].cpu_ratio) for rows in table.values()]
        ax.bar(xs, ys, width, label=mode)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(table))], list(table))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("tokens per CPU second / unconstrained")
    ax.set_title("Gemma 3 270M, greedy: constrained decoding speed (all output tokens)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _assume_cheap_rows(llm: Any) -> None:
    costs = step_costs_for(llm)
    for _ in range(costs.RECENT):  # a token 0.05 of a plain step, a row 0.05 more
        costs.measure(1, 1, 1.0)
        costs.measure(2, 1, 1.05)
        costs.measure(2, 2, 1.10)
    costs.measure = lambda tokens, rows, seconds: None  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads (one token and batch)"
    )
    parser.add_argument("--cases", nargs="*", help="a subset of the grammars")
    parser.add_argument(
        "--assume-cheap-rows", action="store_true", help="draft costs fixed as on a GPU"
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    llm = load_llama(None, threads=args.threads)
    if args.assume_cheap_rows:
        _assume_cheap_rows(llm)
    failures: list[str] = []
    table = {}
    for name, case in cases().items():
        if args.cases and name not in args.cases:
            continue
        table[name] = run_case(llm, name, case, args.rounds, failures)
        print(f"{name}: done", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    text = markdown(table)
    (args.out / "e2e.md").write_text(text, encoding="utf-8")
    print(text)
    try:
        chart(table, args.out / "e2e.png")
    except ImportError:
        print("matplotlib not installed: no chart (pip install '.[bench]')", file=sys.stderr)
    if failures:
        print(f"FAILED: {len(failures)} problems (above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
