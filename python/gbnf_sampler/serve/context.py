"""One llama.cpp context shared by every slot, through llama-cpp-python's low-level API.

Each slot is a sequence id with its own region of the KV cache (``kv_unified=False``: the
context's ``n_ctx`` is ``slots * ctx_per_slot``, each sequence gets ``ctx_per_slot`` cells).
The sliding-window cache of models such as Gemma 3 is kept full-size (``swa_full``) so that a
slot's prompt prefix can be reused after any number of tokens. Only the decode thread calls
into a :class:`BatchContext`.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import numpy.typing as npt

from ..limits import SERVE_PREFILL_CHUNK


class DecodeError(RuntimeError):
    """llama_decode failed (the message has its status)."""


class BatchContext:
    """A context with ``slots`` sequences of ``ctx_per_slot`` tokens each, and one reusable
    ``llama_batch`` of up to ``capacity`` tokens: ``per_step`` tokens of each generating
    sequence (its sampled token and a jump-forward draft) and a chunk of prompts. Flash
    attention follows ``llm``'s setting (on for a model from ``gs.llama.load_llama``: a
    sequence's rows are then computed alike with or without its draft tokens in the batch, so
    greedy answers with jump-forward equal those without; other sequences in the same batch
    may still round its logits differently)."""

    def __init__(
        self,
        llm: Any,
        slots: int,
        ctx_per_slot: int,
        threads: int | None = None,
        per_step: int = 1,
    ) -> None:
        import llama_cpp

        self._llama = llama_cpp
        self.slots = slots
        self.capacity = SERVE_PREFILL_CHUNK + slots * per_step
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = slots * ctx_per_slot
        params.n_batch = self.capacity
        params.n_ubatch = min(self.capacity, 512)
        params.n_seq_max = slots
        params.kv_unified = False
        params.swa_full = True
        params.flash_attn_type = llm.context_params.flash_attn_type
        params.no_perf = True
        params.n_threads = threads or llm.context_params.n_threads
        params.n_threads_batch = threads or llm.context_params.n_threads_batch
        self.ctx = llama_cpp.llama_init_from_model(llm._model.model, params)
        if not self.ctx:
            raise MemoryError(f"cannot create a llama.cpp context of {params.n_ctx} tokens")
        self.ctx_per_slot = int(llama_cpp.llama_n_ctx_seq(self.ctx))
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.n_vocab = int(
            llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(llm._model.model))
        )
        self.vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        self.batch = llama_cpp.llama_batch_init(self.capacity, 0, 1)
        self.n_tokens = 0
        self.n_outputs = 0

    def is_eog(self, token: int) -> bool:
        return bool(self._llama.llama_vocab_is_eog(self.vocab, token))

    def clear_batch(self) -> None:
        self.n_tokens = 0
        self.n_outputs = 0

    def room(self) -> int:
        return self.capacity - self.n_tokens

    def add(self, token: int, pos: int, seq: int, output: bool) -> int:
        """Appends one token; returns its output row (or -1 when it has no logits)."""
        i = self.n_tokens
        batch = self.batch
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = output
        self.n_tokens += 1
        if not output:
            return -1
        self.n_outputs += 1
        return self.n_outputs - 1

    def decode(self) -> npt.NDArray[np.float32]:
        """Evaluates the batch; returns the logits, one row per output token, in batch order
        (a writable view of llama.cpp's buffer, valid until the next decode)."""
        self.batch.n_tokens = self.n_tokens
        status = int(self._llama.llama_decode(self.ctx, self.batch))
        if status != 0:
            raise DecodeError(f"llama_decode returned {status}")
        if self.n_outputs == 0:
            return np.empty((0, self.n_vocab), dtype=np.float32)
        pointer = self._llama.llama_get_logits(self.ctx)
        address = ctypes.cast(pointer, ctypes.c_void_p).value
        buffer = (ctypes.c_float * (self.n_outputs * self.n_vocab)).from_address(address or 0)
        rows = np.frombuffer(memoryview(buffer), dtype=np.float32)
        return rows.reshape(self.n_outputs, self.n_vocab)

    def keep_prefix(self, seq: int, n: int) -> bool:
        """Drops the sequence's cells from position ``n`` on; False if llama.cpp cannot (then
        the whole sequence is dropped)."""
        if self._llama.llama_memory_seq_rm(self.memory, seq, n, -1):
            return True
        self.clear(seq)
        return False

    def clear(self, seq: int) -> None:
        self._llama.llama_memory_seq_rm(self.memory, seq, -1, -1)

    def close(self) -> None:
        if self.ctx:
            self._llama.llama_batch_free(self.batch)
            self._llama.llama_free(self.ctx)
            self.ctx = None


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens two sequences share (what a slot's KV cells can keep)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


__all__ = ["BatchContext", "DecodeError", "common_prefix"]
