"""Runs one Python-API fuzz target under atheris: python fuzz/atheris_main.py TARGET [libFuzzer
flags and corpus dirs]. TARGET is a module of fuzz/targets (schema_target, regex_target,
token_matcher_target). See fuzz/run_atheris.sh for the budgets and corpus handling."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
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
# ... and through a shell command line built from argv: name the interpreter explicitly.
sys.argv[0] = f"{sys.executable} {Path(__file__).resolve()}"
atheris.instrument_all()
atheris.Setup(sys.argv, target.run_one)
atheris.Fuzz()
