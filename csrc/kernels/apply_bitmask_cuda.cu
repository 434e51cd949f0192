// The CUDA kernel: apply a token bitmask to device logits in place.
//
// One thread per (row, token): the 32 threads of a warp that share a bitmask word read it once
// (a broadcast), and only disallowed tokens are written, so the logits are never read. Rows go
// along grid.y (a grid-stride loop past 65535 rows), tokens along grid.x.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "kernels/apply_bitmask_cuda.h"
#include "support/bits.h"

namespace gbnf {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int64_t kMaxGridY = 65535;

// Everything the kernel reads, passed by value.
struct KernelArgs {
  const int32_t* bitmask;
  int64_t bitmask_row_stride;
  int64_t word_stride;
  const int64_t* row_indices;  // null: row i is row i
  int64_t rows;                // rows of the logits (bounds for row_indices)
  int64_t rows_to_mask;
  int64_t cols;
  int64_t limit;  // tokens below it consult the bitmask; the rest are disallowed
  int64_t row_stride;
  int64_t col_stride;
};

__device__ bool Allowed(const KernelArgs& a, int64_t row, int64_t col) {
  if (col >= a.limit) return false;
  const int32_t word = a.bitmask[row * a.bitmask_row_stride + detail::WordOf(col) * a.word_stride];
  return (static_cast<uint32_t>(word) & detail::BitOf(col)) != 0;
}

template <typename T>
__global__ void ApplyBitmaskKernel(T* logits, KernelArgs a, T neg_inf) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= a.cols) return;
  for (int64_t i = blockIdx.y; i < a.rows_to_mask; i += gridDim.y) {
    const int64_t row = a.row_indices != nullptr ? a.row_indices[i] : i;
    if (row < 0 || row >= a.rows) continue;
    if (!Allowed(a, row, col)) logits[row * a.row_stride + col * a.col_stride] = neg_inf;
  }
}

template <typename T>
cudaError_t Launch(void* data, const KernelArgs& args, T neg_inf, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((args.cols + kThreadsPerBlock - 1) / kThreadsPerBlock),
                  static_cast<unsigned>(std::min(args.rows_to_mask, kMaxGridY)));
  ApplyBitmaskKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(static_cast<T*>(data), args,
                                                                neg_inf);
  return cudaGetLastError();
}

}  // namespace

int ApplyBitmaskCuda(const LogitsView& logits, const BitmaskView& bitmask, int64_t vocab_size,
                     const int64_t* device_row_indices, int64_t num_indices, uintptr_t stream) {
  KernelArgs args{bitmask.data,
                  bitmask.row_stride,
                  bitmask.word_stride,
                  device_row_indices,
                  logits.rows,
                  device_row_indices != nullptr ? num_indices : logits.rows,
                  logits.cols,
                  std::min({vocab_size, bitmask.words * kBitmaskWordBits, logits.cols}),
                  logits.row_stride,
                  logits.col_stride};
  if (args.cols <= 0 || args.rows_to_mask <= 0) return cudaSuccess;
  auto* s = reinterpret_cast<cudaStream_t>(stream);
  switch (logits.dtype) {
    case LogitsDtype::kFloat32:
      return Launch<float>(logits.data, args, -std::numeric_limits<float>::infinity(), s);
    case LogitsDtype::kFloat16:
      return Launch<uint16_t>(logits.data, args, kFloat16NegInfBits, s);
    case LogitsDtype::kBFloat16:
      return Launch<uint16_t>(logits.data, args, kBFloat16NegInfBits, s);
  }
  return cudaErrorInvalidValue;
}

const char* CudaErrorString(int code) {
  return cudaGetErrorString(static_cast<cudaError_t>(code));
}

}  // namespace gbnf
