"""Token log-probabilities for the OpenAI APIs (``logprobs`` / ``top_logprobs`` on chat
completions, ``logprobs: N`` on legacy completions).

Reported as the model's own distribution: the log-softmax of a row's logits before the grammar
mask and the sampling settings (temperature, top-p, ...) touch it, as vLLM reports by default. So
a constrained answer shows how likely the model found each token it was made to write, and
``top_logprobs`` may name tokens the grammar refused. Tokens written without a row of logits of
their own (a reasoning budget's forced closing text) have ``logprob`` null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import bad_request

MAX_TOP_LOGPROBS_CHAT = 20  # OpenAI's bounds
MAX_TOP_LOGPROBS_COMPLETIONS = 5


@dataclass
class TokenLogprob:
    """One output token: its bytes, its log-probability, and the most likely tokens there."""

    token: bytes
    logprob: float | None
    top: list[tuple[bytes, float]] = field(default_factory=list)


@dataclass
class RowStats:
    """What a row's logits say before the mask: the log of its softmax's denominator and the
    ``k`` largest logits."""

    log_total: float
    top_ids: npt.NDArray[np.int64]
    top_logits: npt.NDArray[np.float32]


def row_stats(row: npt.NDArray[np.float32], k: int) -> RowStats:
    peak = float(np.max(row))
    log_total = peak + float(np.log(np.sum(np.exp(row - peak), dtype=np.float64)))
    if k <= 0:
        return RowStats(log_total, np.empty(0, np.int64), np.empty(0, np.float32))
    ids = np.argpartition(-row, k - 1)[:k]
    ids = ids[np.argsort(-row[ids], kind="stable")]
    return RowStats(log_total, ids.astype(np.int64), row[ids].copy())


def entry(token: int, data: bytes, logit: float, stats: RowStats, spell: Any) -> TokenLogprob:
    """The entry of a sampled ``token`` (``logit`` its raw logit) from its row's stats;
    ``spell(id)`` gives a token's bytes."""
    top = [
        (spell(int(i)), float(v) - stats.log_total)
        for i, v in zip(stats.top_ids, stats.top_logits, strict=True)
    ]
    return TokenLogprob(data, logit - stats.log_total, top)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _chat_item(token: bytes, logprob: float | None) -> dict[str, Any]:
    return {"token": _text(token), "logprob": logprob, "bytes": list(token)}


def chat_logprobs(entries: list[TokenLogprob]) -> dict[str, Any]:
    """The ``logprobs`` object of a chat choice (or of a stream chunk's tokens)."""
    content = [
        {**_chat_item(e.token, e.logprob), "top_logprobs": [_chat_item(t, lp) for t, lp in e.top]}
        for e in entries
    ]
    return {"content": content, "refusal": None}


def completion_logprobs(entries: list[TokenLogprob], offset: int, top: int) -> dict[str, Any]:
    """The legacy completions ``logprobs`` object; ``offset``: the text length before the first
    of these tokens (``text_offset`` counts characters of the choice's text)."""
    offsets = []
    for e in entries:
        offsets.append(offset)
        offset += len(_text(e.token))
    tops = [{_text(t): lp for t, lp in e.top} for e in entries] if top > 0 else None
    return {
        "tokens": [_text(e.token) for e in entries],
        "token_logprobs": [e.logprob for e in entries],
        "top_logprobs": tops,
        "text_offset": offsets,
    }


def _count(value: Any, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise bad_request(f"{name} must be an integer between 0 and {high}", name)
    return value


def chat_request(body: dict[str, Any]) -> tuple[bool, int]:
    """``logprobs`` (a boolean) and ``top_logprobs`` of a chat request; 400 when malformed or
    when ``top_logprobs`` comes without ``logprobs: true``."""
    wanted = body.get("logprobs")
    if wanted is not None and not isinstance(wanted, bool):
        raise bad_request("logprobs must be a boolean", "logprobs")
    top = body.get("top_logprobs")
    if top is None:
        return bool(wanted), 0
    count = _count(top, "top_logprobs", MAX_TOP_LOGPROBS_CHAT)
    if not wanted:
        raise bad_request("top_logprobs needs logprobs: true", "top_logprobs")
    return True, count


def completion_request(body: dict[str, Any]) -> tuple[bool, int]:
    """The legacy ``logprobs: N`` (N most likely tokens per position; 0: only the chosen)."""
    value = body.get("logprobs")
    if value is None:
        return False, 0
    return True, _count(value, "logprobs", MAX_TOP_LOGPROBS_COMPLETIONS)


__all__ = [
    "RowStats",
    "TokenLogprob",
    "chat_logprobs",
    "chat_request",
    "completion_logprobs",
    "completion_request",
    "entry",
    "row_stats",
]
