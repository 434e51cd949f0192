// The CPU kernel: apply a token bitmask to logits in place (-inf where a token is disallowed).
//
// Work goes word by word (32 tokens). Grammar masks are mostly runs of all-allowed words
// (skipped) and all-disallowed words (a plain fill); mixed words take a branch-free blend when
// the row is contiguous (the compiler vectorizes it), or visit only the disallowed bits when it
// is strided.
#include <algorithm>
#include <limits>

#include "gbnf_sampler/bitmask.h"
#include "support/bits.h"

namespace gbnf {
namespace {

using detail::kWordBits;

constexpr uint32_t kAllAllowed = 0xFFFFFFFFu;

template <typename T, bool kContiguous>
void Fill(T* p, int64_t stride, int64_t n, T value) {
  if constexpr (kContiguous) {
    for (int64_t i = 0; i < n; ++i) p[i] = value;
  } else {
    for (int64_t i = 0; i < n; ++i) p[i * stride] = value;
  }
}

// Writes `value` at the elements whose bit is set in `bits`.
template <typename T>
void FillBits(T* p, int64_t stride, uint32_t bits, T value) {
  for (; bits != 0; bits &= bits - 1) p[detail::CountTrailingZeros(bits) * stride] = value;
}

// 1 << i for each lane i. Testing `bits & kLaneBits.bit[i]` (a constant vector) instead of
// `bits >> i` (a per-lane shift, which SSE2 lacks) is what lets GCC and Clang vectorize BlendWord.
struct LaneBits {
  uint32_t bit[kWordBits];
};
constexpr LaneBits MakeLaneBits() {
  LaneBits t{};
  for (uint32_t i = 0; i < kWordBits; ++i) t.bit[i] = detail::BitOf(i);
  return t;
}
constexpr LaneBits kLaneBits = MakeLaneBits();

// A contiguous word of kWordBits elements: keep where the bit is set, else `neg_inf`.
template <typename T>
void BlendWord(T* p, uint32_t bits, T neg_inf) {
  for (uint32_t i = 0; i < kWordBits; ++i) p[i] = (bits & kLaneBits.bit[i]) != 0 ? p[i] : neg_inf;
}

template <typename T, bool kContiguous>
void MaskWord(T* p, int64_t stride, uint32_t bits, T neg_inf) {
  if (bits == kAllAllowed) return;
  if (bits == 0) {
    Fill<T, kContiguous>(p, stride, kWordBits, neg_inf);
  } else if constexpr (kContiguous) {
    BlendWord(p, bits, neg_inf);
  } else {
    FillBits(p, stride, ~bits, neg_inf);
  }
}

struct RowShape {
  int64_t stride;       // element stride of the logits row
  int64_t cols;         // logits width
  int64_t limit;        // tokens below it consult the mask; the rest are disallowed
  int64_t word_stride;  // stride of the bitmask row, in words
};

template <typename T, bool kContiguous>
void ApplyRow(T* row, const int32_t* mask, const RowShape& s, T neg_inf) {
  const int64_t stride = kContiguous ? 1 : s.stride;
  const int64_t full_words = detail::WordOf(s.limit);
  for (int64_t w = 0; w < full_words; ++w) {
    const auto bits = static_cast<uint32_t>(mask[w * s.word_stride]);
    MaskWord<T, kContiguous>(row + w * kWordBits * stride, stride, bits, neg_inf);
  }
  const uint32_t tail = detail::BitInWord(s.limit);
  if (tail != 0) {
    const auto bits = static_cast<uint32_t>(mask[full_words * s.word_stride]);
    T* p = row + full_words * kWordBits * stride;
    FillBits(p, stride, ~bits & detail::LowBits(tail), neg_inf);
  }
  if (s.cols > s.limit) Fill<T, kContiguous>(row + s.limit * stride, stride, s.cols - s.limit, neg_inf);
}

template <typename T>
void ApplyRows(const LogitsView& logits, const BitmaskView& bitmask, int64_t vocab_size,
               const int64_t* row_indices, int64_t num_indices, T neg_inf) {
  const int64_t limit = std::min({vocab_size, bitmask.words * kBitmaskWordBits, logits.cols});
  const RowShape shape{logits.col_stride, logits.cols, std::max<int64_t>(limit, 0),
                       bitmask.word_stride};
  T* base = static_cast<T*>(logits.data);
  auto apply_one = [&](int64_t r) {
    T* row = base + r * logits.row_stride;
    const int32_t* mask = bitmask.data + r * bitmask.row_stride;
    if (shape.stride == 1) {
      ApplyRow<T, true>(row, mask, shape, neg_inf);
    } else {
      ApplyRow<T, false>(row, mask, shape, neg_inf);
    }
  };
  if (row_indices == nullptr) {
    for (int64_t r = 0; r < logits.rows; ++r) apply_one(r);
  } else {
    for (int64_t i = 0; i < num_indices; ++i) apply_one(row_indices[i]);
  }
}

}  // namespace

void ApplyBitmask(const LogitsView& logits, const BitmaskView& bitmask, int64_t vocab_size,
                  const int64_t* row_indices, int64_t num_indices) {
  switch (logits.dtype) {
    case LogitsDtype::kFloat32:
      ApplyRows<float>(logits, bitmask, vocab_size, row_indices, num_indices,
                       -std::numeric_limits<float>::infinity());
      break;
    case LogitsDtype::kFloat16:
      ApplyRows<uint16_t>(logits, bitmask, vocab_size, row_indices, num_indices,
                          kFloat16NegInfBits);
      break;
    case LogitsDtype::kBFloat16:
      ApplyRows<uint16_t>(logits, bitmask, vocab_size, row_indices, num_indices,
                          kBFloat16NegInfBits);
      break;
  }
}

}  // namespace gbnf
