"""Token bitmasks (xgrammar's layout) and applying them to numpy logits.

A bitmask row is ``ceil(vocab_size / 32)`` int32 words; bit ``i`` of word ``j`` set allows token
``32 * j + i``. A batch is a 2-D array ``[batch, words]``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import _core
from .validation import checked_int

__all__ = ["allocate_bitmask", "apply_bitmask", "bitmask_words"]


def bitmask_words(vocab_size: int) -> int:
    """Number of int32 words in one bitmask row covering ``vocab_size`` tokens."""
    n = checked_int("vocab_size", vocab_size)
    if n >= 2**63:
        raise ValueError(f"vocab_size must be below 2**63, got {n}")
    return int(_core.bitmask_words(n))


def allocate_bitmask(batch: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A ``[batch, ceil(vocab_size / 32)]`` int32 bitmask with every token allowed (-1)."""
    rows = checked_int("batch", batch)
    words = bitmask_words(vocab_size)
    return np.full((rows, words), -1, dtype=np.int32)


def apply_bitmask(
    logits: npt.NDArray[np.floating],
    bitmask: npt.NDArray[np.int32],
    *,
    indices: npt.ArrayLike | None = None,
    vocab_size: int | None = None,
) -> None:
    """Sets the logits of disallowed tokens to ``-inf``, in place.

    ``logits`` is a float32, float16 or bfloat16 numpy array, ``[vocab]`` or ``[batch, vocab]``,
    contiguous or any strided view (it must be writeable). ``bitmask`` is int32, ``[words]`` or
    ``[batch, words]``, with as many rows as ``logits``. Row ``r`` of the logits is masked by row
    ``r`` of the bitmask; ``indices`` restricts the work to those rows. Token ids at or past
    ``vocab_size`` (default: the logits width) or past what the bitmask covers always get
    ``-inf`` (padded vocabularies). The GIL is released while the kernel runs.

    Raises ``TypeError`` for a wrong dtype and ``ValueError`` for a wrong shape, a batch
    mismatch, a bitmask too narrow for ``vocab_size``, read-only logits or an index out of range.
    """
    _core.apply_bitmask(logits, bitmask, indices=indices, vocab_size=vocab_size)
