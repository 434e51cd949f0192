#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a fixed budget.
# Usage: fuzz/run.sh [seconds per target, default 60] [target...]
# New interesting inputs are merged into fuzz/corpus/<target>/ (kept small with -merge=1); a
# crash is written to fuzz/regressions/<target>/ and replayed by tests/test_fuzz_regressions.py.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("${@:-parser_fuzzer}")

build=build/fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DGBNF_SAMPLER_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null
cmake --build "$build" --target "${targets[@]}" >/dev/null

for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  crashes=fuzz/regressions/$target
  work=$(mktemp -d)
  mkdir -p "$corpus" "$crashes"
  # Seeds: the committed corpus plus the example grammars.
  cp examples/*.gbnf "$work/" 2>/dev/null || true
  cp "$corpus"/* "$work/" 2>/dev/null || true
  echo "== $target: ${seconds}s"
  "$build/$target" "$work" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)|ERROR|SUMMARY" || true
  # Keep only inputs that add coverage.
  fresh=$(mktemp -d)
  "$build/$target" -merge=1 "$fresh" "$work" >/dev/null 2>&1 || true
  rm -f "$corpus"/*
  cp "$fresh"/* "$corpus/" 2>/dev/null || true
  echo "corpus: $(ls "$corpus" | wc -l) inputs; crashes: $(ls "$crashes" | wc -l)"
done
