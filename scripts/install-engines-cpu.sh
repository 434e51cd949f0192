#!/usr/bin/env bash
# Installs SGLang and vLLM on a CPU machine, into the active environment, for tests/test_sglang.py,
# tests/test_vllm.py and bench/engine_masks.py (which fail under CI=true when an engine cannot be
# imported). The engines' own requirements pin CUDA torch builds and GPU kernels, so their wheels
# go in without dependencies, next to the CPU torch, with only what importing their grammar code
# needs (versions as tested; torch is held at the CPU build by a constraint). About 375 MB of
# downloads and +2.3 GB in site-packages (triton 1.0 GB, vllm 0.88 GB, sglang 0.22 GB).
#
#   . .venv/bin/activate && bash scripts/install-engines-cpu.sh
set -euo pipefail

pins=$(mktemp)
trap 'rm -f "$pins"' EXIT
echo "torch==2.13.0" >"$pins"

python -m pip install --quiet torch==2.13.0 transformers==5.24.0
python -m pip install --quiet --no-deps sglang==0.5.23 vllm==0.33.0 xgrammar==0.2.8 \
  apache-tvm-ffi==0.1.11 llguidance==1.7.6
python -m pip install --quiet -c "$pins" triton==3.9.0 orjson==3.13.0 psutil==7.2.2 \
  pybase64==1.5.1 requests==2.34.2 pillow==13.0.0 msgspec==0.23.0 pyzmq==27.3.0 \
  starlette==1.10.0 aiohttp==3.14.5 ipython==9.18.1 openai==3.51.0 \
  partial-json-parser==0.2.1.1.post7 cbor2==6.3.0 fastapi==0.165.0 openai-harmony==0.0.8 \
  cachetools==8.0.2 prometheus-client==0.26.0 cloudpickle==3.1.3 uvloop==0.23.0

python - <<'EOF'
import importlib

for name in ("sglang.srt.constrained.base_grammar_backend", "vllm.v1.structured_output"):
    importlib.import_module(name)
    print(f"ok: {name}")
EOF
