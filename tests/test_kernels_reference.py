"""Plain numpy references for the bitmask kernels, the slow path every fast path is tested against
(imported by the other kernel tests), and a check of the references themselves."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def unpack_bitmask(bitmask: npt.NDArray[np.int32], n: int) -> npt.NDArray[np.bool_]:
    """Bool array ``[..., n]``: True where the bitmask allows the token (False past its end)."""
    words = np.ascontiguousarray(bitmask, dtype="<i4")
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little").astype(bool)
    if bits.shape[-1] < n:
        pad = np.zeros((*bits.shape[:-1], n - bits.shape[-1]), dtype=bool)
        bits = np.concatenate([bits, pad], axis=-1)
    return bits[..., :n]


def apply_reference(
    logits: np.ndarray,
    bitmask: npt.NDArray[np.int32],
    indices: list[int] | None = None,
    vocab_size: int | None = None,
) -> np.ndarray:
    """What ``apply_bitmask(logits, bitmask, ...)`` must leave in ``logits``, as a new array."""
    out = np.array(logits, copy=True)
    rows2d = out.reshape(1, -1) if out.ndim == 1 else out
    mask2d = bitmask.reshape(1, -1) if bitmask.ndim == 1 else bitmask
    cols = rows2d.shape[1]
    allowed = unpack_bitmask(mask2d, cols)
    limit = cols if vocab_size is None else min(vocab_size, cols)
    allowed[:, limit:] = False
    neg_inf = np.array(-np.inf, dtype=out.dtype)
    for r in range(rows2d.shape[0]) if indices is None else indices:
        rows2d[r] = np.where(allowed[r], rows2d[r], neg_inf)
    return out


def random_bitmask(rng: np.random.Generator, rows: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A mask mixing all-allowed, all-disallowed, sparse and random words (every kernel path)."""
    words = (vocab_size + 31) // 32
    random_words = rng.integers(-(2**31), 2**31, size=(rows, words), dtype=np.int64)
    one_bit = np.left_shift(1, rng.integers(0, 32, size=(rows, words))).astype(np.int64)
    kind = rng.integers(0, 4, size=(rows, words))
    choice = np.select([kind == 0, kind == 1, kind == 2], [-1, 0, one_bit], random_words)
    return (choice & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def random_logits(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.standard_normal(shape).astype(np.float32)
    if dtype == "bfloat16":
        ml_dtypes = __import__("ml_dtypes")
        return values.astype(ml_dtypes.bfloat16)
    return values.astype(dtype)


def test_unpack_bitmask_bit_order() -> None:
    bitmask = np.array([[1, -(2**31)], [0, 5]], dtype=np.int32)
    allowed = unpack_bitmask(bitmask, 70)
    assert np.flatnonzero(allowed[0]).tolist() == [0, 63]
    assert np.flatnonzero(allowed[1]).tolist() == [32, 34]


def test_apply_reference_masks_padding() -> None:
    logits = np.zeros(40, dtype=np.float32)
    out = apply_reference(logits, np.array([-1], dtype=np.int32), vocab_size=30)
    assert np.isneginf(out).tolist() == [False] * 30 + [True] * 10
