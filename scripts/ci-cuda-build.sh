#!/usr/bin/env bash
# CI: compiles the optional _cuda extension module (-DGBNF_SAMPLER_CUDA=ON) in its own build
# directory and checks that it links and imports cleanly next to an installed gbnf_sampler:
# no compiler warnings, no unresolved libraries (the CUDA runtime is linked statically), gbnf_sampler.cuda picks it up,
# and tests/test_cuda.py passes (its GPU tests skip, with the reason, on a machine without one).
# Without nvcc it prints "skipped: no nvcc" and succeeds. No GPU is needed.
#
# Usage: PYTHON=/path/to/venv/bin/python scripts/ci-cuda-build.sh
#   PYTHON      interpreter with gbnf_sampler installed from a wheel (not editable), pybind11
#               (installed into it when missing) and pytest (else the tests are not run);
#               default python3
#   CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES (default: the CMakeLists list, Turing to Hopper)
#   CUDA_BUILD_DIR  build directory (default: a temporary one, removed at exit)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}

if ! command -v nvcc >/dev/null 2>&1; then
  echo "ci-cuda-build: skipped: no nvcc on PATH (the _cuda module is not built)"
  exit 0
fi
SECONDS=0
nvcc --version | tail -n 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=${CUDA_BUILD_DIR:-$work/build}

if ! "$python" -c "import pybind11" 2>/dev/null; then
  "$python" -m pip install --quiet pybind11
fi
package=$("$python" -c "import gbnf_sampler, pathlib; print(pathlib.Path(gbnf_sampler.__file__).parent)")
if ! ls "$package"/_core.* >/dev/null 2>&1; then
  echo "ci-cuda-build: $package has no _core module; install gbnf_sampler from a wheel" >&2
  exit 1
fi

arch_args=()
if [[ -n "${CUDA_ARCHS:-}" ]]; then
  arch_args=("-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS}")
fi
generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DGBNF_SAMPLER_CUDA=ON "${arch_args[@]}" \
  -DPython_EXECUTABLE="$("$python" -c 'import sys; print(sys.executable)')" \
  -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$build" --target _cuda --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" 2>&1 \
  | tee "$work/build.log"
# -Wall -Wextra clean, nvcc included (its warnings do not fail the build by themselves).
if grep -qi "warning" "$work/build.log"; then
  echo "ci-cuda-build: the CUDA build printed warnings (above)" >&2
  exit 1
fi
module=$(ls "$build"/_cuda.*)
echo "ci-cuda-build: built $(basename "$module") ($(du -k "$module" | cut -f1) KiB) in ${SECONDS}s"

# Links cleanly: every shared library it needs resolves, and the CUDA runtime is not one of them.
deps=$(ldd "$module")
if grep -q "not found" <<<"$deps"; then
  echo "$deps" >&2
  echo "ci-cuda-build: unresolved shared libraries" >&2
  exit 1
fi
if grep -q "libcudart" <<<"$deps"; then
  echo "ci-cuda-build: _cuda links libcudart dynamically; expected the static runtime" >&2
  exit 1
fi

# Imports cleanly: the installed package plus the new module, in an overlay directory.
overlay="$work/overlay"
mkdir -p "$overlay"
cp -r "$package" "$overlay/gbnf_sampler"
cp "$module" "$overlay/gbnf_sampler/"
PYTHONPATH="$overlay" "$python" - <<'PY'
import gbnf_sampler.cuda as cuda

assert cuda._module is not None, cuda.unavailable_reason()
print(f"ci-cuda-build: gbnf_sampler._cuda imports; devices: {cuda.device_count()}; "
      f"{cuda.unavailable_reason() or 'available'}")
PY
if "$python" -c "import pytest" 2>/dev/null; then
  (cd "$work" && PYTHONPATH="$overlay" "$python" -m pytest -q -p no:cacheprovider -rs \
    "$repo/tests/test_cuda.py")
else
  echo "ci-cuda-build: pytest not installed in $python; tests/test_cuda.py not run"
fi
echo "ci-cuda-build: ok in ${SECONDS}s"
