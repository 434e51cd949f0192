#!/usr/bin/env bash
# Builds gbnf-sampler with the optional _cuda module (GBNF_SAMPLER_CUDA=ON) into its own
# virtualenv and runs the GPU tests (CUDA kernel == CPU kernel) plus the CPU kernel tests.
#
# Needs: nvcc (CUDA 12.x or 13.x) on PATH, a GPU and its driver, python3 with numpy, pytest,
# pybind11 and scikit-build-core installed (the venv sees the system site-packages, so this works
# offline). Usage, from anywhere:
#
#   scripts/test-cuda.sh [pytest args...]
#   CUDA_ARCHS=90 scripts/test-cuda.sh      # build for one architecture only (faster)
#
# Without a GPU the module still builds and the GPU tests are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${CUDA_VENV:-build/venv-cuda}
python3 -m venv --system-site-packages "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"

arch_args=()
if [[ -n "${CUDA_ARCHS:-}" ]]; then
  arch_args=("-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS}")
fi
GBNF_SAMPLER_CUDA=ON python -m pip install --quiet --no-deps --no-build-isolation \
  -Cbuild-dir=build/cuda "${arch_args[@]}" .

nvidia-smi -L || echo "nvidia-smi: no GPU listed"
python - <<'PY'
import gbnf_sampler.cuda as c
print("gbnf_sampler._cuda devices:", c.device_count(), c.unavailable_reason())
PY
python -m pytest -q -p no:cacheprovider -rs tests/test_cuda.py tests/test_kernels.py "$@"
