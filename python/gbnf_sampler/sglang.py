"""gbnf-sampler as a grammar backend of SGLang (``pip install "gbnf-sampler[sglang]"``).

    sglang serve --model-path MODEL --grammar-backend gbnf_sampler

The package registers the backend through SGLang's plugin entry point (group
``sglang.srt.plugins``, function :func:`register`): SGLang loads its plugins before it parses
its arguments, and :func:`register` adds ``gbnf_sampler`` to ``--grammar-backend``'s choices and
to SGLang's backend registry. Requests then use our dialects: ``json_schema`` (our exact JSON
Schema compiler), ``regex``, ``ebnf`` (GBNF, llama.cpp's grammar language) and
``structural_tag``. A request whose grammar does not compile gets SGLang's
``InvalidGrammarObject`` with our diagnostic as its message; the other requests go on.

Masks: SGLang allocates a CPU int32 bitmask per batch step (xgrammar's layout, which is ours),
:meth:`GbnfSamplerGrammar.fill_vocab_mask_batched` fills every constrained row in one threaded
call (:func:`gbnf_sampler.fill_masks` with the batch's rows, GIL released) and
:meth:`~GbnfSamplerGrammar.apply_vocab_mask` applies it with our CPU kernel, our CUDA kernel
(when built) or torch on other devices (:func:`gbnf_sampler.torch.apply_bitmask`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES, add_grammar_backend_choices
from sglang.srt.constrained.base_grammar_backend import (
    BaseGrammarBackend,
    BaseGrammarObject,
    GrammarStats,
    InvalidGrammarObject,
    register_grammar_backend,
)

from . import torch as gs_torch
from .compiled import CompiledGrammar
from .engines import CompileFailure, EngineGrammars, fill_rows, jump_forward_text
from .kernels import bitmask_words
from .matcher import Matcher

logger = logging.getLogger(__name__)

BACKEND_NAME = "gbnf_sampler"
# SGLang's request kinds -> ours ("full_assistant_ebnf" is an EBNF grammar too).
_KINDS = {"json": "json", "regex": "regex", "ebnf": "gbnf", "structural_tag": "structural_tag"}


class GbnfSamplerGrammar(BaseGrammarObject):  # type: ignore[misc]
    """One request's grammar state (a token-level :class:`gbnf_sampler.Matcher`)."""

    def __init__(
        self, compiled: CompiledGrammar, key: str, grammar_stats: GrammarStats | None = None
    ) -> None:
        super().__init__()
        self.compiled = compiled
        self.matcher = Matcher(compiled)
        self.key_string = key
        self.grammar_stats = grammar_stats

    def accept_token(self, token: int) -> None:
        """Advances over ``token``; a token the grammar refuses is a ValueError (SGLang aborts
        that request). Tokens after the end of the grammar are ignored."""
        if self.matcher.is_terminated():
            return
        self.current_token = token
        if not self.matcher.accept_token(int(token)):
            raise ValueError(
                f"gbnf_sampler: token {token} is not allowed by the grammar here "
                f"(grammar {self.key_string[:200]!r})"
            )

    def rollback(self, k: int) -> None:
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        return allocate_vocab_mask(vocab_size, batch_size, device)

    def fill_vocab_mask(self, vocab_mask: torch.Tensor, idx: int) -> None:
        self.matcher.fill_mask(vocab_mask, idx)

    @staticmethod
    def fill_vocab_mask_batched(entries: Sequence[Any], vocab_mask: torch.Tensor) -> None:
        """Fills the rows of ``entries`` (SGLang's ``GrammarRow(row, grammar)``) in one
        threaded call; rows not listed are left as they are."""
        matchers, rows, others = [], [], []
        for entry in entries:  # one pass: this runs every step for the whole batch
            grammar = entry.grammar
            if type(grammar) is GbnfSamplerGrammar:
                matchers.append(grammar.matcher)
                rows.append(entry.row)
            else:
                others.append(entry)
        fill_rows(matchers, rows, vocab_mask)
        for entry in others:  # another backend's object (a wrapper): its own fill
            entry.grammar.fill_vocab_mask(vocab_mask, entry.row)

    @staticmethod
    def reset_vocab_mask(vocab_mask: torch.Tensor) -> None:
        vocab_mask.fill_(-1)

    @staticmethod
    def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
        return move_vocab_mask(vocab_mask, device)

    @staticmethod
    def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
        apply_vocab_mask(logits, vocab_mask)

    def copy(self) -> GbnfSamplerGrammar:
        """A fresh state of the same compiled grammar (SGLang's cache hands one to each
        request)."""
        stats = self.grammar_stats
        if stats is not None:
            stats = GrammarStats(
                compilation_time=stats.compilation_time,
                dispatch_type=stats.dispatch_type,
                is_cache_hit=True,
            )
        return GbnfSamplerGrammar(self.compiled, self.key_string, stats)

    def try_jump_forward(self, tokenizer: Any) -> tuple[list[int], str] | None:
        """The text the grammar forces next (``forced_bytes``, whole characters), or None."""
        text = jump_forward_text(self.matcher)
        return ([], text) if text else None

    def jump_forward_str_state(self, helper: tuple[list[int], str]) -> tuple[str, int]:
        return helper[1], -1

    def jump_and_retokenize(
        self, old_output_ids: list[int], new_output_ids: list[int], next_state: int
    ) -> None:
        """After SGLang appended the forced text and retokenized the output: roll back to the
        longest common prefix of the old and new ids, then accept the new ones."""
        common = 0
        for old, new in zip(old_output_ids, new_output_ids, strict=False):
            if old != new:
                break
            common += 1
        if common < len(old_output_ids):
            self.matcher.rollback(len(old_output_ids) - common)
        for position, token in enumerate(new_output_ids[common:], start=common):
            if not self.matcher.accept_token(int(token)):
                raise ValueError(
                    f"gbnf_sampler: retokenized token {token} at position {position} is not "
                    "allowed by the grammar"
                )

    def __repr__(self) -> str:
        return f"GbnfSamplerGrammar({self.key_string[:80]!r}, {self.matcher!r})"


@functools.cache
def _pin_memory() -> bool:
    return bool(torch.cuda.is_available())


def allocate_vocab_mask(vocab_size: int, batch_size: int, device: Any = None) -> torch.Tensor:
    """A ``[batch_size, ceil(vocab_size / 32)]`` int32 CPU bitmask, all allowed, allocated in
    pinned memory when a GPU is present (so that the copy to ``device`` can be asynchronous;
    SGLang allocates one per step, and torch's pinned allocator reuses the blocks)."""
    words = bitmask_words(vocab_size)
    return torch.full((batch_size, words), -1, dtype=torch.int32, pin_memory=_pin_memory())


def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
    return vocab_mask.to(device, non_blocking=True)


def set_token_filter(
    vocab_mask: torch.Tensor,
    token_ids: Sequence[int],
    batch_idx: int,
    is_allowed: bool = True,
    reset_vocab_mask: bool = True,
) -> None:
    """SGLang's token filter (strict thinking): in row ``batch_idx`` of an int32 bitmask on any
    device, allows ``token_ids`` (``is_allowed``; with ``reset_vocab_mask`` the row first allows
    nothing, so only they remain) or forbids them (with ``reset_vocab_mask`` the row first allows
    everything). The ids are few (a reasoning format's excluded markers, or the one token that
    ends a thinking budget): their bits are gathered per word in Python, then one indexed
    update runs on the row's device."""
    row = vocab_mask[batch_idx]
    if reset_vocab_mask:
        row.fill_(0 if is_allowed else -1)
    limit = 32 * int(row.shape[-1])
    words: dict[int, int] = {}
    for token in token_ids:
        tid = int(token)
        if not 0 <= tid < limit:
            raise ValueError(
                f"set_token_filter: token id {tid} is outside the bitmask's {limit} ids"
            )
        words[tid >> 5] = words.get(tid >> 5, 0) | (1 << (tid & 31))
    if not words:
        return
    index = torch.tensor(list(words), dtype=torch.long, device=row.device)
    signed = [bits - (1 << 32) if bits >= 1 << 31 else bits for bits in words.values()]
    bits = torch.tensor(signed, dtype=torch.int32, device=row.device)
    row[index] = (row[index] | bits) if is_allowed else (row[index] & ~bits)


def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
    """Masks ``logits`` in place; a mask narrower than padded logits masks the padding."""
    if vocab_mask.device != logits.device:
        vocab_mask = vocab_mask.to(logits.device, non_blocking=True)
    vocab = min(int(logits.shape[-1]), 32 * int(vocab_mask.shape[-1]))
    gs_torch.apply_bitmask(logits, vocab_mask, vocab_size=vocab)


class GbnfSamplerBackend(BaseGrammarBackend):  # type: ignore[misc]
    """SGLang's grammar backend interface over one :class:`EngineGrammars`. SGLang compiles on
    the base class's thread pool (``self.executor``) and caches per request key; underneath,
    converted grammars and compiled grammars are cached by :mod:`gbnf_sampler.engines`."""

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        eos_token_ids: Iterable[int] | None = None,
        *,
        any_whitespace: bool = True,
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.grammars = EngineGrammars.from_tokenizer(
            tokenizer,
            vocab_size=vocab_size,
            eos_ids=eos_token_ids,
            whitespace="flexible" if any_whitespace else "compact",
        )

    def _dispatch(self, kind: str, key_string: str) -> BaseGrammarObject:
        ours = _KINDS[kind]
        result = self.grammars.try_compile(ours, key_string)
        if isinstance(result, CompileFailure):
            logger.warning("gbnf_sampler: invalid %s grammar: %s", kind, result.message)
            return InvalidGrammarObject(result.message)
        return GbnfSamplerGrammar(result, key_string, GrammarStats(dispatch_type=kind))

    def dispatch_json(self, key_string: str) -> BaseGrammarObject:
        return self._dispatch("json", key_string)

    def dispatch_regex(self, key_string: str) -> BaseGrammarObject:
        return self._dispatch("regex", key_string)

    def dispatch_ebnf(self, key_string: str) -> BaseGrammarObject:
        return self._dispatch("ebnf", key_string)

    def dispatch_structural_tag(self, key_string: str) -> BaseGrammarObject:
        return self._dispatch("structural_tag", key_string)

    @staticmethod
    def allocate_vocab_mask(vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        return allocate_vocab_mask(vocab_size, batch_size, device)

    @staticmethod
    def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
        return move_vocab_mask(vocab_mask, device)

    @staticmethod
    def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
        apply_vocab_mask(logits, vocab_mask)

    # Strict thinking (``--enable-strict-thinking``): SGLang's reasoner masks the thinking
    # stretch itself, through this filter (excluded markers, the thinking budget's end).
    @property
    def is_support_token_filter(self) -> bool:
        return True

    set_token_filter = staticmethod(set_token_filter)


def create_backend(
    server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Iterable[int] | None
) -> GbnfSamplerBackend:
    """SGLang's grammar-backend factory signature (``register_grammar_backend``)."""
    disable_ws = bool(getattr(server_args, "constrained_json_disable_any_whitespace", False))
    return GbnfSamplerBackend(tokenizer, vocab_size, eos_token_ids, any_whitespace=not disable_ws)


def register() -> None:
    """The ``sglang.srt.plugins`` entry point: makes ``--grammar-backend gbnf_sampler`` valid
    and maps it to :func:`create_backend`. Idempotent."""
    if BACKEND_NAME not in GRAMMAR_BACKEND_CHOICES:
        add_grammar_backend_choices([BACKEND_NAME])
    register_grammar_backend(BACKEND_NAME, create_backend)


__all__ = [
    "BACKEND_NAME",
    "GbnfSamplerBackend",
    "GbnfSamplerGrammar",
    "allocate_vocab_mask",
    "apply_vocab_mask",
    "create_backend",
    "move_vocab_mask",
    "register",
    "set_token_filter",
]
