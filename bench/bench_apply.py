"""apply_bitmask (C++ kernel) against the plain numpy reference, float32 logits.

python -m pytest bench/bench_apply.py --benchmark-enable    # pytest-benchmark table
python bench/bench_apply.py                                 # median times and ratios

When xgrammar and torch are installed, xgrammar's CPU apply_token_bitmask_inplace on the same
data (as torch tensors sharing the numpy memory) is timed too.

Masks: "random" (every bit a coin flip: every word takes the per-bit path, the worst case) and
"grammar" (what a grammar step looks like: runs of all-disallowed words, runs of all-allowed
words, a few runs of mixed ones).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

import gbnf_sampler as gs

SHAPES = {"1x262144": (1, 262144), "8x128256": (8, 128256)}
MASKS = ["random", "grammar"]


def make_bitmask(kind: str, batch: int, vocab: int, seed: int = 0) -> npt.NDArray[np.int32]:
    rng = np.random.default_rng(seed)
    words = gs.bitmask_words(vocab)
    random_words = rng.integers(0, 2**32, size=(batch, words), dtype=np.uint64).astype(np.uint32)
    if kind == "random":
        return random_words.view(np.int32)
    # Runs of words (mean length 40) of one kind: 85% all-disallowed, 10% all-allowed, 5% mixed.
    boundaries = np.cumsum(rng.geometric(1 / 40, size=words))
    new_run = np.zeros(words, dtype=np.int64)
    new_run[boundaries[boundaries < words]] = 1
    run_index = np.cumsum(new_run)
    run_kind = rng.random((batch, run_index[-1] + 1))[:, run_index]
    out = np.where(run_kind < 0.85, 0, np.where(run_kind < 0.95, 0xFFFFFFFF, random_words))
    return out.astype(np.uint32).view(np.int32)


def numpy_apply(logits: npt.NDArray[np.float32], bitmask: npt.NDArray[np.int32]) -> None:
    """The reference: unpack the bits, np.where, write back."""
    vocab = logits.shape[-1]
    bits = np.unpackbits(bitmask.view(np.uint8), axis=-1, bitorder="little")[..., :vocab]
    logits[...] = np.where(bits.astype(bool), logits, np.float32(-np.inf))


def gs_apply(logits: npt.NDArray[np.float32], bitmask: npt.NDArray[np.int32]) -> None:
    gs.apply_bitmask(logits, bitmask)


def _inputs(shape: str, mask: str) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int32]]:
    batch, vocab = SHAPES[shape]
    logits = np.random.default_rng(1).standard_normal((batch, vocab)).astype(np.float32)
    return logits, make_bitmask(mask, batch, vocab)


@pytest.mark.benchmark(group="apply")
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_apply_kernel(benchmark, shape: str, mask: str) -> None:  # type: ignore[no-untyped-def]
    logits, bitmask = _inputs(shape, mask)
    benchmark(gs_apply, logits, bitmask)


@pytest.mark.benchmark(group="apply")
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_apply_numpy_reference(benchmark, shape: str, mask: str) -> None:  # type: ignore[no-untyped-def]
    logits, bitmask = _inputs(shape, mask)
    benchmark(numpy_apply, logits, bitmask)


def _xgrammar_apply() -> Callable[[npt.NDArray[np.float32], npt.NDArray[np.int32]], None] | None:
    try:
        import torch
        import xgrammar
    except ImportError:
        return None

    def apply(logits: npt.NDArray[np.float32], bitmask: npt.NDArray[np.int32]) -> None:
        xgrammar.apply_token_bitmask_inplace(torch.from_numpy(logits), torch.from_numpy(bitmask))

    return apply


@pytest.mark.benchmark(group="apply")
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_apply_xgrammar(benchmark, shape: str, mask: str) -> None:  # type: ignore[no-untyped-def]
    xgrammar_apply = _xgrammar_apply()
    if xgrammar_apply is None:
        pytest.skip("xgrammar and torch not installed")
    logits, bitmask = _inputs(shape, mask)
    benchmark(xgrammar_apply, logits, bitmask)


def _median_us(fn: Callable[[], None], repeats: int = 200) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _same_result(logits: npt.NDArray[np.float32], bitmask: npt.NDArray[np.int32]) -> bool:
    """The kernel's output equals the numpy reference's on these inputs."""
    ours, reference = logits.copy(), logits.copy()
    gs_apply(ours, bitmask)
    numpy_apply(reference, bitmask)
    return bool(np.array_equal(ours, reference))


def main() -> int:
    xgrammar_apply = _xgrammar_apply()
    wrong: list[str] = []
    header = f"{'shape':<10} {'mask':<8} {'kernel µs':>10} {'numpy µs':>10} {'numpy/kernel':>13}"
    print(header + (f" {'xgrammar µs':>12} {'xgrammar/kernel':>16}" if xgrammar_apply else ""))
    for shape in SHAPES:
        for mask in MASKS:
            logits, bitmask = _inputs(shape, mask)
            if not _same_result(logits, bitmask):
                wrong.append(f"{shape} {mask}")
            kernel = _median_us(lambda: gs_apply(logits, bitmask))  # noqa: B023
            reference = _median_us(lambda: numpy_apply(logits, bitmask), repeats=30)  # noqa: B023
            line = f"{shape:<10} {mask:<8} {kernel:>10.1f} {reference:>10.1f} "
            line += f"{reference / kernel:>12.1f}x"
            if xgrammar_apply is not None:
                xgr = _median_us(lambda: xgrammar_apply(logits, bitmask))  # noqa: B023
                line += f" {xgr:>12.1f} {xgr / kernel:>15.1f}x"
            print(line)
    if wrong:
        print(f"FAILED: the kernel differs from the numpy reference on {wrong}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
