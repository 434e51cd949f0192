// Bit tricks on 32-bit words shared by the bitmask kernels (internal).
#pragma once

#include <cstdint>

namespace gbnf::detail {

inline int PopCount(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcount(x);
#else
  int n = 0;
  for (; x != 0; x &= x - 1) ++n;
  return n;
#endif
}

// Index of the lowest set bit; x must not be 0.
inline int CountTrailingZeros(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctz(x);
#else
  int n = 0;
  for (; (x & 1u) == 0; x >>= 1) ++n;
  return n;
#endif
}

// The low `n` bits set, for n in [0, 32].
inline uint32_t LowBits(int64_t n) {
  return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
}

}  // namespace gbnf::detail
