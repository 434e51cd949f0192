"""gbnf_sampler.torch against the numpy reference (skipped without torch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is optional (pip install gbnf-sampler[torch])")

import gbnf_sampler.torch as gst  # noqa: E402
from gbnf_sampler import cuda  # noqa: E402
from test_kernels_reference import apply_reference, random_bitmask  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _as_float32_numpy(t: Any) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy()


def _check_against_reference(
    apply: Callable[..., None], logits: Any, bitmask: Any, **kwargs: Any
) -> None:
    # The reference runs in float32 on values already rounded to the tensor's dtype.
    expected = apply_reference(_as_float32_numpy(logits), bitmask.cpu().numpy(), **kwargs)
    apply(logits, bitmask, **kwargs)
    np.testing.assert_array_equal(_as_float32_numpy(logits), expected)


def test_allocate_bitmask() -> None:
    bm = gst.allocate_bitmask(2, 100)
    assert bm.dtype == torch.int32 and tuple(bm.shape) == (2, 4) and bool((bm == -1).all())


@pytest.mark.parametrize("path", ["kernel", "fallback"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("view", "kwargs"),
    [
        ("contiguous", {}),
        ("strided", {}),
        ("row", {}),
        ("contiguous", {"vocab_size": 900}),
        ("contiguous", {"indices": [2, 0]}),
    ],
)
def test_cpu_tensors(path: str, dtype: Any, view: str, kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    big = torch.from_numpy(rng.standard_normal((8, 2100)).astype(np.float32)).to(dtype)
    logits = {"contiguous": big[:3, :1000], "strided": big[1::3, 5:2005:2], "row": big[4, :1000]}[
        view
    ]
    rows = 1 if logits.dim() == 1 else logits.shape[0]
    bitmask = torch.from_numpy(random_bitmask(rng, rows, kwargs.get("vocab_size", 1000)))
    if logits.dim() == 1:
        bitmask = bitmask[0]
    if path == "kernel":
        _check_against_reference(gst.apply_bitmask, logits, bitmask, **kwargs)
    else:

        def fallback(lg: Any, bm: Any, indices: Any = None, vocab_size: Any = None) -> None:
            lg2, bm2, vocab = gst._check(lg, bm, vocab_size)
            idx = gst._row_indices(indices, lg2.shape[0], lg.device)
            gst._apply_torch(lg2, bm2, vocab, idx)

        _check_against_reference(fallback, logits, bitmask, **kwargs)


@pytest.mark.parametrize(
    ("make", "exc"),
    [
        (lambda: (torch.zeros(2, 64, dtype=torch.float64), gst.allocate_bitmask(2, 64)), TypeError),
        (lambda: (torch.zeros(2, 64), gst.allocate_bitmask(2, 64).long()), TypeError),
        (lambda: (torch.zeros(2, 64), gst.allocate_bitmask(3, 64)), ValueError),
        (lambda: (torch.zeros(2, 64), gst.allocate_bitmask(2, 32)), ValueError),  # batch ok, narrow
        (lambda: (np.zeros((2, 64), np.float32), gst.allocate_bitmask(2, 64)), TypeError),
    ],
)
def test_bad_inputs(make: Callable[[], tuple[Any, Any]], exc: type[Exception]) -> None:
    logits, bitmask = make()
    with pytest.raises(exc):
        gst.apply_bitmask(logits, bitmask, vocab_size=64)


def test_index_out_of_range() -> None:
    with pytest.raises(ValueError, match="out of range"):
        gst.apply_bitmask(torch.zeros(2, 64), gst.allocate_bitmask(2, 64), indices=[2])


needs_cuda_tensors = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device visible to torch"
)


@needs_cuda_tensors
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("indices", [None, [1, 3]])
def test_cuda_tensors(dtype: Any, indices: Any) -> None:
    # Through the _cuda module when built, else the torch fallback; either must equal the CPU.
    rng = np.random.default_rng(1)
    logits_cpu = torch.from_numpy(rng.standard_normal((4, 128256)).astype(np.float32)).to(dtype)
    bitmask_cpu = torch.from_numpy(random_bitmask(rng, 4, 128256))
    logits_gpu = logits_cpu[:, ::1].cuda()
    gst.apply_bitmask(logits_cpu, bitmask_cpu, indices=indices)
    gst.apply_bitmask(logits_gpu, bitmask_cpu.cuda(), indices=indices)
    assert torch.equal(logits_gpu.cpu(), logits_cpu), f"cuda module used: {cuda.available()}"
