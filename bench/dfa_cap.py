"""What the string automaton cap (``gs.limits.MAX_DFA_STATES``) costs: time and memory to build,
minimize and print automata of growing size, and to compile the grammar they print.

    python bench/dfa_cap.py [--sizes 5000 10000 20000 40000 80000]

The automata are those of ``[a-z0-9]{L,}`` intersected with a ``maxLength`` of n (a pattern with
a length bound: the commonest way real schemas meet the cap), so the state count grows with n.
Per size: states, time of the subset construction + intersection, of minimization, of printing
the GBNF rules, of ``gs.Grammar.from_gbnf`` + ``gs.compile`` on a byte vocabulary, the peak
Python memory (tracemalloc) and the GBNF size. The cap is lifted for the run.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import gbnf_sampler as gs
from gbnf_sampler.regex import automata, tree
from gbnf_sampler.schema.emit import Rules, dfa_string_rule


def measure(n: int) -> dict[str, float]:
    automata.MAX_DFA_STATES = 10 * n  # lifted: the cap is what is measured
    word = tree.Chars(((0x30, 0x39), (0x61, 0x7A)))
    tracemalloc.start()
    t0 = time.perf_counter()
    pattern = automata.from_regex(tree.seq(tree.char(0x78), tree.rep(word, 0, None)))
    bounded = automata.from_regex(tree.rep(tree.Chars(automata.ALL), 0, n))
    dfa = automata.intersect(pattern, bounded)
    t1 = time.perf_counter()
    dfa = automata.minimize(dfa)
    t2 = time.perf_counter()
    rules = Rules()
    root = dfa_string_rule(rules, dfa, "s")
    text = rules.text(root or '""')
    t3 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    grammar = gs.Grammar.from_gbnf(text)
    vocab = gs.Vocab([bytes([b]) for b in range(256)], eos_ids=[0])
    gs.compile(grammar, vocab, cache=False)
    t4 = time.perf_counter()
    return {
        "states": len(dfa.trans),
        "build_s": t1 - t0,
        "minimize_s": t2 - t1,
        "print_s": t3 - t2,
        "compile_s": t4 - t3,
        "peak_mib": peak / 2**20,
        "gbnf_mib": len(text) / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[5000, 10000, 20000, 40000, 80000])
    args = ap.parse_args()
    print("| states | build s | minimize s | print s | parse+compile s | peak MiB | GBNF MiB |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        r = measure(n)
        print(
            f"| {r['states']:,} | {r['build_s']:.2f} | {r['minimize_s']:.2f} | "
            f"{r['print_s']:.2f} | {r['compile_s']:.2f} | {r['peak_mib']:.0f} | "
            f"{r['gbnf_mib']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
