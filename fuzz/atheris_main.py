"""Runs one Python-API fuzz target under atheris: python fuzz/atheris_main.py TARGET [libFuzzer
flags and corpus dirs]. TARGET is a module of fuzz/targets (schema_target, regex_target,
token_matcher_target). See fuzz/run_atheris.sh for the budgets and corpus handling."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent / "targets"))

# Every module of the package is imported first (it imports its converters lazily), then all
# loaded Python code is instrumented for coverage: instrument_imports() misses modules loaded
# by an editable install's import hook.
import gbnf_sampler

for module in pkgutil.iter_modules(gbnf_sampler.__path__):
    if module.name not in {"demo", "cuda", "torch", "__main__"}:
        importlib.import_module(f"gbnf_sampler.{module.name}")
target = importlib.import_module(sys.argv.pop(1))
atheris.instrument_all()
atheris.Setup(sys.argv, target.run_one)
atheris.Fuzz()
