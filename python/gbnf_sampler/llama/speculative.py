"""Jump-forward as grammar-drafted speculation on llama-cpp-python.

When the grammar forces the next bytes, their tokenization is a draft; text guessed from the
context (``lookup.py``: a few-shot example, keys and values copied from the prompt) may extend
it where the grammar accepts it. The draft is evaluated in one batch with the token just
sampled, and each draft token is then checked by the sampler chain itself at its position: the
chain picks a token from that position's logits exactly as plain decoding would (the same mask,
the same samplers), and the draft token is kept only when the pick is the draft token. The
first disagreement ends the draft: the chain's pick becomes the next token and the KV cache is
cut back to the kept prefix.

Why the output is that of plain constrained decoding: greedy, the pick is the masked argmax.
Sampling, picking from the chain's final distribution p and keeping the draft token d when the
pick equals d is the standard speculative acceptance test for a draft proposed with probability
1: d is kept with probability p(d), and on a miss the pick is distributed as p without d,
renormalized (the residual distribution). Every token is distributed as in plain decoding.

A draft token that is the only token the grammar allows at its position is kept without a check
(every sampler chain picks it), and the row before it needs no logits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .lookup import ContextLookup
from .step_costs import StepCosts

# Forced text tokenized per draft token at most: a long forced literal is cut, not tokenized
# whole at every step.
_BYTES_PER_DRAFT_TOKEN = 16
# Forced and guessed text together, per draft token: a guess fills a draft up to this.
_GUESS_BYTES_PER_DRAFT_TOKEN = 8


@dataclass
class DraftStats:
    """What jump-forward did during one generation."""

    drafted: int = 0  # draft tokens evaluated
    kept: int = 0  # draft tokens kept (the model chose them, or nothing else was allowed)
    unchecked: int = 0  # of those, kept without logits: the grammar allowed nothing else


class EvaluatedTokens:
    """The tokens a ``llama_cpp.Llama`` has evaluated (its KV cache, sequence 0), extended a
    batch at a time with logits only for the rows asked for, and cut back after a rejected
    draft. Keeps ``llm.n_tokens`` and ``llm.input_ids`` (and ``llm.scores`` for a model made
    with ``logits_all=True``) in step, so that the model's own ``eval`` and prefix reuse go on
    from the right place."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self._ctx = llm._ctx
        self._batch = llm._batch
        self._logits_all = bool(llm._logits_all)
        self._n_vocab = int(llm.n_vocab())
        self._n_ctx = int(llm.n_ctx())
        self.capacity = int(llm.n_batch)  # the most tokens one decode call takes
        self._rows_in_seq_0 = 0  # batch rows whose sequence is set (0, alone)
        self._ctx.kv_cache_seq_rm(-1, self.length, -1)  # anything past the sequence is stale

    @property
    def length(self) -> int:
        return int(self._llm.n_tokens)

    @property
    def room(self) -> int:
        """How many more tokens fit in the context."""
        return self._n_ctx - self.length

    def decode(self, tokens: Sequence[int], logits: Sequence[bool]) -> None:
        """Evaluates ``tokens`` after the current ones; row i gets logits when ``logits[i]``."""
        llm = self._llm
        start = self.length
        count = len(tokens)
        batch = self._batch.batch
        for i in range(self._rows_in_seq_0, count):
            batch.seq_id[i][0] = 0
            batch.n_seq_id[i] = 1
        self._rows_in_seq_0 = max(self._rows_in_seq_0, count)
        batch.n_tokens = count
        for i in range(count):
            batch.token[i] = tokens[i]
            batch.pos[i] = start + i
            batch.logits[i] = self._logits_all or logits[i]
        self._ctx.decode(self._batch)
        llm.input_ids[start : start + count] = tokens
        if self._logits_all:
            rows = np.ctypeslib.as_array(self._ctx.get_logits(), shape=(count, self._n_vocab))
            llm.scores[start : start + count, :] = rows
        llm.n_tokens = start + count

    def truncate(self, length: int) -> None:
        """Forgets the tokens from ``length`` on (their KV cache entries included). Only this
        object and the model's own ``eval`` (which cuts at ``llm.n_tokens`` first) may change
        the model's sequence while it decodes."""
        if not self._ctx.kv_cache_seq_rm(-1, length, -1):
            raise RuntimeError(f"llama.cpp could not remove KV cache entries from {length} on")
        self._llm.n_tokens = length


# Where a draft token ends, against the grammar's forced text: inside it, exactly at its end (a
# model may spell that boundary together with what follows), or past it (in guessed text).
INSIDE, ENDS, GUESSED = 0, 1, 2


@dataclass
class Draft:
    """Tokens of the forced text, possibly followed by guessed text, each accepted by the
    grammar in turn."""

    tokens: list[int] = field(default_factory=list)
    only: list[bool] = field(default_factory=list)  # the only token the grammar allows there
    kinds: list[int] = field(default_factory=list)  # INSIDE, ENDS or GUESSED, per token

    def __len__(self) -> int:
        return len(self.tokens)

    def cut(self, n: int) -> Draft:
        return Draft(self.tokens[:n], self.only[:n], self.kinds[:n])


class DraftLength:
    """How much of a draft is worth evaluating, from how often the model has agreed so far and
    what steps cost.

    A step evaluates the sampled token and the first ``n`` draft tokens and writes, on average,
    1 + E[kept] tokens (the kept draft tokens, then the chain's pick). Its cost is a batch of
    ``n + 1`` tokens with a row of logits for each checked draft token and for the last row
    (:class:`~.step_costs.StepCosts`, learned from the steps the decoding loop times). The cut
    maximizes tokens written per cost. Where rows of logits are expensive (a 262k-token
    vocabulary on a CPU), a draft of tokens the grammar allows alone is still nearly free, and
    checked tokens pay only in runs the model is likely to keep.

    The chance that a checked token is kept is estimated separately for each kind of token
    (inside the forced text, ending it, guessed past it), each starting at
    ``prior_kept / prior_checked`` and following this generation's checks. The first draft
    token needs no logits of its own (the sampled token's row, needed anyway, checks it), so it
    is also compared with the model's pick when no draft was evaluated: the estimate recovers
    without paying for it. The length changes the speed only: the output is the same for any
    draft."""

    def __init__(
        self,
        prior_kept: float = 1.5,
        prior_checked: float = 2.0,
        costs: StepCosts | None = None,
    ) -> None:
        self._kept = [prior_kept] * 3  # by kind: INSIDE, ENDS, GUESSED
        self._checked = [prior_checked] * 3
        self.costs = costs if costs is not None else StepCosts()

    def cut(self, draft: Draft) -> Draft:
        """The leading part of ``draft`` worth evaluating."""
        best, best_rate = 0, 1.0  # no draft: one token for one decode
        odds, kept, rows = 1.0, 0.0, 1
        for i, alone in enumerate(draft.only):
            if not alone:
                kind = draft.kinds[i]
                odds *= self._kept[kind] / self._checked[kind]
                rows += 1
            kept += odds
            rate = (1.0 + kept) / self.costs.cost(i + 2, rows)
            if rate > best_rate:
                best, best_rate = i + 1, rate
        if self.costs.steps_without_rows >= self.costs.RETRY_AFTER and all(draft.only[:best]):
            checked = [i for i, alone in enumerate(draft.only) if not alone]
            if checked:  # measure what a checked token costs again: the costs may have changed
                best = checked[0] + 1
        return draft.cut(best)

    def record(self, draft: Draft, kept: int) -> None:
        """Counts the checks of a draft of which the model kept ``kept`` tokens (and refused
        the next one, if any)."""
        for i in range(min(kept + 1, len(draft))):
            if not draft.only[i]:
                self.observe(draft, i, i < kept)

    def observe(self, draft: Draft, i: int, kept: bool) -> None:
        kind = draft.kinds[i]
        self._checked[kind] += 1
        self._kept[kind] += kept


class DraftSource(Protocol):
    """A grammar state that drafts can be planned from (a :class:`~gbnf_sampler.Matcher`, a
    :class:`~.native_sampler.GrammarSampler`)."""

    def forced_bytes(self) -> bytes: ...

    def plan_draft(self, tokens: list[int]) -> list[bool]: ...


def plan_draft(
    source: DraftSource,
    tokenize: Callable[[bytes], list[int]],
    spell: Callable[[int], bytes],
    limit: int,
    lookup: ContextLookup | None = None,
) -> Draft:
    """The draft at ``source``'s state: up to ``limit`` tokens of the text the grammar forces
    and, with ``lookup``, of the text guessed to follow it; each accepted by the grammar, with
    whether it is the only token allowed there and its kind. ``tokenize`` spells text as the
    model's tokens (no BOS, special tokens' text as text); ``spell`` gives a token's bytes."""
    if limit <= 0:
        return Draft()
    forced = source.forced_bytes()
    text = forced[: limit * _BYTES_PER_DRAFT_TOKEN]
    guessed = b""
    if lookup is not None and len(text) == len(forced):
        guessed = lookup.continuation(text, limit * _GUESS_BYTES_PER_DRAFT_TOKEN - len(text))
    if not text and not guessed:
        return Draft()
    tokens = tokenize(text + guessed)
    if (len(text) < len(forced) or guessed) and tokens:  # a cut text may end inside a token
        tokens.pop()
    only = source.plan_draft(tokens[:limit])
    tokens = tokens[: len(only)]
    kinds, end = [], 0
    for token in tokens:
        end += len(spell(token))
        kinds.append(INSIDE if end < len(text) else ENDS if end == len(text) else GUESSED)
    return Draft(tokens, only, kinds)


def verify(
    sample: Callable[[int], int], accept: Callable[[int], None], draft: Draft
) -> tuple[int, int | None]:
    """Checks the draft evaluated in the batch after the sampled token (row j's logits predict
    draft token j) against the chain's own picks: ``sample(row)`` is the chain sampling from a
    row, ``accept(token)`` the chain accepting a token. Returns how many draft tokens are kept
    and the chain's pick at the first miss (None when all are kept). Every kept token and the
    pick have been accepted by the chain, as in plain decoding."""
    for j, token in enumerate(draft.tokens):
        if draft.only[j]:
            accept(token)
            continue
        pick = sample(j)
        if pick != token:
            return j, pick
    return len(draft.tokens), None


__all__ = [
    "ENDS",
    "GUESSED",
    "INSIDE",
    "Draft",
    "DraftLength",
    "DraftSource",
    "DraftStats",
    "EvaluatedTokens",
    "plan_draft",
    "verify",
]
