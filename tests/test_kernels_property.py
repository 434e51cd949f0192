"""Property test: apply_bitmask == the numpy reference on random shapes, views and options."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from test_kernels_reference import apply_reference, random_bitmask


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(["float32", "float16"]))
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(0, 300))
    row_step, col_step = draw(st.sampled_from([1, 2, -1])), draw(st.sampled_from([1, 3, -2]))
    big = rng.standard_normal((rows * abs(row_step), cols * abs(col_step) + 7)).astype(dtype)
    logits = big[::row_step, ::col_step][:rows, :cols]
    vocab_size = draw(st.one_of(st.none(), st.integers(0, cols + 40)))
    words = gs.bitmask_words(max(vocab_size or 0, draw(st.integers(0, cols + 40))))
    bitmask = random_bitmask(rng, rows, max(32 * words, 1))[:, :words]
    kwargs: dict[str, object] = {"vocab_size": vocab_size}
    if draw(st.booleans()):
        kwargs["indices"] = draw(st.lists(st.integers(0, rows - 1), max_size=6))
    return logits, bitmask, kwargs


@settings(max_examples=300, deadline=None)
@given(cases())
def test_apply_matches_reference(case: tuple[np.ndarray, np.ndarray, dict[str, object]]) -> None:
    logits, bitmask, kwargs = case
    expected = apply_reference(logits, bitmask, **kwargs)  # type: ignore[arg-type]
    gs.apply_bitmask(logits, bitmask, **kwargs)  # type: ignore[arg-type]
    np.testing.assert_array_equal(logits, expected)
