"""The CPU bitmask kernels against the numpy reference, and every misuse raising cleanly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from gbnf_sampler import _core
from test_kernels_reference import apply_reference, random_bitmask, random_logits, unpack_bitmask

DTYPES = ["float32", "float16", "bfloat16"]
VOCAB_SIZES = [1, 31, 32, 33, 100, 1000, 4099]


def _dtype_or_skip(dtype: str) -> str:
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes", reason="numpy bfloat16 needs ml_dtypes")
    return dtype


def _check(logits: np.ndarray, bitmask: np.ndarray, **kwargs: Any) -> None:
    expected = apply_reference(logits, bitmask, **kwargs)
    gs.apply_bitmask(logits, bitmask, **kwargs)
    np.testing.assert_array_equal(logits.astype(np.float32), expected.astype(np.float32))


# --- allocation ---


@pytest.mark.parametrize(("vocab", "words"), [(0, 0), (1, 1), (32, 1), (33, 2), (128256, 4008)])
def test_bitmask_words(vocab: int, words: int) -> None:
    assert gs.bitmask_words(vocab) == words


def test_allocate_bitmask_all_allowed() -> None:
    bm = gs.allocate_bitmask(3, 100)
    assert bm.shape == (3, 4)
    assert bm.dtype == np.int32
    assert (bm == -1).all()
    assert unpack_bitmask(bm, 100).all()


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((-1, 10), ValueError),
        ((1, -5), ValueError),
        ((1.5, 10), TypeError),
        ((1, "7"), TypeError),
        ((True, 10), TypeError),
    ],
)
def test_allocate_bitmask_bad_arguments(args: tuple[Any, Any], exc: type[Exception]) -> None:
    with pytest.raises(exc):
        gs.allocate_bitmask(*args)


# --- correctness against the reference ---


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vocab", VOCAB_SIZES)
def test_one_row(dtype: str, vocab: int) -> None:
    rng = np.random.default_rng(vocab)
    logits = random_logits(rng, (vocab,), _dtype_or_skip(dtype))
    _check(logits, random_bitmask(rng, 1, vocab)[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vocab", VOCAB_SIZES)
def test_batch(dtype: str, vocab: int) -> None:
    rng = np.random.default_rng(1000 + vocab)
    logits = random_logits(rng, (5, vocab), _dtype_or_skip(dtype))
    _check(logits, random_bitmask(rng, 5, vocab))


VIEWS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "every_other_column": lambda big, v: big[:, : 2 * v : 2],
    "row_and_column_offsets": lambda big, v: big[1::3, 5 : 5 + v],
    "reversed_columns": lambda big, v: big[:, v - 1 :: -1] if v > 0 else big[:, :0],
    "reversed_rows": lambda big, v: big[::-1, :v],
    "fortran_order": lambda big, v: np.asfortranarray(big[:, :v]),
    "transposed": lambda big, v: big[:v, :].T,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("vocab", [33, 1000])
def test_strided_views(dtype: str, view: str, vocab: int) -> None:
    rng = np.random.default_rng(7)
    big = random_logits(rng, (1100, 2100), _dtype_or_skip(dtype))
    before = big.copy()
    logits = VIEWS[view](big, vocab)
    assert logits.shape[1] == vocab
    bitmask = random_bitmask(rng, logits.shape[0], vocab)
    expected_big = before.copy()
    expected_big_view = VIEWS[view](expected_big, vocab)
    expected = apply_reference(logits, bitmask)
    gs.apply_bitmask(logits, bitmask)
    np.testing.assert_array_equal(logits.astype(np.float32), expected.astype(np.float32))
    if view != "fortran_order":  # elsewhere, nothing outside the view may change
        expected_big_view[...] = expected
        np.testing.assert_array_equal(big.astype(np.float32), expected_big.astype(np.float32))


def test_row_view_of_llama_scores() -> None:
    # llama-cpp-python hands the processor a 1-D row of its [n_ctx, n_vocab] scores.
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((8, 1000)).astype(np.float32)
    row = scores[5, :]
    bitmask = gs.allocate_bitmask(1, 1000)
    bitmask[0, 3:10] = 0
    _check(row, bitmask[0])
    _check(scores[2, ::3], random_bitmask(rng, 1, 334)[0])


def test_one_row_with_single_row_2d_bitmask() -> None:
    rng = np.random.default_rng(4)
    logits = random_logits(rng, (100,), "float32")
    _check(logits, random_bitmask(rng, 1, 100))


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_bitmask(dtype: str) -> None:
    rng = np.random.default_rng(5)
    logits = random_logits(rng, (4, 300), _dtype_or_skip(dtype))
    big_mask = random_bitmask(rng, 8, 600)
    _check(logits, big_mask[::2, ::2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("cols", "vocab"), [(128, 100), (1030, 1000), (64, 33), (40, 0)])
def test_padded_logits_with_vocab_size(dtype: str, cols: int, vocab: int) -> None:
    rng = np.random.default_rng(cols)
    logits = random_logits(rng, (3, cols), _dtype_or_skip(dtype))
    bitmask = gs.allocate_bitmask(3, vocab)
    bitmask[:, : bitmask.shape[1] // 2] = random_bitmask(rng, 3, 32 * (bitmask.shape[1] // 2))
    _check(logits, bitmask, vocab_size=vocab)
    assert np.isneginf(logits[:, vocab:].astype(np.float32)).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_logits_wider_than_bitmask(dtype: str) -> None:
    rng = np.random.default_rng(11)
    logits = random_logits(rng, (2, 200), _dtype_or_skip(dtype))
    bitmask = np.full((2, 4), -1, dtype=np.int32)  # covers 128 tokens
    _check(logits, bitmask)
    assert np.isneginf(logits[:, 128:].astype(np.float32)).all()
    assert np.isfinite(logits[:, :128].astype(np.float32)).all()


def test_logits_narrower_than_bitmask() -> None:
    rng = np.random.default_rng(12)
    _check(random_logits(rng, (2, 50), "float32"), random_bitmask(rng, 2, 200))
    _check(random_logits(rng, (2, 50), "float32"), random_bitmask(rng, 2, 200), vocab_size=120)


@pytest.mark.parametrize(
    "indices", [[2], [0, 3], [3, 1, 1], [], np.array([1, 2], dtype=np.int32), np.arange(4)]
)
def test_indices_select_rows(indices: Any) -> None:
    rng = np.random.default_rng(13)
    logits = random_logits(rng, (4, 500), "float32")
    bitmask = random_bitmask(rng, 4, 500)
    expected = apply_reference(logits, bitmask, indices=[int(i) for i in indices])
    gs.apply_bitmask(logits, bitmask, indices=indices)
    np.testing.assert_array_equal(logits, expected)


def test_whole_words_fast_paths() -> None:
    logits = np.arange(128, dtype=np.float32)
    bitmask = np.array([-1, 0, -1, 0], dtype=np.int32)
    gs.apply_bitmask(logits, bitmask)
    allowed = ~np.isneginf(logits)
    assert allowed.tolist() == [True] * 32 + [False] * 32 + [True] * 32 + [False] * 32
    assert logits[:32].tolist() == list(range(32))


def test_special_values_kept_when_allowed() -> None:
    logits = np.array([np.nan, np.inf, -0.0, 1e-45, np.nan, 3.0], dtype=np.float32)
    gs.apply_bitmask(logits, np.array([0b001111], dtype=np.int32))
    assert np.isnan(logits[0]) and logits[1] == np.inf and np.signbit(logits[2])
    assert logits[3] == np.float32(1e-45) and np.isneginf(logits[4:]).all()


def test_empty_shapes() -> None:
    gs.apply_bitmask(np.zeros((0, 10), np.float32), np.zeros((0, 1), np.int32))
    gs.apply_bitmask(np.zeros(0, np.float32), np.zeros(0, np.int32))


def test_float16_bit_pattern_of_neg_inf() -> None:
    logits = np.ones(32, dtype=np.float16)
    gs.apply_bitmask(logits, np.array([0x7FFFFFFF], dtype=np.int32))
    assert logits.view(np.uint16)[31] == 0xFC00


# --- the raw-pointer entry point (bfloat16 without ml_dtypes) ---


@pytest.mark.parametrize(("dtype", "neg_inf"), [("float16", 0xFC00), ("bfloat16", 0xFF80)])
def test_unsafe_entry_point_16_bit(dtype: str, neg_inf: int) -> None:
    rng = np.random.default_rng(21)
    vocab = 1000
    bits = rng.integers(0, 2**16, size=(3, 1100), dtype=np.uint16)
    bitmask = random_bitmask(rng, 3, vocab)
    indices = np.array([0, 2], dtype=np.int64)
    expected = bits.copy()
    allowed = unpack_bitmask(bitmask, 1100)
    allowed[:, vocab:] = False
    for r in indices:
        expected[r] = np.where(allowed[r], bits[r], np.uint16(neg_inf))
    _core._unsafe_apply_bitmask(
        bits.ctypes.data, dtype, 3, 1100, 1100, 1,
        bitmask.ctypes.data, bitmask.shape[1], bitmask.shape[1], vocab,
        indices.ctypes.data, len(indices),
    )  # fmt: skip
    np.testing.assert_array_equal(bits, expected)


def test_unsafe_entry_point_rejects_unknown_dtype() -> None:
    with pytest.raises(TypeError, match="float64"):
        _core._unsafe_apply_bitmask(0, "float64", 0, 0, 0, 1, 0, 0, 0, 0)


# --- misuse: the right exception, never a crash ---

F32 = np.zeros((2, 64), np.float32)
BM = np.full((2, 2), -1, np.int32)


def _read_only() -> np.ndarray:
    a = np.zeros((2, 64), np.float32)
    a.flags.writeable = False
    return a


def _unaligned() -> np.ndarray:
    raw = np.zeros(2 * 64 * 4 + 1, np.uint8)
    return raw[1:].view(np.float32).reshape(2, 64)


BadInput = tuple[str, Callable[[], tuple[Any, Any, dict[str, Any]]], type[Exception], str]
BAD_INPUTS: list[BadInput] = [
    ("float64 logits", lambda: (F32.astype(np.float64), BM, {}), TypeError, "float64"),
    ("int32 logits", lambda: (F32.astype(np.int32), BM, {}), TypeError, "int32"),
    ("big-endian logits", lambda: (F32.astype(">f4"), BM, {}), TypeError, ">f4"),
    ("list logits", lambda: (F32.tolist(), BM, {}), TypeError, "list"),
    ("uint32 bitmask", lambda: (F32.copy(), BM.astype(np.uint32), {}), TypeError, "uint32"),
    ("int64 bitmask", lambda: (F32.copy(), BM.astype(np.int64), {}), TypeError, "int64"),
    ("bitmask not array", lambda: (F32.copy(), None, {}), TypeError, "NoneType"),
    ("3-D logits", lambda: (np.zeros((1, 2, 64), np.float32), BM, {}), ValueError, "3-D"),
    ("0-D logits", lambda: (np.zeros((), np.float32), BM, {}), ValueError, "0-D"),
    ("3-D bitmask", lambda: (F32.copy(), BM.reshape(1, 2, 2), {}), ValueError, "3-D"),
    ("batch mismatch", lambda: (F32.copy(), BM[:1], {}), ValueError, "batch"),
    ("2-D logits, 1-D bitmask", lambda: (F32.copy(), BM[0], {}), ValueError, "batch"),
    ("too narrow", lambda: (F32.copy(), BM, {"vocab_size": 65}), ValueError, "3 words"),
    ("negative vocab", lambda: (F32.copy(), BM, {"vocab_size": -1}), ValueError, "-1"),
    ("float vocab", lambda: (F32.copy(), BM, {"vocab_size": 64.0}), TypeError, "float"),
    ("read-only", lambda: (_read_only(), BM, {}), ValueError, "read-only"),
    ("unaligned", lambda: (_unaligned(), BM, {}), ValueError, "aligned"),
    ("index too big", lambda: (F32.copy(), BM, {"indices": [0, 2]}), ValueError, "indices\\[1\\]"),
    ("negative index", lambda: (F32.copy(), BM, {"indices": [-1]}), ValueError, "out of range"),
    ("float indices", lambda: (F32.copy(), BM, {"indices": [0.5]}), TypeError, "float64"),
    ("bool indices", lambda: (F32.copy(), BM, {"indices": [True]}), TypeError, "bool"),
    ("2-D indices", lambda: (F32.copy(), BM, {"indices": [[0]]}), TypeError, "2-D"),
]


@pytest.mark.parametrize(
    ("make", "exc", "match"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_inputs(
    make: Callable[[], tuple[Any, Any, dict[str, Any]]], exc: type[Exception], match: str
) -> None:
    logits, bitmask, kwargs = make()
    with pytest.raises(exc, match=match):
        gs.apply_bitmask(logits, bitmask, **kwargs)


def test_failed_call_leaves_logits_unchanged() -> None:
    logits = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError):
        gs.apply_bitmask(logits, np.zeros((2, 2), np.int32), indices=[0, 5])
    assert (logits == 1).all()


# --- the C++ bit helpers (BitmaskWords, TestBit/SetBit/ClearBit, FillBitmask, CountAllowed) ---


@pytest.mark.parametrize("vocab", [0, 1, 31, 32, 33, 1000])
def test_count_allowed_matches_popcount(vocab: int) -> None:
    rng = np.random.default_rng(vocab)
    row = random_bitmask(rng, 1, max(vocab, 1))[0]
    expected = int(unpack_bitmask(row, vocab).sum())
    assert _core._bitmask_count_allowed(row, vocab) == expected


def test_set_clear_test_fill_bits() -> None:
    row = np.zeros(4, dtype=np.int32)
    for token in (0, 31, 32, 127):
        _core._bitmask_set(row, token, True)
        assert _core._bitmask_test(row, token)
    assert np.flatnonzero(unpack_bitmask(row, 128)).tolist() == [0, 31, 32, 127]
    _core._bitmask_set(row, 31, False)
    assert not _core._bitmask_test(row, 31)
    assert _core._bitmask_count_allowed(row, 128) == 3
    _core._bitmask_fill(row, True)
    assert (row == -1).all()
    _core._bitmask_fill(row, False)
    assert (row == 0).all()


@pytest.mark.parametrize(
    ("call", "exc"),
    [
        (lambda row: _core._bitmask_test(row, 128), ValueError),
        (lambda row: _core._bitmask_set(row, -1, True), ValueError),
        (lambda row: _core._bitmask_count_allowed(row, 129), ValueError),
        (lambda row: _core._bitmask_fill(row[::2], True), ValueError),
        (lambda row: _core._bitmask_test(row.astype(np.int64), 0), TypeError),
    ],
)
def test_bit_helpers_check_bounds(
    call: Callable[[np.ndarray], object], exc: type[Exception]
) -> None:
    with pytest.raises(exc):
        call(np.zeros(4, dtype=np.int32))


def test_unsafe_entry_point_rejects_negative_counts() -> None:
    logits = np.zeros(64, dtype=np.float32)
    bitmask = np.zeros(2, dtype=np.int32)
    with pytest.raises(ValueError, match="negative"):
        _core._unsafe_apply_bitmask(
            logits.ctypes.data, "float32", 1, 64, 64, 1, bitmask.ctypes.data, 2, 2, -5
        )
    assert (logits == 0).all()
