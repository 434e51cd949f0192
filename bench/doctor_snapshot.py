"""Snapshot of the grammar doctor's findings, to prove a speed change keeps every finding.

    python bench/doctor_snapshot.py export DIR        # the inputs: DIR/*.gbnf
    python bench/doctor_snapshot.py run DIR OUT       # `check --json` on each, with and without
                                                      # --dialect llama.cpp: OUT/<name>[.llama].json
    diff -r OUT_BEFORE OUT_AFTER                      # must be empty

The inputs: the generated 5,000-rule grammar of bench_parse.py, llama.cpp's example grammars
(tests/assets.py) and the GBNF of every SchemaStore schema that converts (as bench/doctor.py).
``run`` prints the CPU milliseconds of each check beside its name (OUT/times.tsv).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import time
from pathlib import Path

from gbnf_sampler.cli.main import main as cli_main

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))


def export(folder: Path) -> None:
    from assets import llama_cpp_grammars
    from bench_parse import generated_grammar
    from doctor import _corpus_texts

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "generated-5000.gbnf").write_text(generated_grammar(5000))
    for stem, path in llama_cpp_grammars().items():
        shutil.copy(path, folder / f"llama-{stem}.gbnf")
    sys.setrecursionlimit(10000)
    texts, size = _corpus_texts(0, [])
    for name, text in texts.items():
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        (folder / f"schema-{safe}.gbnf").write_text(text)
    print(f"{len(texts)} of {size} schemas, {len(list(folder.glob('*.gbnf')))} inputs")


def run(folder: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    times = []
    for path in sorted(folder.glob("*.gbnf")):
        for suffix, extra in (("", []), (".llama", ["--dialect", "llama.cpp"])):
            buffer, errors = io.StringIO(), io.StringIO()
            start = time.process_time()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(errors):
                status = cli_main(["check", "--json", *extra, path.name])
            ms = (time.process_time() - start) * 1e3
            text = f"exit {status}\n{buffer.getvalue()}{errors.getvalue()}"
            (out / f"{path.stem}{suffix}.json").write_text(text)
            times.append(f"{path.stem}{suffix}\t{ms:.1f}")
            print(f"{ms:9.1f} ms  {path.stem}{suffix}", flush=True)
    (out / "times.tsv").write_text("\n".join(times) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["export", "run"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("out", type=Path, nargs="?")
    args = parser.parse_args()
    if args.command == "export":
        export(args.folder)
    else:
        folder = args.folder.resolve()
        out = (args.out or Path("doctor-snapshot")).resolve()
        with contextlib.chdir(folder):
            run(folder, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
