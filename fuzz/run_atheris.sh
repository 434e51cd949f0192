#!/usr/bin/env bash
# Runs the Python-API fuzz targets (fuzz/targets/*_target.py) under atheris for a fixed budget
# each, against the AddressSanitizer + UBSan build of the extension (its own virtualenv, like
# scripts/test-sanitized.sh). Usage: fuzz/run_atheris.sh [seconds per target, default 60] [target...]
#   ATHERIS_NO_ASAN=1   run on the current Python environment's (normal) build instead.
# Targets: schema_target regex_target token_matcher_target. New interesting inputs are merged
# into fuzz/corpus/<target>/ and crashes are written to fuzz/regressions/<target>/; both are
# replayed by tests/test_fuzz_regressions.py (no atheris needed there).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
if [[ $# -gt 0 ]]; then targets=("$@"); else targets=(schema_target regex_target token_matcher_target); fi

if [[ -z "${ATHERIS_NO_ASAN:-}" ]]; then
  venv=${SANITIZE_VENV:-build/venv-sanitize}
  if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import atheris, gbnf_sampler" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet scikit-build-core pybind11 atheris
    "$venv/bin/python" -m pip install --quiet --no-build-isolation \
      -Ccmake.define.GBNF_SAMPLER_SANITIZE=ON -Ccmake.build-type=RelWithDebInfo \
      -Cbuild-dir=build/sanitize ".[test]"
  fi
  python=$venv/bin/python
  # As in scripts/test-sanitized.sh: the interpreter is not instrumented, so gcc's ASan runtime
  # (and libstdc++ with it) is preloaded. atheris' own libFuzzer then runs beside it.
  export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  python=python3
fi

for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  crashes=fuzz/regressions/$target
  work=$(mktemp -d)
  mkdir -p "$corpus" "$crashes"
  cp "$corpus"/* "$work/" 2>/dev/null || true
  # The RSS watchdog thread together with the matcher's thread pool makes libFuzzer stop with
  # "run interrupted" under atheris; that target runs without it (its own limits bound memory).
  rss=2048
  [[ $target == token_matcher_target ]] && rss=0
  echo "== $target: ${seconds}s"
  "$python" fuzz/atheris_main.py "$target" "$work" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb="$rss" -max_len=4096 -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)|ERROR|Uncaught|SUMMARY" || true
  # Keep only inputs that add coverage.
  fresh=$(mktemp -d)
  "$python" fuzz/atheris_main.py "$target" -merge=1 "$fresh" "$work" >/dev/null 2>&1 || true
  rm -f "$corpus"/*
  cp "$fresh"/* "$corpus/" 2>/dev/null || true
  rm -rf "$work" "$fresh"
  echo "corpus: $(ls "$corpus" | wc -l) inputs; crashes: $(ls "$crashes" | wc -l)"
done
