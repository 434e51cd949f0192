#!/usr/bin/env bash
# Builds the extension with AddressSanitizer + UndefinedBehaviorSanitizer into its own virtualenv
# and runs the test suite against it. Usage: scripts/test-sanitized.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${SANITIZE_VENV:-build/venv-sanitize}
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet scikit-build-core pybind11
python -m pip install --quiet --no-build-isolation \
  -Ccmake.define.GBNF_SAMPLER_SANITIZE=ON -Ccmake.build-type=RelWithDebInfo \
  -Cbuild-dir=build/sanitize ".[${SANITIZE_EXTRAS:-test}]"

# The interpreter is not instrumented, so the ASan runtime must be loaded first, and libstdc++
# with it (else ASan cannot find the real __cxa_throw and aborts on the first C++ exception).
# Python's own allocations look like leaks to LeakSanitizer; leaks are not what this run checks.
export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
python -m pytest -q -p no:cacheprovider "$@"
