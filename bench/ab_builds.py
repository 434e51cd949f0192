"""A/B of two builds in one run: a bench script run alternately by each build's interpreter.

    python bench/ab_builds.py --base /path/to/main/.venv/bin/python [--new .venv/bin/python]
        [--rounds 3] -- bench/triggered_masks.py --vocabs gemma

The script (any bench here that takes ``--json PATH`` and writes ``{group: {metric: number}}``:
bench/triggered_masks.py, bench/mask_warm_replay.py) is run ``--rounds`` times by each
interpreter, base and new alternating (base first in even rounds, new first in odd ones), so
both builds see the same machine load. Each build imports its own ``gbnf_sampler``; the script
and tests/ come from this checkout. Prints, per metric, the median over the rounds of each build
and the ratio new/base (< 1: the new build is faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(python: str, script: list[str]) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        subprocess.run(
            [python, *script, "--json", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        data: dict[str, dict[str, float]] = json.loads(out.read_text())
        return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the base build's python")
    ap.add_argument("--new", default=sys.executable, help="the new build's python")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- script.py [its arguments]")
    args = ap.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"base": [], "new": []}
    for r in range(args.rounds):
        order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
        for which in order:
            runs[which].append(run_once(getattr(args, which), script))
            print(f"round {r + 1}/{args.rounds}: {which} done", file=sys.stderr, flush=True)
    print(f"{' '.join(script)}: median of {args.rounds} rounds each, microseconds\n")
    print("| group | metric | base | new | new/base |\n|---|---|---|---|---|")
    for group, metrics in runs["base"][0].items():
        for metric in metrics:
            base = statistics.median(run[group][metric] for run in runs["base"])
            new = statistics.median(run[group][metric] for run in runs["new"])
            ratio = new / base if base else float("nan")
            print(f"| {group} | {metric} | {base:.2f} | {new:.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
