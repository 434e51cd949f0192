#!/usr/bin/env bash
# Builds the extension with ThreadSanitizer into its own virtualenv and runs the concurrency
# tests and the thread stress script under it.
# Usage: scripts/test-tsan.sh [stress seconds, default 30] [extra pytest args...]
#   TSAN_VENV (default build/venv-tsan), TSAN_STRESS_THREADS (default 8).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true

venv=${TSAN_VENV:-build/venv-tsan}
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet scikit-build-core pybind11
python -m pip install --quiet --no-build-isolation \
  -Ccmake.define.GBNF_SAMPLER_TSAN=ON -Ccmake.build-type=RelWithDebInfo \
  -Cbuild-dir=build/tsan ".[test]"

# CPython is not built with TSan: the runtime is preloaded (libstdc++ with it, as for ASan), and
# scripts/tsan.supp silences reports whose stacks lie wholly in the uninstrumented interpreter
# and numpy (their synchronization is invisible to TSan); reports in gbnf_sampler stay on.
export LD_PRELOAD="$(g++ -print-file-name=libtsan.so) $(g++ -print-file-name=libstdc++.so)"
TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=1 second_deadlock_stack=1 \
report_signal_unsafe=0 ${TSAN_OPTIONS:-}"
export TSAN_OPTIONS
echo "== pytest (concurrency and batch tests) under TSan"
# -s: a TSan report (printed to stderr, then exit 66) must not be swallowed by capture.
python -m pytest -q -s -p no:cacheprovider tests/test_concurrency.py tests/test_mask_batch.py \
  tests/test_token_matcher.py "$@"
echo "== bench/stress_threads.py ${seconds}s under TSan"
python bench/stress_threads.py --threads "${TSAN_STRESS_THREADS:-8}" --seconds "$seconds"
