"""The CUDA bitmask kernel against the CPU kernel (bit for bit), and its argument checks.

The GPU tests skip, with the reason, when the _cuda module is not built or no GPU is visible.
Build and run them on a GPU machine with scripts/test-cuda.sh. Device memory comes from the
module's own small helpers (cudaMalloc / cudaMemcpy), so neither torch nor cupy is needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from gbnf_sampler import _core, cuda
from test_kernels_reference import random_bitmask

needs_gpu = pytest.mark.skipif(not cuda.available(), reason=cuda.unavailable_reason())


# --- argument checks: no GPU needed ---


def test_available_is_a_bool_with_a_reason() -> None:
    assert isinstance(cuda.available(), bool)
    assert (cuda.unavailable_reason() == "") == cuda.available()


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"dtype": "float64"}, TypeError, "float64"),
        ({"vocab_size": 65}, ValueError, "3 words"),
        ({"rows": -1}, ValueError, "rows"),
        ({"cols": 1.5}, TypeError, "float"),
        ({"logits_ptr": 0}, ValueError, "null"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], exc: type[Exception], match: str) -> None:
    args: dict[str, object] = {"logits_ptr": 4096, "bitmask_ptr": 8192, "dtype": "float32",
                               "rows": 2, "cols": 64, "words": 2}  # fmt: skip
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        cuda.apply_bitmask_cuda(**args)  # type: ignore[arg-type]


@pytest.mark.skipif(cuda.available(), reason="checks the error raised without a GPU")
def test_unavailable_raises_runtime_error() -> None:
    # Module missing: "not built". Module built, no driver or device: the launch fails cleanly.
    with pytest.raises(RuntimeError, match=r"not built|launch failed"):
        cuda.apply_bitmask_cuda(4096, 8192, dtype="float32", rows=1, cols=32, words=1)


# --- GPU: CUDA == CPU ---


@dataclass
class DeviceBuffer:
    ptr: int
    nbytes: int

    @classmethod
    def of(cls, host: np.ndarray) -> DeviceBuffer:
        host = np.ascontiguousarray(host)
        buf = cls(cuda._module._malloc(max(host.nbytes, 1)), host.nbytes)  # type: ignore[union-attr]
        cuda._module._memcpy(buf.ptr, host.ctypes.data, host.nbytes)  # type: ignore[union-attr]
        return buf

    def read_into(self, host: np.ndarray) -> None:
        cuda._module.synchronize()  # type: ignore[union-attr]
        cuda._module._memcpy(host.ctypes.data, self.ptr, self.nbytes)  # type: ignore[union-attr]


@pytest.fixture
def device() -> Iterator[list[DeviceBuffer]]:
    buffers: list[DeviceBuffer] = []
    yield buffers
    for b in buffers:
        cuda._module._free(b.ptr)  # type: ignore[union-attr]


@dataclass
class Case:
    """A [rows, cols] view into a contiguous host array `big` (strides in elements)."""

    dtype: str
    big_shape: tuple[int, int]
    rows: int
    cols: int
    first: tuple[int, int] = (0, 0)
    step: tuple[int, int] = (1, 1)
    vocab_size: int | None = None
    bitmask_vocab: int | None = None
    indices: tuple[int, ...] | None = None


CASES = {
    "f32_1x262144": Case("float32", (1, 262144), 1, 262144),
    "f32_8x128256": Case("float32", (8, 128256), 8, 128256),
    "f16_3x1000": Case("float16", (3, 1000), 3, 1000),
    "bf16_3x1000": Case("bfloat16", (3, 1000), 3, 1000),
    "f32_strided": Case("float32", (20, 3000), 6, 1000, first=(1, 5), step=(3, 2)),
    "bf16_strided": Case("bfloat16", (20, 3000), 6, 1000, first=(2, 7), step=(3, 3)),
    "f32_padded": Case("float32", (4, 1030), 4, 1030, vocab_size=1000, bitmask_vocab=1000),
    "f16_wider_than_bitmask": Case("float16", (2, 300), 2, 300, bitmask_vocab=128),
    "f32_indices": Case("float32", (5, 777), 5, 777, indices=(4, 0, 2, 2)),
    "f32_no_indices_selected": Case("float32", (5, 64), 5, 64, indices=()),
}


def _random_bits(rng: np.random.Generator, case: Case) -> np.ndarray:
    if case.dtype == "float32":
        return rng.standard_normal(case.big_shape).astype(np.float32)
    return rng.integers(0, 2**16, size=case.big_shape, dtype=np.uint16)


def _strides(case: Case) -> tuple[int, int, int]:
    """Element offset of the view's first element, row stride and column stride."""
    big_cols = case.big_shape[1]
    offset = case.first[0] * big_cols + case.first[1]
    return offset, case.step[0] * big_cols, case.step[1]


def _run_cpu(case: Case, big: np.ndarray, bitmask: np.ndarray, indices: np.ndarray) -> None:
    offset, row_stride, col_stride = _strides(case)
    _core._unsafe_apply_bitmask(
        big.ctypes.data + offset * big.itemsize, case.dtype, case.rows, case.cols,
        row_stride, col_stride, bitmask.ctypes.data, bitmask.shape[1], bitmask.shape[1],
        case.cols if case.vocab_size is None else case.vocab_size,
        indices.ctypes.data if case.indices is not None else 0, len(indices),
    )  # fmt: skip


def _run_cuda(
    case: Case,
    big: np.ndarray,
    bitmask: np.ndarray,
    indices: np.ndarray,
    device: list[DeviceBuffer],
) -> None:
    offset, row_stride, col_stride = _strides(case)
    d_big, d_mask, d_idx = DeviceBuffer.of(big), DeviceBuffer.of(bitmask), DeviceBuffer.of(indices)
    device += [d_big, d_mask, d_idx]
    cuda.apply_bitmask_cuda(
        d_big.ptr + offset * big.itemsize,
        d_mask.ptr,
        dtype=case.dtype,
        rows=case.rows,
        cols=case.cols,
        words=bitmask.shape[1],
        vocab_size=case.vocab_size,
        logits_strides=(row_stride, col_stride),
        indices_ptr=d_idx.ptr if case.indices is not None else 0,
        num_indices=len(indices),
    )
    d_big.read_into(big)


@needs_gpu
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name: str, device: list[DeviceBuffer]) -> None:
    case = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    big = _random_bits(rng, case)
    bitmask = random_bitmask(rng, case.rows, case.bitmask_vocab or case.cols)
    indices = np.array(case.indices or (), dtype=np.int64)
    on_cpu, on_gpu = big.copy(), big.copy()
    _run_cpu(case, on_cpu, bitmask, indices)
    _run_cuda(case, on_gpu, bitmask, indices, device)
    assert not np.array_equal(on_cpu, big) or case.indices == ()
    np.testing.assert_array_equal(on_gpu.view(np.uint8), on_cpu.view(np.uint8))


@needs_gpu
def test_out_of_range_device_indices_are_skipped(device: list[DeviceBuffer]) -> None:
    logits = np.ones((2, 64), dtype=np.float32)
    bitmask = np.zeros((2, 2), dtype=np.int32)
    indices = np.array([5, -1, 1], dtype=np.int64)
    d_logits, d_mask, d_idx = (DeviceBuffer.of(a) for a in (logits, bitmask, indices))
    device += [d_logits, d_mask, d_idx]
    cuda.apply_bitmask_cuda(d_logits.ptr, d_mask.ptr, dtype="float32", rows=2, cols=64, words=2,
                            indices_ptr=d_idx.ptr, num_indices=3)  # fmt: skip
    d_logits.read_into(logits)
    assert (logits[0] == 1).all()
    assert np.isneginf(logits[1]).all()
