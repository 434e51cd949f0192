"""Bitmask helpers for torch tensors (torch is optional: ``pip install gbnf-sampler[torch]``).

    import gbnf_sampler.torch as gst
    bitmask = gst.allocate_bitmask(batch, vocab_size)          # int32, CPU, all allowed
    gst.apply_bitmask(logits, bitmask.to(logits.device))       # in place

CPU tensors go through the C++ kernel (``data_ptr`` + strides, no copy of the logits); CUDA
tensors through the ``_cuda`` module when it is built (on the tensor's current stream), else
through a vectorized torch fallback, as do tensors on other devices.
"""

from __future__ import annotations

import torch

from . import _core
from . import cuda as _cuda
from .kernels import bitmask_words

__all__ = ["allocate_bitmask", "apply_bitmask"]

_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


def allocate_bitmask(
    batch: int, vocab_size: int, device: torch.device | str | None = None
) -> torch.Tensor:
    """A ``[batch, ceil(vocab_size / 32)]`` int32 tensor with every token allowed (-1)."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0:
        raise ValueError(f"batch must be a non-negative int, got {batch!r}")
    words = bitmask_words(vocab_size)
    return torch.full((batch, words), -1, dtype=torch.int32, device=device)


def _check(
    logits: torch.Tensor, bitmask: torch.Tensor, vocab_size: int | None
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Validated 2-D views of logits and bitmask, and the vocabulary size."""
    if not isinstance(logits, torch.Tensor) or not isinstance(bitmask, torch.Tensor):
        raise TypeError(
            f"logits and bitmask must be torch.Tensor, got {type(logits).__name__} and "
            f"{type(bitmask).__name__}"
        )
    if logits.dtype not in _DTYPE_NAMES:
        raise TypeError(f"logits must be float32, float16 or bfloat16, got {logits.dtype}")
    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask must be int32, got {bitmask.dtype}")
    for name, t in (("logits", logits), ("bitmask", bitmask)):
        if t.dim() not in (1, 2):
            raise ValueError(f"{name} must be 1-D or 2-D, got shape {tuple(t.shape)}")
    if logits.device != bitmask.device:
        raise ValueError(f"bitmask is on {bitmask.device}, logits on {logits.device}")
    logits2d = logits.unsqueeze(0) if logits.dim() == 1 else logits
    bitmask2d = bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask
    if logits2d.shape[0] != bitmask2d.shape[0]:
        raise ValueError(
            f"batch mismatch: logits {tuple(logits.shape)} has {logits2d.shape[0]} rows, "
            f"bitmask {tuple(bitmask.shape)} has {bitmask2d.shape[0]}"
        )
    words = bitmask2d.shape[1]
    vocab = logits2d.shape[1] if vocab_size is None else int(vocab_size)
    if vocab < 0:
        raise ValueError(f"vocab_size must be >= 0, got {vocab}")
    if vocab > 32 * words:
        raise ValueError(
            f"bitmask too narrow for vocab_size {vocab}: expected at least "
            f"{bitmask_words(vocab)} words per row, got {words}"
        )
    return logits2d, bitmask2d, vocab


def _row_indices(indices: object, rows: int, device: torch.device) -> torch.Tensor | None:
    if indices is None:
        return None
    idx = torch.as_tensor(indices, device=device)
    if idx.dim() != 1 or (idx.numel() > 0 and (idx.is_floating_point() or idx.dtype == torch.bool)):
        raise TypeError(
            f"indices must be a 1-D sequence of ints, got {idx.dtype} {tuple(idx.shape)}"
        )
    idx = idx.to(torch.int64).contiguous()
    if idx.numel() > 0 and (int(idx.min()) < 0 or int(idx.max()) >= rows):
        raise ValueError(f"indices out of range for a batch of {rows} rows: {idx.tolist()}")
    return idx


def apply_bitmask(
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    *,
    indices: object = None,
    vocab_size: int | None = None,
) -> None:
    """Sets the logits of disallowed tokens to ``-inf``, in place; the semantics of
    :func:`gbnf_sampler.apply_bitmask` (xgrammar's layout, ``indices``, padded logits)."""
    logits2d, bitmask2d, vocab = _check(logits, bitmask, vocab_size)
    idx = _row_indices(indices, logits2d.shape[0], logits.device)
    if idx is not None and idx.numel() == 0:
        return
    if bitmask2d.shape[1] > 0 and bitmask2d.stride(1) != 1:
        bitmask2d = bitmask2d.contiguous()
    if logits.device.type == "cpu":
        _apply_cpu(logits2d, bitmask2d, vocab, idx)
    elif logits.device.type == "cuda" and _cuda.available():
        _apply_cuda(logits2d, bitmask2d, vocab, idx)
    else:
        _apply_torch(logits2d, bitmask2d, vocab, idx)


def _apply_cpu(
    logits: torch.Tensor, bitmask: torch.Tensor, vocab: int, idx: torch.Tensor | None
) -> None:
    _core._unsafe_apply_bitmask(
        logits.data_ptr(), _DTYPE_NAMES[logits.dtype], logits.shape[0], logits.shape[1],
        logits.stride(0), logits.stride(1), bitmask.data_ptr(), bitmask.shape[1],
        bitmask.stride(0), vocab,
        0 if idx is None else idx.data_ptr(), 0 if idx is None else idx.numel(),
    )  # fmt: skip


def _apply_cuda(
    logits: torch.Tensor, bitmask: torch.Tensor, vocab: int, idx: torch.Tensor | None
) -> None:
    with torch.cuda.device(logits.device):
        _cuda.apply_bitmask_cuda(
            logits.data_ptr(),
            bitmask.data_ptr(),
            dtype=_DTYPE_NAMES[logits.dtype],
            rows=logits.shape[0],
            cols=logits.shape[1],
            words=bitmask.shape[1],
            vocab_size=vocab,
            logits_strides=(logits.stride(0), logits.stride(1)),
            bitmask_row_stride=bitmask.stride(0),
            indices_ptr=0 if idx is None else idx.data_ptr(),
            num_indices=0 if idx is None else idx.numel(),
            stream=torch.cuda.current_stream(logits.device).cuda_stream,
        )


def _apply_torch(
    logits: torch.Tensor, bitmask: torch.Tensor, vocab: int, idx: torch.Tensor | None
) -> None:
    """The vectorized torch fallback (any device): unpack the bits, masked_fill."""
    rows, cols = logits.shape
    limit = min(vocab, 32 * bitmask.shape[1], cols)
    shifts = torch.arange(32, dtype=torch.int32, device=bitmask.device)
    bits = ((bitmask.unsqueeze(-1) >> shifts) & 1).reshape(rows, -1)
    allowed = torch.zeros((rows, cols), dtype=torch.bool, device=logits.device)
    allowed[:, :limit] = bits[:, :limit].bool()
    if idx is None:
        logits.masked_fill_(~allowed, float("-inf"))
    else:
        logits[idx] = logits[idx].masked_fill(~allowed[idx], float("-inf"))
