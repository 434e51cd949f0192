#!/usr/bin/env bash
# Real SGLang and vLLM servers on a GPU with gbnf-sampler selected, then with xgrammar: an
# OpenAI client sends json_schema, regex and GBNF requests, validates every output (jsonschema,
# re.fullmatch, our GBNF matcher) and prints completion tokens/s per engine and backend.
# Never required by CI. Unattended, about 6-8 minutes with pip-installed engines:
#
#   MODEL=/path/to/small-instruct-model bash scripts/test-engines-gpu.sh
#
# Needs: a CUDA GPU, `pip install -e ".[sglang]"` and/or `".[vllm]"` (an engine that is not
# importable is reported and skipped), openai and jsonschema. SGLang: --grammar-backend
# gbnf_sampler (our plugin). vLLM (unpatched): our logits processor, grammars in vllm_xargs.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${MODEL:?set MODEL to a local model directory (e.g. Qwen2.5-0.5B-Instruct)}"
PORT="${PORT:-30111}"
REQUESTS="${REQUESTS:-8}"
SERVER_PID=""
cleanup() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }
trap cleanup EXIT

wait_ready() {  # up to 240 s for the server's /v1/models
  for _ in $(seq 1 240); do
    if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null; then return 0; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "server exited"; return 1; fi
    sleep 1
  done
  echo "server not ready after 240 s"; return 1
}

run_client() {  # $1 engine, $2 backend
  python - "$1" "$2" "$PORT" "$MODEL" "$REQUESTS" <<'EOF'
import json, re, sys, time
import jsonschema, openai
import gbnf_sampler as gs
engine, backend, port, model, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none")
schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
          "age": {"type": "integer", "minimum": 0, "maximum": 130}}, "required": ["name", "age"],
          "additionalProperties": False}
regex = r"(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
gbnf = 'root ::= "Answer: " ("yes" | "no") ", because " [a-z ]{5,40} "."'
def extra(kind):
    if engine == "vllm" and backend == "gbnf_sampler":
        return {"vllm_xargs": {"json": {"json_schema": json.dumps(schema)}, "regex": {"regex": regex},
                               "gbnf": {"gbnf": gbnf}}[kind]}
    if engine == "vllm":
        return {"structured_outputs": {"json": {"json": schema}, "regex": {"regex": regex}, "gbnf": {"grammar": gbnf}}[kind]}
    return {"json": {"json_schema": json.dumps(schema)}, "regex": {"regex": regex}, "gbnf": {"ebnf": gbnf}}[kind]
def check(kind, text):
    if kind == "json": jsonschema.validate(json.loads(text), schema)
    elif kind == "regex": assert re.fullmatch(regex, text), text
    else:
        m = gs.Matcher(gs.Grammar.from_gbnf(gbnf)); assert m.accept_bytes(text.encode()) and m.can_terminate(), text
tokens, seconds, bad = 0, 0.0, 0
for kind, prompt in [("json", "Invent a person as JSON."), ("regex", "A date:"), ("gbnf", "Is the sky blue?")]:
    for i in range(n):
        start = time.perf_counter()
        out = client.completions.create(model=model, prompt=prompt, max_tokens=96, temperature=0.8,
                                        seed=i, extra_body=extra(kind))
        seconds += time.perf_counter() - start
        tokens += out.usage.completion_tokens
        try: check(kind, out.choices[0].text)
        except Exception as e: bad += 1; print(f"  INVALID {engine}/{backend}/{kind}: {e!r}")
print(f"RESULT {engine:7} {backend:13} {tokens / seconds:8.1f} tokens/s  invalid outputs: {bad}")
sys.exit(1 if bad else 0)
EOF
}

status=0
for engine in sglang vllm; do
  if ! python -c "import $engine" 2>/dev/null; then echo "SKIP $engine: not importable"; continue; fi
  for backend in gbnf_sampler xgrammar; do
    echo "== $engine with $backend"
    if [ "$engine" = sglang ]; then
      python -m sglang.launch_server --model-path "$MODEL" --port "$PORT" \
        --grammar-backend "$backend" --mem-fraction-static 0.5 >"/tmp/gs-$engine-$backend.log" 2>&1 &
    elif [ "$backend" = gbnf_sampler ]; then
      vllm serve "$MODEL" --port "$PORT" --gpu-memory-utilization 0.5 \
        --logits-processors gbnf_sampler.vllm:GrammarLogitsProcessor >"/tmp/gs-$engine-$backend.log" 2>&1 &
    else
      vllm serve "$MODEL" --port "$PORT" --gpu-memory-utilization 0.5 \
        --structured-outputs-config.backend xgrammar >"/tmp/gs-$engine-$backend.log" 2>&1 &
    fi
    SERVER_PID=$!
    if wait_ready; then run_client "$engine" "$backend" || status=1; else tail -20 "/tmp/gs-$engine-$backend.log"; status=1; fi
    cleanup; SERVER_PID=""
  done
done
exit $status
