"""Bitmasks that are not numpy arrays: CPU torch tensors, any object with ``__dlpack__``, and
buffer-protocol objects are written in place (the writes land in the caller's memory), with
the same checks as numpy arrays; GPU memory and wrong dtypes are clear errors."""

from __future__ import annotations

import array
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs

VOCAB = gs.Vocab([b"a", b"b", b"ab", b"c", b""], eos_ids=[3])


@pytest.fixture
def matchers() -> list[gs.Matcher]:
    compiled = gs.compile(gs.Grammar.from_gbnf('root ::= "ab" | "c"'), VOCAB)
    second = gs.Matcher(compiled)
    assert second.accept_token(0)
    return [gs.Matcher(compiled), second]


def _expected(matcher: gs.Matcher) -> int:
    row = gs.allocate_bitmask(1, VOCAB.size)
    matcher.fill_mask(row, 0)
    return int(row[0, 0])


class DlpackOnly:
    """An array known only through the DLPack protocol (like JAX or CuPy host arrays)."""

    def __init__(self, data: np.ndarray, device: tuple[int, int] = (1, 0)) -> None:
        self.data, self.device_pair = data, device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device_pair


def test_dlpack_arrays_are_filled_in_place(matchers: list[gs.Matcher]) -> None:
    data = np.zeros((3, 1), dtype=np.int32)
    matchers[0].fill_mask(DlpackOnly(data), 2)
    gs.fill_masks(matchers, DlpackOnly(data), rows=[1, 0])
    assert data[:, 0].tolist() == [
        _expected(matchers[1]),
        _expected(matchers[0]),
        _expected(matchers[0]),
    ]


def test_buffer_protocol_objects_are_filled_in_place(matchers: list[gs.Matcher]) -> None:
    words = array.array("i", [0])
    matchers[1].fill_mask(words)
    assert words[0] == _expected(matchers[1])
    with pytest.raises(TypeError, match="dtype int32, got int64"):
        matchers[1].fill_mask(array.array("q", [0]))
    with pytest.raises(ValueError, match="read-only"):
        matchers[1].fill_mask(memoryview(b"\0\0\0\0").cast("i"))


def test_gpu_memory_and_non_arrays_are_refused(matchers: list[gs.Matcher]) -> None:
    with pytest.raises(ValueError, match=r"CPU memory, got one on DLPack device \(2, 0\)"):
        matchers[0].fill_mask(DlpackOnly(np.zeros(1, np.int32), (2, 0)))
    with pytest.raises(TypeError, match=r"fill_masks: bitmask must be an array.*got str"):
        gs.fill_masks(matchers, "words")


def test_rows_are_checked(matchers: list[gs.Matcher]) -> None:
    data = np.full((2, 1), 7, dtype=np.int32)
    with pytest.raises(ValueError, match="row 1 is given twice"):
        gs.fill_masks(matchers, data, rows=[1, 1])
    with pytest.raises(ValueError, match="outside the bitmask's 2 rows"):
        gs.fill_masks(matchers, data, rows=[0, 2])
    with pytest.raises(ValueError, match="2 matchers but 1 rows"):
        gs.fill_masks(matchers, data, rows=[0])
    assert (data == 7).all()  # nothing written by a refused call


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip(
        "torch", reason="torch is optional (pip install gbnf-sampler[torch])"
    )


def test_torch_tensors_are_filled_without_a_copy(torch: Any, matchers: list[gs.Matcher]) -> None:
    tensor = torch.zeros((4, 1), dtype=torch.int32)
    pointer = tensor.data_ptr()
    matchers[1].fill_mask(tensor, 3)
    gs.fill_masks(matchers, tensor)
    assert tensor.data_ptr() == pointer
    assert tensor[:, 0].tolist() == [
        _expected(matchers[0]),
        _expected(matchers[1]),
        0,
        _expected(matchers[1]),
    ]
    view = tensor[1:3]  # a view: its writes land in the base tensor
    gs.fill_masks(matchers, view, rows=[1, 0])
    assert tensor[1:3, 0].tolist() == [_expected(matchers[1]), _expected(matchers[0])]


def test_torch_dtype_and_layout_errors(torch: Any, matchers: list[gs.Matcher]) -> None:
    with pytest.raises(TypeError, match="dtype int32, got int64"):
        matchers[0].fill_mask(torch.zeros((1, 1), dtype=torch.int64))
    with pytest.raises(ValueError, match="rows must be contiguous"):
        matchers[0].fill_mask(torch.zeros((1, 2), dtype=torch.int32)[:, ::2])


def test_apply_bitmask_takes_cpu_tensors(torch: Any) -> None:
    logits = torch.zeros((2, VOCAB.size))
    bitmask = torch.tensor([[0b101], [-1]], dtype=torch.int32)
    gs.apply_bitmask(logits, bitmask)
    inf = float("-inf")
    assert logits.tolist() == [[0.0, inf, 0.0, inf, inf], [0.0] * VOCAB.size]
    with pytest.raises(TypeError, match=r"gbnf_sampler\.torch\.apply_bitmask"):
        gs.apply_bitmask(torch.zeros((1, 5), dtype=torch.bfloat16), bitmask[:1])
