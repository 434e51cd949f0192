"""Our bitmask is the layout xgrammar's apply_token_bitmask_inplace consumes (issue 8, item 5).

Skipped unless xgrammar (and torch) are installed. One documented difference: ids at or past
vocab_size (padded logits) are left untouched by xgrammar and set to -inf by us.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is optional")
xgr = pytest.importorskip("xgrammar", reason="xgrammar is optional (comparison only)")

import gbnf_sampler as gs  # noqa: E402
from test_kernels_reference import random_bitmask  # noqa: E402


@pytest.mark.parametrize(("batch", "vocab"), [(1, 1000), (4, 128256), (3, 33)])
def test_allocation_matches(batch: int, vocab: int) -> None:
    theirs = xgr.allocate_token_bitmask(batch, vocab)
    ours = gs.allocate_bitmask(batch, vocab)
    assert tuple(theirs.shape) == ours.shape
    assert theirs.dtype == torch.int32 and ours.dtype == np.int32
    np.testing.assert_array_equal(theirs.numpy(), ours)


@pytest.mark.parametrize("indices", [None, [2, 0]])
@pytest.mark.parametrize(("batch", "vocab"), [(1, 262144), (4, 1000), (3, 33)])
def test_apply_matches_xgrammar(batch: int, vocab: int, indices: list[int] | None) -> None:
    rng = np.random.default_rng(vocab)
    logits = rng.standard_normal((batch, vocab)).astype(np.float32)
    bitmask = random_bitmask(rng, batch, vocab)
    if indices is not None and max(indices) >= batch:
        indices = [i for i in indices if i < batch]
    theirs = torch.from_numpy(logits.copy())
    xgr.apply_token_bitmask_inplace(theirs, torch.from_numpy(bitmask), indices=indices)
    ours = logits.copy()
    gs.apply_bitmask(ours, bitmask, indices=indices)
    np.testing.assert_array_equal(ours, theirs.numpy())


def test_padded_logits_differ_only_past_vocab_size() -> None:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 1030)).astype(np.float32)
    bitmask = random_bitmask(rng, 2, 1000)
    theirs = torch.from_numpy(logits.copy())
    xgr.apply_token_bitmask_inplace(theirs, torch.from_numpy(bitmask), vocab_size=1000)
    ours = logits.copy()
    gs.apply_bitmask(ours, bitmask, vocab_size=1000)
    np.testing.assert_array_equal(ours[:, :1000], theirs.numpy()[:, :1000])
    assert np.isneginf(ours[:, 1000:]).all()
    np.testing.assert_array_equal(theirs.numpy()[:, 1000:], logits[:, 1000:])
