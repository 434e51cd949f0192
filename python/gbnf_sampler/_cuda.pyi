# Type stubs of the optional CUDA extension module. Keep in step with csrc/bindings/cuda_module.cc.

def apply_bitmask(
    logits_ptr: int,
    dtype: str,
    rows: int,
    cols: int,
    row_stride: int,
    col_stride: int,
    bitmask_ptr: int,
    words: int,
    bitmask_row_stride: int,
    vocab_size: int,
    indices_ptr: int,
    num_indices: int,
    stream: int,
) -> None: ...
def device_count() -> int: ...
def _malloc(nbytes: int) -> int: ...
def _free(ptr: int) -> None: ...
def _memcpy(dst: int, src: int, nbytes: int) -> None: ...
def synchronize() -> None: ...
