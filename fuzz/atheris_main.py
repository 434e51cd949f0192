"""Runs one Python-API fuzz target under atheris: python fuzz/atheris_main.py TARGET [libFuzzer
flags and corpus dirs]. TARGET is a module of fuzz/targets (schema_target, regex_target,
token_matcher_target). See fuzz/run_atheris.sh for the budgets and corpus handling."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import warnings
from pathlib import Path

import atheris

TARGETS = Path(__file__).resolve().parent / "targets"
sys.path.insert(0, str(TARGETS))

# Every module of the package is imported first (it imports its converters lazily), then all
# loaded Python code is instrumented for coverage: instrument_imports() misses modules loaded
# by an editable install's import hook.
import gbnf_sampler  # noqa: E402

for module in pkgutil.iter_modules(gbnf_sampler.__path__):
    if module.name not in {"demo", "cuda", "torch", "__main__"}:
        importlib.import_module(f"gbnf_sampler.{module.name}")
# libFuzzer re-runs this script for -merge (and -fork) with the flags and directories only, so
# the target name also travels in the environment.
if len(sys.argv) > 1 and (TARGETS / f"{sys.argv[1]}.py").is_file():
    os.environ["GBNF_FUZZ_TARGET"] = sys.argv.pop(1)
target = importlib.import_module(os.environ["GBNF_FUZZ_TARGET"])
# Per-process caches (the Unicode tables behind regex shorthands: 0.3 s plain, over 30 s once
# instrumented) are filled before instrumentation, so no input is charged for them.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gbnf_sampler.Grammar.from_json_schema({"format": "date", "pattern": "\\w\\d\\s."}, strict=False)
# ... and through a shell command line built from argv: name the interpreter explicitly.
sys.argv[0] = f"{sys.executable} {Path(__file__).resolve()}"
# Without coverage feedback (the ASan phase of run_atheris.sh) instrumentation is pure cost:
# instrumented Python under ASan runs some inputs 50x slower, past the per-input timeout.
if not os.environ.get("GBNF_FUZZ_NO_INSTRUMENT"):
    atheris.instrument_all()
atheris.Setup(sys.argv, target.run_one)
atheris.Fuzz()
