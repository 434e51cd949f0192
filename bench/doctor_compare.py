"""The grammar doctor of another commit and of this tree, side by side in one process.

    git archive main python/gbnf_sampler | tar -x -C /tmp/before      # the "before" package
    python bench/doctor_compare.py /tmp/before/python [--rules 5000] [--repeat 5]
    python bench/doctor_compare.py /tmp/before/python --gbnf-dir DIR  # every DIR/*.gbnf once

The other commit's ``gbnf_sampler`` package is imported under the name ``gbnf_before`` (the
package uses relative imports only) and shares this build's ``_core`` extension, so only the
Python code differs: compare commits whose C++ is the same. Each input is timed with both, one
call after the other (CPU time of the process, ``time.process_time``, the collector as
``diagnose`` leaves it), so the load of a shared machine hits both alike; the ratio is
before / after. For the generated grammar (bench_parse.generated_grammar): the median of
``--repeat`` runs, default checks and ``--dialect llama.cpp``. For a folder (e.g. the SchemaStore
grammars written by ``bench/doctor_snapshot.py export``): p50/p90/p99/max of each side and the
slowest inputs.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import gbnf_sampler
import gbnf_sampler._core
from gbnf_sampler.doctor import diagnose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_parse import generated_grammar

Diagnose = Callable[..., Any]


def load_before(folder: Path) -> Diagnose:
    """``diagnose`` of the ``gbnf_sampler`` package under ``folder``, as ``gbnf_before``."""
    sys.modules["gbnf_before._core"] = gbnf_sampler._core
    init = folder / "gbnf_sampler" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "gbnf_before", init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules["gbnf_before"] = module
    spec.loader.exec_module(module)
    doctor = importlib.import_module("gbnf_before.doctor")
    return doctor.diagnose  # type: ignore[no-any-return]


def _ms(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return (time.process_time() - start) * 1e3


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def compare_generated(before: Diagnose, rules: int, repeat: int) -> None:
    text = generated_grammar(rules)
    print(f"generated grammar: {rules} rules, {len(text)} bytes; median of {repeat} (ms cpu)")
    for label, dialect in (("default checks", None), ("--dialect llama.cpp", "llama.cpp")):
        old, new = [], []
        for _ in range(repeat):
            old.append(_ms(lambda: before(text, dialect=dialect)))  # noqa: B023
            new.append(_ms(lambda: diagnose(text, dialect=dialect)))  # noqa: B023
        a, b = statistics.median(old), statistics.median(new)
        print(f"  {label:<22} before {a:8.1f}  after {b:8.1f}  ratio {a / b:5.2f}x")


def compare_folder(before: Diagnose, folder: Path, dialect: str | None) -> None:
    paths = sorted(folder.glob("*.gbnf"))
    old: list[float] = []
    new: list[float] = []
    rows: list[tuple[float, float, str]] = []
    for i, path in enumerate(paths):
        text = path.read_text(encoding="utf-8")
        a = _ms(lambda: before(text, dialect=dialect))  # noqa: B023
        b = _ms(lambda: diagnose(text, dialect=dialect))  # noqa: B023
        old.append(a)
        new.append(b)
        rows.append((a, b, path.stem))
        if (i + 1) % 100 == 0:
            print(f"  ... {i + 1} of {len(paths)}", flush=True)
    print(f"{len(paths)} grammars in {folder} (dialect {dialect}), ms cpu:")
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)):
        a, b = _percentile(old, q), _percentile(new, q)
        print(f"  {name}  before {a:8.1f}  after {b:8.1f}  ratio {a / max(b, 1e-9):5.2f}x")
    a, b = sum(old), sum(new)
    print(f"  total before {a:8.0f}  after {b:8.0f}  ratio {a / b:5.2f}x")
    for a, b, name in sorted(rows)[-10:]:
        print(f"  slow: before {a:8.1f}  after {b:8.1f}  ({a / max(b, 1e-9):4.2f}x)  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="folder holding the other gbnf_sampler package")
    parser.add_argument("--rules", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gbnf-dir", type=Path, help="time every *.gbnf of this folder instead")
    parser.add_argument("--dialect", default=None, help="with --gbnf-dir: e.g. llama.cpp")
    args = parser.parse_args()
    sys.setrecursionlimit(10000)
    before = load_before(args.before)
    if args.gbnf_dir is not None:
        compare_folder(before, args.gbnf_dir, args.dialect)
    else:
        compare_generated(before, args.rules, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
