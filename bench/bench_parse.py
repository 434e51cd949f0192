"""Parse + analysis time of large grammars, and a check that parsing is linear.

python -m pytest bench/bench_parse.py --benchmark-enable     # pytest-benchmark table
python bench/bench_parse.py                                  # linearity table (10x sizes)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import pytest

import gbnf_sampler as gs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py


def generated_grammar(n_rules: int) -> str:
    """A grammar of n_rules rules mixing every construct, each rule using the next few."""
    lines = ["root ::= r0"]
    for i in range(n_rules):
        a, b = i + 1, i + 2
        if b < n_rules:
            body = (
                f'"k{i}" ws r{a} | [a-z_]{{1,8}} ("," ws r{b})* | "\\u00e9\\x41"? r{a} '
                f'| ( "[" ws r{b} ws "]" )+'
            )
        else:
            body = f'"leaf{i}" [0-9]+ | [^"\\\\]{{2,5}}'
        lines.append(f"r{i} ::= {body}  # rule {i}")
    lines.append("ws ::= [ \\t\\n]*")
    return "\n".join(lines) + "\n"


def _llama_grammar(name: str) -> bytes:
    from assets import AssetUnavailable, llama_cpp_grammars

    try:
        return llama_cpp_grammars()[name].read_bytes()
    except AssetUnavailable as e:
        pytest.skip(f"llama.cpp grammars unavailable: {e}")


@pytest.mark.benchmark(group="parse")
@pytest.mark.parametrize("name", ["c", "json"])
def test_parse_llama_grammar(benchmark, name: str) -> None:  # type: ignore[no-untyped-def]
    text = _llama_grammar(name)
    grammar = benchmark(gs.Grammar.from_gbnf, text)
    assert grammar.rules


@pytest.mark.benchmark(group="parse")
@pytest.mark.parametrize("n_rules", [500, 5000])
def test_parse_generated(benchmark, n_rules: int) -> None:  # type: ignore[no-untyped-def]
    text = generated_grammar(n_rules)
    grammar = benchmark(gs.Grammar.from_gbnf, text)
    assert len(grammar.rules) == n_rules + 2


def _median_seconds(text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        gs.Grammar.from_gbnf(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    print("| rules | bytes | median parse ms | ms per 1000 rules |")
    print("|---:|---:|---:|---:|")
    sizes = [500, 5000, 50000]
    for n in sizes:
        text = generated_grammar(n)
        seconds = _median_seconds(text, repeats=7 if n < 50000 else 3)
        print(f"| {n} | {len(text)} | {seconds * 1e3:.2f} | {seconds * 1e6 / n:.3f} |")
    for name in ["c", "json"]:
        try:
            from assets import llama_cpp_grammars

            path = Path(llama_cpp_grammars()[name])
        except Exception as e:
            print(f"{name}.gbnf unavailable: {e}", file=sys.stderr)
            continue
        text = path.read_text(encoding="utf-8")
        print(f"| {name}.gbnf | {len(text)} | {_median_seconds(text, 51) * 1e3:.3f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
