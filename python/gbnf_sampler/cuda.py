"""The CUDA bitmask kernel on raw device pointers (optional ``_cuda`` extension module).

The module is built only on request (``GBNF_SAMPLER_CUDA=ON pip install .``); the default wheel
is CPU-only. Pointers and streams are plain ints (``tensor.data_ptr()``,
``torch.cuda.current_stream().cuda_stream``), so nothing here needs torch or cupy.

Layouts are those of :func:`gbnf_sampler.apply_bitmask`: logits ``[rows, cols]`` of float32,
float16 or bfloat16 with strides in elements; an int32 bitmask ``[rows, words]`` whose rows are
contiguous. The launch is asynchronous on ``stream``.
"""

from __future__ import annotations

from types import ModuleType

from .validation import checked_int as _int

__all__ = ["apply_bitmask_cuda", "available", "device_count", "unavailable_reason"]

_DTYPES = ("float32", "float16", "bfloat16")

try:
    from . import _cuda as _cuda_module

    _module: ModuleType | None = _cuda_module
    _import_error = ""
except ImportError as e:  # not built with GBNF_SAMPLER_CUDA=ON, or no CUDA runtime
    _module = None
    _import_error = str(e)


def device_count() -> int:
    """Number of CUDA devices the module sees (0 without the module, a driver or a GPU)."""
    return 0 if _module is None else int(_module.device_count())


def available() -> bool:
    """True when the ``_cuda`` module is built and at least one GPU is visible."""
    return device_count() > 0


def unavailable_reason() -> str:
    """Why :func:`available` is False (empty when it is True)."""
    if _module is None:
        return f"gbnf_sampler._cuda is not built (GBNF_SAMPLER_CUDA=ON): {_import_error}"
    if device_count() == 0:
        return "gbnf_sampler._cuda is built but no CUDA device is visible"
    return ""


def apply_bitmask_cuda(
    logits_ptr: int,
    bitmask_ptr: int,
    *,
    dtype: str,
    rows: int,
    cols: int,
    words: int,
    vocab_size: int | None = None,
    logits_strides: tuple[int, int] | None = None,
    bitmask_row_stride: int | None = None,
    indices_ptr: int = 0,
    num_indices: int = 0,
    stream: int = 0,
) -> None:
    """Sets disallowed device logits to ``-inf`` in place, asynchronously on ``stream``.

    ``logits_ptr`` points at ``[rows, cols]`` elements of ``dtype`` with ``logits_strides``
    (row, column) in elements (default: contiguous). ``bitmask_ptr`` points at int32
    ``[rows, words]`` with ``bitmask_row_stride`` words between rows (default: ``words``).
    ``indices_ptr`` (0: every row) points at ``num_indices`` int64 row numbers on the device;
    rows outside ``[0, rows)`` are skipped. Tokens at or past ``vocab_size`` (default ``cols``)
    or past ``32 * words`` get ``-inf``. ``stream`` is a ``cudaStream_t`` as an int
    (0: the default stream).
    """
    if dtype not in _DTYPES:
        raise TypeError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
    rows, cols, words = _int("rows", rows), _int("cols", cols), _int("words", words)
    vocab = cols if vocab_size is None else _int("vocab_size", vocab_size)
    if vocab > 32 * words:
        raise ValueError(
            f"bitmask too narrow for vocab_size {vocab}: expected at least {(vocab + 31) // 32} "
            f"words per row, got {words}"
        )
    row_stride, col_stride = (cols, 1) if logits_strides is None else logits_strides
    row_stride = _int("logits row stride", row_stride, None)
    col_stride = _int("logits column stride", col_stride, None)
    bm_stride = (
        words if bitmask_row_stride is None else _int("bitmask_row_stride", bitmask_row_stride)
    )
    pointers = [("logits_ptr", logits_ptr), ("bitmask_ptr", bitmask_ptr)]
    for name, ptr in pointers:
        if _int(name, ptr) == 0 and rows * cols > 0:
            raise ValueError(f"{name} is null")
    if _module is None:
        raise RuntimeError(unavailable_reason())
    _module.apply_bitmask(
        logits_ptr, dtype, rows, cols, row_stride, col_stride,
        bitmask_ptr, words, bm_stride, vocab,
        _int("indices_ptr", indices_ptr), _int("num_indices", num_indices), _int("stream", stream),
    )  # fmt: skip
