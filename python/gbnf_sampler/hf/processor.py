"""transformers integration: a grammar-constraining ``LogitsProcessor`` for ``model.generate``.

    import gbnf_sampler as gs
    proc = gs.hf.LogitsProcessor(schema, tokenizer)
    out = model.generate(**inputs, logits_processor=[proc], max_new_tokens=64)

``grammar`` may be a :class:`Grammar`, GBNF text, a structural tag (``{"type": "structural_tag",
...}``: its special-token markers are matched as this tokenizer's tokens), a JSON Schema dict or a
Pydantic model class, or a list of them: one per prompt of the batch (each prompt's rows, with
``num_return_sequences`` or beams, share its grammar). Needs torch and transformers
(``pip install 'gbnf-sampler[hf]'``).

Tool calls: :func:`tool_call_processor` builds the processor from OpenAI ``tools`` in the model's
tool-call format (detected from ``tokenizer.chat_template``) and returns the constraint whose
``message(text)`` turns the generated text into OpenAI message fields. A reasoning budget
(``reasoning={"budget": N}``) is enforced here: once a row spent N tokens inside its think
section, its mask allows only the next token of the closing tag until the tag is written.

Each row of the batch has its own token matcher, created on the first call: the tokens present
then are the prompt. Later calls bring the tokens generated since; they are accepted (on a thread
pool when each row brings one), every row's mask is filled in one threaded call into one bitmask,
and the bitmask is applied to the logits in place. Rows that produced EOS are finished: only EOS
stays allowed there, whatever transformers pads them with. Rows that come back reordered or
duplicated (beam search) take a fork of the matcher they descend from; a row whose tokens no longer
extend what it saw rolls back to the common prefix. A call whose prompt differs from the first
call's (a new ``generate`` with the same processor) starts over.
"""

from __future__ import annotations

import copy
import logging
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    import torch
    import transformers
except ImportError as e:
    raise ImportError(
        f"gbnf_sampler.hf needs torch and transformers ({e}); install them with: "
        "pip install 'gbnf-sampler[hf]'"
    ) from e

from .. import torch as gs_torch
from ..compiled import CompiledGrammar, compile
from ..grammar import Grammar
from ..kernels import allocate_bitmask, bitmask_words
from ..matcher import Matcher, accept_tokens, fill_masks
from ..structural.budget import BudgetTracker
from ..structural.formats.base import ReasoningBudget
from ..structural.openai import ChatConstraint, chat_constraint
from ..structural.tags import from_structural_tag
from ..vocab import Vocab

__all__ = ["LogitsProcessor", "tool_call_processor", "vocab_for"]

logger = logging.getLogger(__name__)

_vocab_cache: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Vocab]] = (
    weakref.WeakKeyDictionary()
)


def vocab_for(
    tokenizer: Any,
    *,
    vocab_size: int | None = None,
    eos_ids: int | Iterable[int] | None = None,
) -> Vocab:
    """``Vocab.from_hf(tokenizer, ...)``, extracted once per tokenizer object and arguments."""
    eos_key = eos_ids if eos_ids is None or isinstance(eos_ids, int) else tuple(eos_ids)
    key = (vocab_size, eos_key)
    try:
        per_tokenizer = _vocab_cache.setdefault(tokenizer, {})
    except TypeError:  # not weak-referenceable or not hashable: no cache
        per_tokenizer = {}
    vocab = per_tokenizer.get(key)
    if vocab is None:
        vocab = Vocab.from_hf(tokenizer, vocab_size=vocab_size, eos_ids=eos_key)
        per_tokenizer[key] = vocab
    return vocab


@dataclass
class _Row:
    """One sequence of the batch: its matcher, the ids it saw last call, and how many of the
    generated tokens its matcher consumed (tokens after EOS are not consumed)."""

    compiled: CompiledGrammar
    matcher: Matcher
    seen: npt.NDArray[np.int64]
    consumed: int = 0
    tracker: BudgetTracker | None = None
    forcing: list[int] = field(default_factory=list)  # the closing tag's tokens still to write


class LogitsProcessor(transformers.LogitsProcessor):  # type: ignore[misc, unused-ignore]
    """Masks the logits so that every sequence stays inside its grammar (see the module
    docstring). ``vocab_size``: the model's logits width when it exceeds ``len(tokenizer)``;
    wider logits are handled anyway (the extra ids are masked). ``eos_ids``: end-of-generation
    ids besides ``tokenizer.eos_token_id``."""

    def __init__(
        self,
        grammar: Any,
        tokenizer: Any,
        *,
        vocab_size: int | None = None,
        eos_ids: int | Iterable[int] | None = None,
        reasoning_budget: ReasoningBudget | None = None,
    ) -> None:
        self.vocab = vocab_for(tokenizer, vocab_size=vocab_size, eos_ids=eos_ids)
        self.budget = reasoning_budget
        self._closing: list[int] = []
        if reasoning_budget is not None:
            end = reasoning_budget.end
            self._closing = [int(t) for t in tokenizer.encode(end, add_special_tokens=False)]
        if not self.vocab.eos_ids:
            raise ValueError(
                "the tokenizer has no eos_token_id, so a finished output could never end; pass "
                "eos_ids=... (e.g. model.generation_config.eos_token_id)"
            )
        grammars = list(grammar) if isinstance(grammar, (list, tuple)) else [grammar]
        if not grammars:
            raise ValueError("grammar is an empty list; give one grammar or one per prompt")
        self._compiled = [compile(self._grammar(g), self.vocab) for g in grammars]
        eos_bits = np.zeros(bitmask_words(self.vocab.size), dtype=np.uint32)
        for token_id in self.vocab.eos_ids:
            eos_bits[token_id // 32] |= np.uint32(1 << (token_id % 32))
        self._eos_mask: npt.NDArray[np.int32] = eos_bits.view(np.int32)
        self._rows: list[_Row] = []
        self._prompts: npt.NDArray[np.int64] = np.empty((0, 0), dtype=np.int64)
        self._bitmask: npt.NDArray[np.int32] = allocate_bitmask(0, self.vocab.size)

    def _grammar(self, value: Any) -> Grammar:
        if isinstance(value, dict) and value.get("type") == "structural_tag":
            return from_structural_tag(value, vocab=self.vocab)
        return Grammar.coerce(value)

    @property
    def matchers(self) -> list[Matcher]:
        """The matcher of each row, as of the last call."""
        return [row.matcher for row in self._rows]

    def reset(self) -> None:
        """Forget the batch; the next call starts a new generation."""
        self._rows = []
        self._prompts = np.empty((0, 0), dtype=np.int64)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        ids = self._check(input_ids, scores)
        self._sync(ids)
        if self._bitmask.shape[0] != len(self._rows):
            self._bitmask = allocate_bitmask(len(self._rows), self.vocab.size)
        fill_masks(self.matchers, self._bitmask)
        for r, row in enumerate(self._rows):
            if row.matcher.is_terminated():
                self._bitmask[r] = self._eos_mask
            elif row.tracker is not None:
                self._force_closing(r, row)
        bitmask = torch.from_numpy(self._bitmask).to(scores.device)
        gs_torch.apply_bitmask(scores, bitmask, vocab_size=self.vocab.size)
        return scores

    def _force_closing(self, r: int, row: _Row) -> None:
        """Past the reasoning budget, the row may only write the closing tag (once the grammar
        takes all of its tokens from here; until then it samples as usual)."""
        assert row.tracker is not None
        if row.tracker.due and not row.forcing:
            probe = row.matcher.fork()
            if self._closing and all(probe.accept_token(t) for t in self._closing):
                row.forcing = list(self._closing)
        if row.forcing:
            token = row.forcing[0]
            self._bitmask[r] = 0
            self._bitmask[r, token >> 5] = np.int32(np.uint32(1 << (token & 31)).view(np.int32))

    def _check(self, input_ids: torch.Tensor, scores: torch.Tensor) -> npt.NDArray[np.int64]:
        if not isinstance(input_ids, torch.Tensor) or not isinstance(scores, torch.Tensor):
            raise TypeError(
                "expected torch tensors (input_ids, scores), got "
                f"{type(input_ids).__name__} and {type(scores).__name__}"
            )
        if input_ids.dim() != 2 or scores.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise ValueError(
                "expected input_ids [batch, length] and scores [batch, vocab], got shapes "
                f"{tuple(input_ids.shape)} and {tuple(scores.shape)}"
            )
        if scores.shape[1] < self.vocab.size:
            raise ValueError(
                f"the logits have {scores.shape[1]} columns but the tokenizer's vocabulary has "
                f"{self.vocab.size} tokens: is this the model's tokenizer?"
            )
        ids: npt.NDArray[np.int64] = input_ids.detach().to("cpu", torch.int64).numpy()
        return ids

    def _grammar_of_row(self, row: int, rows: int) -> CompiledGrammar:
        if rows % len(self._compiled):
            raise ValueError(
                f"a batch of {rows} rows for {len(self._compiled)} grammars: give one grammar "
                "or one per prompt"
            )
        return self._compiled[row // (rows // len(self._compiled))]

    def _start(self, ids: npt.NDArray[np.int64]) -> None:
        rows = ids.shape[0]
        self._rows = []
        for r in range(rows):
            compiled = self._grammar_of_row(r, rows)
            tracker = BudgetTracker(self.budget) if self.budget is not None else None
            self._rows.append(_Row(compiled, Matcher(compiled), ids[r].copy(), 0, tracker))
        self._prompts = ids.copy()

    def _continues(self, ids: npt.NDArray[np.int64]) -> bool:
        prompt_len = self._prompts.shape[1]
        return (
            len(self._rows) == ids.shape[0]
            and ids.shape[1] >= prompt_len
            and np.array_equal(ids[:, :prompt_len], self._prompts)
        )

    def _source(self, r: int, ids: npt.NDArray[np.int64]) -> int:
        """The old row that row ``r`` descends from: itself when its ids extend what it saw,
        else another row (same grammar) whose ids they extend, else itself (to roll back)."""
        own = self._rows[r]
        if _extends(ids, own.seen):
            return r
        for j, row in enumerate(self._rows):
            if row.compiled is own.compiled and _extends(ids, row.seen):
                return j
        return r

    def _sync(self, ids: npt.NDArray[np.int64]) -> None:
        if not self._continues(ids):
            self._start(ids)
            return
        prompt_len = self._prompts.shape[1]
        sources = [self._source(r, ids[r]) for r in range(ids.shape[0])]
        # Matchers are handed out before any is advanced: the first row descending from an old
        # row takes its matcher, the others a fork of its state as of the last call.
        taken: set[int] = set()
        new_rows: list[_Row] = []
        for src in sources:
            old = self._rows[src]
            matcher = old.matcher.fork() if src in taken else old.matcher
            tracker = copy.copy(old.tracker) if src in taken else old.tracker
            taken.add(src)
            new_rows.append(
                _Row(old.compiled, matcher, old.seen, old.consumed, tracker, list(old.forcing))
            )
        for r, row in enumerate(new_rows):
            if _rewind(row, ids[r], prompt_len) and self.budget is not None:
                self._retrack(row, ids[r], prompt_len)
        self._advance(new_rows, ids, prompt_len)
        self._rows = new_rows

    def _advance(self, rows: list[_Row], ids: npt.NDArray[np.int64], prompt_len: int) -> None:
        """Accepts each row's new tokens; rows with exactly one go through one threaded call."""
        single: list[int] = []
        for r, row in enumerate(rows):
            pending = ids.shape[1] - prompt_len - row.consumed
            if row.matcher.is_terminated() or pending <= 0:
                continue
            if pending == 1:
                single.append(r)
                continue
            for position in range(prompt_len + row.consumed, ids.shape[1]):
                if row.matcher.is_terminated():
                    break
                self._accept_one(r, row, int(ids[r, position]), position)
        if single:
            tokens = [int(ids[r, -1]) for r in single]
            accepted = accept_tokens([rows[r].matcher for r in single], tokens)
            for r, token, ok in zip(single, tokens, accepted, strict=True):
                if not ok:
                    self._refused(r, token, ids.shape[1] - 1)
                rows[r].consumed += 1
                self._track(rows[r], token)
        for r, row in enumerate(rows):
            row.seen = ids[r].copy()

    def _accept_one(self, r: int, row: _Row, token: int, position: int) -> None:
        if not row.matcher.accept_token(token):
            self._refused(r, token, position)
        row.consumed += 1
        self._track(row, token)

    def _track(self, row: _Row, token: int) -> None:
        """Follows the row's think section (reasoning budget)."""
        if row.tracker is None:
            return
        row.tracker.on_token(self.vocab.token_bytes(token))
        if row.forcing and row.forcing[0] == token:
            row.forcing.pop(0)
            if not row.forcing:
                row.tracker.forced()

    def _retrack(self, row: _Row, ids: npt.NDArray[np.int64], prompt_len: int) -> None:
        """Rebuilds a rewound row's budget tracker from the tokens it kept."""
        assert self.budget is not None
        row.tracker = BudgetTracker(self.budget)
        row.forcing = []
        for token in ids[prompt_len : prompt_len + row.consumed]:
            row.tracker.on_token(self.vocab.token_bytes(int(token)))

    def _refused(self, r: int, token: int, position: int) -> None:
        text = self.vocab.token_bytes(token) if 0 <= token < self.vocab.size else b"?"
        raise ValueError(
            f"row {r}: token {token} ({text!r}) at position {position} is not allowed by the "
            "grammar. Was it forced by another logits processor or generation option (e.g. "
            "min_new_tokens, forced_eos_token_id, suppress_tokens, sequence_bias)? Call reset() "
            "before reusing this processor for an unrelated generation."
        )


def _extends(ids: npt.NDArray[np.int64], seen: npt.NDArray[np.int64]) -> bool:
    return len(ids) >= len(seen) and bool(np.array_equal(ids[: len(seen)], seen))


def _common_prefix(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> int:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


def _rewind(row: _Row, ids: npt.NDArray[np.int64], prompt_len: int) -> bool:
    """Undoes the tokens of ``row`` that ``ids`` no longer has (rollback, or a reset and a
    replay when the rollback history is too short); whether it undid any."""
    keep = _common_prefix(ids, row.seen) - prompt_len
    if keep >= row.consumed:
        return False
    undo = row.consumed - keep
    if undo <= row.matcher.rollback_available:
        row.matcher.rollback(undo)
        row.consumed = keep
        return True
    # Replays tokens this matcher (or the one it was forked from) accepted before.
    row.matcher.reset()
    row.consumed = 0
    for token in ids[prompt_len : prompt_len + keep]:
        if not row.matcher.accept_token(int(token)):
            break
        row.consumed += 1
    return True


def tool_call_processor(
    tokenizer: Any,
    tools: Any = None,
    tool_choice: Any = "auto",
    *,
    tool_format: Any = None,
    parallel_tool_calls: bool = True,
    reasoning: Any = False,
    response_format: Any = None,
    vocab_size: int | None = None,
    eos_ids: int | Iterable[int] | None = None,
) -> tuple[LogitsProcessor, ChatConstraint]:
    """A processor for an OpenAI-style request in the model's tool-call format (``tool_format``,
    or the one detected from ``tokenizer.chat_template``), and the constraint whose
    ``message(text)`` reads the generated text back as OpenAI message fields."""
    vocab = vocab_for(tokenizer, vocab_size=vocab_size, eos_ids=eos_ids)
    constraint = chat_constraint(
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        response_format=response_format,
        reasoning=reasoning,
        tool_format=tool_format,
        chat_template=getattr(tokenizer, "chat_template", None),
        vocab=vocab,
    )
    if constraint.grammar is None:
        raise ValueError("nothing to constrain: give tools, reasoning or a response_format")
    processor = LogitsProcessor(
        constraint.grammar,
        tokenizer,
        vocab_size=vocab_size,
        eos_ids=eos_ids,
        reasoning_budget=constraint.budget,
    )
    return processor, constraint
