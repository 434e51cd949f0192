"""Per-request sampling settings and the sampler itself (numpy, one logits row at a time).

The grammar mask has already set disallowed logits to ``-inf``, so every path below only ever
picks an allowed token: greedy takes the argmax; otherwise the finite logits are cut by
``top_k`` and ``top_p`` (nucleus) and ``min_p``, scaled by ``temperature``, and drawn with the
request's own seeded generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import bad_request


@dataclass
class SamplingParams:
    """What one request asks of the sampler. ``max_tokens`` is the completion budget."""

    max_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    ignore_eos: bool = False
    logprobs: bool = False  # report each output token's log-probability
    top_logprobs: int = 0  # and this many most likely tokens at its position

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


def _number(body: dict[str, Any], name: str, default: float, low: float, high: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise bad_request(f"{name} must be a number", name)
    if not low <= value <= high:
        raise bad_request(f"{name} must be between {low} and {high}, got {value}", name)
    return float(value)


def _integer(body: dict[str, Any], name: str, default: int | None, low: int) -> int | None:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(f"{name} must be an integer", name)
    if value < low:
        raise bad_request(f"{name} must be at least {low}, got {value}", name)
    return value


def _stop(value: Any) -> list[str]:
    if value is None:
        return []
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise bad_request("stop must be a string or a list of strings", "stop")
    return [s for s in stops if s]


def sampling_params(body: dict[str, Any], max_tokens_names: tuple[str, ...]) -> SamplingParams:
    """The sampling settings of an OpenAI-style body (Ollama's ``options`` use the same names,
    with ``num_predict`` for the budget). Out-of-range values are a 400."""
    budget = None
    for name in max_tokens_names:
        budget = _integer(body, name, budget, 1) if budget is None else budget
    params = SamplingParams(
        max_tokens=budget if budget is not None else SamplingParams.max_tokens,
        temperature=_number(body, "temperature", 1.0, 0.0, 100.0),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0),
        top_k=_integer(body, "top_k", 0, -1) or 0,
        min_p=_number(body, "min_p", 0.0, 0.0, 1.0),
        seed=_integer(body, "seed", None, -(2**63)),
        stop=_stop(body.get("stop")),
        ignore_eos=bool(body.get("ignore_eos", False)),
    )
    if params.seed is not None:
        params.seed &= 2**64 - 1
    params.top_k = max(params.top_k, 0)
    return params


def sample(row: npt.NDArray[np.float32], params: SamplingParams, rng: np.random.Generator) -> int:
    """A token id drawn from one logits row (masked tokens already at ``-inf``)."""
    if params.temperature <= 0.0:
        return int(np.argmax(row))
    ids = np.flatnonzero(np.isfinite(row))
    if ids.size == 0:
        return int(np.argmax(row))
    logits = row[ids].astype(np.float64)
    if 0 < params.top_k < ids.size:
        keep = np.argpartition(-logits, params.top_k - 1)[: params.top_k]
        ids, logits = ids[keep], logits[keep]
    order = np.argsort(-logits, kind="stable")
    ids, logits = ids[order], logits[order]
    probs = np.exp((logits - logits[0]) / params.temperature)
    probs /= probs.sum()
    cut = probs.size
    if params.top_p < 1.0:
        cut = int(np.searchsorted(np.cumsum(probs), params.top_p, side="left")) + 1
    if params.min_p > 0.0:
        cut = min(cut, int(np.count_nonzero(probs >= params.min_p * probs[0])))
    cut = max(1, min(cut, probs.size))
    probs = probs[:cut] / probs[:cut].sum()
    return int(ids[rng.choice(cut, p=probs)])


__all__ = ["SamplingParams", "sample", "sampling_params"]
