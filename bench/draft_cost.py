"""What a jump-forward draft token costs, as a share of a one-token decode, on the embedded model.

    python bench/draft_cost.py [--threads 1] [--rounds 9]

A draft token evaluated in the batch after the sampled token costs its share of the batch (the
transformer body) and, when the model must check it, a row of logits (the output layer: on
Gemma 3 270M with its 262k-token vocabulary, most of a decode). Batches of 1-7 tokens at a
fixed position are timed interleaved, round by round (process CPU time, median over rounds),
each with every row of logits ("checked") and with only the last one ("unchecked": tokens the
grammar allows alone). Prints each batch's cost relative to one token with its row, and the
marginal cost of one more checked / unchecked token. ``StepCosts.PRIOR_TOKEN`` and
``StepCosts.PRIOR_ROWS`` in ``gbnf_sampler/llama/step_costs.py`` (the costs jump-forward starts
from, before it has timed steps of its own) come from this table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from gbnf_sampler.llama.models import load_llama
from gbnf_sampler.llama.speculative import EvaluatedTokens

TEXT = b'{"name": "Ann", "age": 31, "city": "Paris", "hobbies": ["chess", "hiking"]}'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    llm = load_llama(None, threads=args.threads, progress=False)
    evaluated = EvaluatedTokens(llm)
    tokens = [int(t) for t in llm.tokenize(TEXT, add_bos=True, special=False)]
    llm.reset()
    llm.eval(tokens[:8])
    start = evaluated.length
    shapes = [(n, checked) for n in range(1, 8) for checked in (True, False) if n > 1 or checked]
    times: dict[tuple[int, bool], list[float]] = {shape: [] for shape in shapes}
    for _ in range(args.rounds):
        for n, checked in shapes:
            evaluated.truncate(start)
            rows = [checked] * (n - 1) + [True]
            begin = time.process_time()
            evaluated.decode(tokens[8 : 8 + n], rows)
            times[(n, checked)].append(time.process_time() - begin)
    one = statistics.median(times[(1, True)])
    print("| batch | rows of logits | CPU ms | vs one token |")
    print("|---|---|---|---|")
    for n, checked in shapes:
        cost = statistics.median(times[(n, checked)])
        print(f"| {n} | {n if checked else 1} | {cost * 1000:.1f} | {cost / one:.2f}x |")
    checked_cost = statistics.median(times[(2, True)]) / one - 1
    unchecked_cost = statistics.median(times[(2, False)]) / one - 1
    print(f"\none more draft token: checked {checked_cost:.2f}, unchecked {unchecked_cost:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
