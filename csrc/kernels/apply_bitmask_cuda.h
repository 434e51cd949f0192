// The CUDA kernel's host entry point (internal to the optional _cuda module). Free of CUDA
// headers: streams travel as integers, errors as cudaError_t values (0 = success).
#pragma once

#include <cstdint>

#include "gbnf_sampler/bitmask.h"

namespace gbnf {

// The CUDA twin of ApplyBitmask: the same semantics on device memory, launched on `stream`
// (a cudaStream_t; 0 = the legacy default stream) without synchronizing. `logits.data` and
// `bitmask.data` are device pointers; `device_row_indices` (null: all rows) is a device array of
// `num_indices` int64 rows, where rows outside [0, logits.rows) are skipped.
// Returns the launch's cudaError_t as an int.
int ApplyBitmaskCuda(const LogitsView& logits, const BitmaskView& bitmask, int64_t vocab_size,
                     const int64_t* device_row_indices, int64_t num_indices, uintptr_t stream);

// cudaGetErrorString for a code returned above.
const char* CudaErrorString(int code);

}  // namespace gbnf
