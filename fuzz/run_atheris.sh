#!/usr/bin/env bash
# Runs the Python-API fuzz targets (fuzz/targets/*_target.py) under atheris for a fixed budget
# each. Usage: fuzz/run_atheris.sh [seconds per target, default 60] [target...]
# Targets: schema_target regex_target token_matcher_target (default: all three).
#
# Two phases per target:
#  1. coverage-guided, on the Python environment this script is run from (it needs atheris and
#     gbnf_sampler installed: pip install atheris);
#  2. the grown corpus replayed and mutated for half the budget against the AddressSanitizer +
#     UBSan build (its own virtualenv, build/venv-sanitize, like scripts/test-sanitized.sh).
#     Coverage feedback is lost in this phase: gcc's preloaded libasan exports the
#     __sanitizer_cov_* hooks atheris registers its counters with, so they go to ASan's no-op
#     stubs; the mutations are blind, the memory checks are not. ATHERIS_NO_ASAN=1 skips it.
# New interesting inputs are merged into fuzz/corpus/<target>/ and crashes are written to
# fuzz/regressions/<target>/; tests/test_fuzz_regressions.py replays both (no atheris needed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=(schema_target regex_target token_matcher_target)
if [[ $# -gt 0 ]]; then targets=("$@"); fi
python=${ATHERIS_PYTHON:-python3}

# The sanitized virtualenv, (re)installed from this checkout once per run (incremental build).
asan_python() {
  local venv=${SANITIZE_VENV:-build/venv-sanitize}
  if [[ -z "${asan_ready:-}" ]]; then
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip scikit-build-core pybind11 atheris >&2
    "$venv/bin/python" -m pip install --quiet --no-build-isolation \
      -Ccmake.define.GBNF_SAMPLER_SANITIZE=ON -Ccmake.build-type=RelWithDebInfo \
      -Cbuild-dir=build/sanitize ".[test]" >&2
    asan_ready=1
  fi
  sanitized=$venv/bin/python
}

# run PYTHON TARGET CORPUS SECONDS: one atheris run; prints its statistics.
run() {
  # The RSS watchdog thread together with the matcher's thread pool makes libFuzzer stop with
  # "run interrupted" under atheris; that target runs without it (its own limits bound memory).
  local rss=2048
  [[ $2 == token_matcher_target ]] && rss=0
  "$1" fuzz/atheris_main.py "$2" "$3" -max_total_time="$4" -timeout=10 -rss_limit_mb="$rss" \
    -max_len=4096 -artifact_prefix="fuzz/regressions/$2/" -print_final_stats=1 2>&1 |
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|ERROR|Uncaught|SUMMARY|Test unit" || true
}

for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  work=$(mktemp -d)
  mkdir -p "$corpus" "fuzz/regressions/$target"
  cp "$corpus"/* "$work/" 2>/dev/null || true
  echo "== $target: ${seconds}s coverage-guided"
  run "$python" "$target" "$work" "$seconds"
  if [[ -z "${ATHERIS_NO_ASAN:-}" ]]; then
    echo "== $target: $((seconds / 2))s under ASan + UBSan (corpus replay, blind mutation)"
    asan_python
    LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)" \
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 GBNF_FUZZ_NO_INSTRUMENT=1 \
      run "$sanitized" "$target" "$work" "$((seconds / 2))"
  fi
  # Keep only inputs that add coverage (measured on the coverage-guided build).
  fresh=$(mktemp -d)
  "$python" fuzz/atheris_main.py "$target" -merge=1 "$fresh" "$work" >/dev/null 2>&1 || true
  rm -f "$corpus"/*
  cp "$fresh"/* "$corpus/" 2>/dev/null || true
  rm -rf "$work" "$fresh"
  echo "corpus: $(ls "$corpus" | wc -l) inputs; crashes: $(ls "fuzz/regressions/$target" | wc -l)"
done
