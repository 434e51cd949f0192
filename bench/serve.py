"""Serving benchmark: ``gbnf-sampler serve`` under concurrent clients, each with its own JSON
Schema, against the same run unconstrained and against llama-cpp-python's own server.

    pip install "llama-cpp-python[server]==0.3.36"     # for the llama-cpp-python server column
    python bench/serve.py [--concurrency 1,2,4,8] [--max-tokens 64] [--rounds 2]
                          [--threads N] [--out bench/results] [--skip-llama-cpp-python]

Three configurations, run interleaved round by round (in ABBA order, so that a machine whose
speed drifts favours none) on servers started side by side (each a
subprocess with the same model, the embedded Gemma 3 270M, and the same thread count):

  unconstrained        ours, ``ignore_eos`` (every request runs to max_tokens)
  ours: schema         ours, ``/v1/completions`` with ``guided_json`` = the client's schema
  llama-cpp-python     ``python -m llama_cpp.server`` with ``grammar`` = the same schema as GBNF

Every schema demands at least 64 array items, so no answer can end before ``--max-tokens`` and
all three produce the same number of tokens. Reported per concurrency: aggregate tokens/s (all
completion tokens / wall time of the rounds), p50/p99 request latency, and the ratios; then the
time to first token of a never-seen schema vs unconstrained (streamed, concurrency 1, median of
``--ttft-runs``). Every constrained output is checked to be a prefix our Matcher accepts. Writes
serve.md and serve.png (matplotlib) into --out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

import gbnf_sampler as gs
from gbnf_sampler.llama.models import default_model_path

# Our server with jump-forward off, and verifying every drafted token (--jump-forward).
JUMP_FORWARD_VARIANTS = {
    "ours: schema, max-draft 0": ["--max-draft", "0"],
    "ours: schema, draft-all": ["--draft-all"],
}
PROMPT = "Inventory export, one JSON document:\n"
WORDS = ["apples", "bolts", "cables", "drills", "essays", "fabric", "gears", "hinges"]


def schema_for(name: str) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "maxLength": 12},
            "count": {"type": "integer", "minimum": 0, "maximum": 999},
        },
        "required": ["sku", "count"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {name: {"type": "array", "items": item, "minItems": 64}},
        "required": [name],
        "additionalProperties": False,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(command: list[str], port: int, ready_path: str) -> Iterator[str]:
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {' '.join(command)}")
            try:
                if httpx.get(url + ready_path, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {' '.join(command)}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _body(mode: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {"prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0}
    if mode == "unconstrained":
        body["ignore_eos"] = True
    elif mode.startswith("ours: schema"):
        body["guided_json"] = schema
    else:
        body["grammar"] = gs.Grammar.from_json_schema(schema).to_gbnf()
    return body


async def _one(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> tuple[float, int, str]:
    start = time.perf_counter()
    response = await client.post(url + "/v1/completions", json=body)
    response.raise_for_status()
    out = response.json()
    return time.perf_counter() - start, out["usage"]["completion_tokens"], out["choices"][0]["text"]


async def _round(
    url: str, bodies: list[dict[str, Any]]
) -> tuple[float, list[tuple[float, int, str]]]:
    async with httpx.AsyncClient(timeout=3600) as client:
        start = time.perf_counter()
        results = await asyncio.gather(*(_one(client, url, b) for b in bodies))
        return time.perf_counter() - start, list(results)


def _check(text: str, schema: dict[str, Any]) -> None:
    matcher = gs.Matcher(gs.Grammar.from_json_schema(schema))
    if not matcher.accept_bytes(text.encode("utf-8")):
        raise AssertionError(f"output outside the schema's language: {text[:200]!r}")


def run_throughput(urls: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, dict[int, dict[str, Any]]] = {m: {} for m in urls}
    for mode, url in urls.items():  # warm-up: first-request costs are not measured
        asyncio.run(_round(url, [_body(mode, schema_for("warm_up"), 8)]))
    for c in args.concurrency:
        schemas = [schema_for(f"{WORDS[i % len(WORDS)]}_{c}_{i}") for i in range(c)]
        totals = {m: {"tokens": 0, "wall": 0.0, "latencies": []} for m in urls}
        for r in range(args.rounds):
            order = list(urls.items())
            for mode, url in order if r % 2 == 0 else order[::-1]:  # ABBA: drift cancels
                bodies = [_body(mode, s, args.max_tokens) for s in schemas]
                wall, outs = asyncio.run(_round(url, bodies))
                for (latency, tokens, text), schema in zip(outs, schemas, strict=True):
                    if mode != "unconstrained":
                        _check(text, schema)
                    totals[mode]["tokens"] += tokens
                    totals[mode]["latencies"].append(latency)
                totals[mode]["wall"] += wall
        for mode, t in totals.items():
            lat = sorted(t["latencies"])
            results[mode][c] = {
                "tokens_per_s": t["tokens"] / t["wall"],
                "p50": statistics.median(lat),
                "p99": lat[min(len(lat) - 1, round(0.99 * (len(lat) - 1)))],
                "tokens": t["tokens"],
            }
            print(f"c={c} {mode:18s} {results[mode][c]['tokens_per_s']:7.1f} tok/s", flush=True)
    return results


async def _ttft(url: str, body: dict[str, Any]) -> float:
    async with httpx.AsyncClient(timeout=3600) as client:
        start = time.perf_counter()
        async with client.stream(
            "POST", url + "/v1/completions", json={**body, "stream": True}
        ) as r:
            async for line in r.aiter_lines():
                done = not line.startswith("data: ") or line == "data: [DONE]"
                if not done and json.loads(line[6:])["choices"][0]["text"]:
                    return time.perf_counter() - start
    raise RuntimeError("no token streamed")


def run_ttft(url: str, runs: int) -> dict[str, float]:
    fresh, plain = [], []
    for _ in range(runs):
        schema = schema_for(f"never_seen_{uuid.uuid4().hex[:8]}")
        fresh.append(asyncio.run(_ttft(url, _body("ours: schema", schema, 4))))
        plain.append(asyncio.run(_ttft(url, _body("unconstrained", schema, 4))))
    return {
        "never-seen schema": statistics.median(fresh),
        "unconstrained": statistics.median(plain),
    }


def table(results: dict[str, Any], ttft: dict[str, float], args: argparse.Namespace) -> str:
    modes = list(results)
    lines = [
        f"Gemma 3 270M Q4_K_M, {args.threads} threads, {args.max_tokens} tokens per request, "
        f"{args.rounds} rounds per concurrency, one schema per client.",
        "",
        "| clients | "
        + " | ".join(f"{m} tok/s" for m in modes)
        + " | ours / unconstrained | ours / llama-cpp-python | "
        + " | ".join(f"{m} p50 / p99 s" for m in modes)
        + " |",
        "|---" * (1 + 2 * len(modes) + 2) + "|",
    ]
    for c in args.concurrency:
        row = [str(c)] + [f"{results[m][c]['tokens_per_s']:.1f}" for m in modes]
        ours = results["ours: schema"][c]["tokens_per_s"]
        row.append(f"{ours / results['unconstrained'][c]['tokens_per_s']:.2f}x")
        other = results.get("llama-cpp-python", {}).get(c)
        row.append(f"{ours / other['tokens_per_s']:.2f}x" if other else "n/a")
        row += [f"{results[m][c]['p50']:.2f} / {results[m][c]['p99']:.2f}" for m in modes]
        lines.append("| " + " | ".join(row) + " |")
    ratio = ttft["never-seen schema"] / ttft["unconstrained"]
    lines += [
        "",
        f"Time to first token (median of {args.ttft_runs}, concurrency 1): never-seen schema "
        f"{ttft['never-seen schema'] * 1000:.0f} ms, unconstrained "
        f"{ttft['unconstrained'] * 1000:.0f} ms ({ratio:.2f}x).",
    ]
    return "\n".join(lines) + "\n"


def chart(results: dict[str, Any], args: argparse.Namespace, path: Path) -> None:
    try:
        import matplotlib
    except ModuleNotFoundError:
        print("no chart: matplotlib is not installed (pip install matplotlib)")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for mode, by_c in results.items():
        cs = sorted(by_c)
        (line,) = left.plot(cs, [by_c[c]["tokens_per_s"] for c in cs], marker="o", label=mode)
        color = line.get_color()
        right.plot(cs, [by_c[c]["p50"] for c in cs], marker="o", color=color, label=f"{mode} p50")
        right.plot(cs, [by_c[c]["p99"] for c in cs], "--", color=color, label=f"{mode} p99")
    left.set(xlabel="concurrent clients", ylabel="aggregate tokens/s", title="throughput")
    right.set(xlabel="concurrent clients", ylabel="request latency (s)", title="latency")
    for ax in (left, right):
        ax.set_xticks(args.concurrency)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", default="1,2,4,8")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ttft-runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--skip-llama-cpp-python", action="store_true")
    parser.add_argument(
        "--jump-forward",
        action="store_true",
        help="add two servers: ours with --max-draft 0 (jump-forward off) and with --draft-all",
    )
    args = parser.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    model = str(default_model_path())
    parallel = max(args.concurrency)
    ours_port, theirs_port = _free_port(), _free_port()

    def ours_cmd(port: int, *flags: str) -> list[str]:
        return [
            *(sys.executable, "-m", "gbnf_sampler", "serve", "--model", model),
            *("--port", str(port), "--parallel", str(parallel), "--ctx", "1024"),
            *("--threads", str(args.threads), *flags),
        ]

    theirs_cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        model,
        "--port",
        str(theirs_port),
        "--n_ctx",
        "2048",
        "--n_threads",
        str(args.threads),
        "--n_threads_batch",
        str(args.threads),
    ]
    with contextlib.ExitStack() as stack:
        ours = stack.enter_context(server(ours_cmd(ours_port), ours_port, "/health"))
        urls = {"unconstrained": ours, "ours: schema": ours}
        if args.jump_forward:
            for label, flags in JUMP_FORWARD_VARIANTS.items():
                port = _free_port()
                urls[label] = stack.enter_context(server(ours_cmd(port, *flags), port, "/health"))
        if not args.skip_llama_cpp_python:
            theirs = stack.enter_context(server(theirs_cmd, theirs_port, "/v1/models"))
            urls["llama-cpp-python"] = theirs
        results = run_throughput(urls, args)
        ttft = run_ttft(ours, args.ttft_runs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "serve.json").write_text(json.dumps({"results": results, "ttft": ttft}, indent=1))
    text = table(results, ttft, args)
    (out / "serve.md").write_text(text)
    chart(results, args, out / "serve.png")
    print(text)
    print(f"wrote {out / 'serve.md'} and {out / 'serve.png'}")


if __name__ == "__main__":
    main()
