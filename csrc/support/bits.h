// Bits in arrays of 32-bit words: the one definition of the bitmask layout (bit i of word j is
// element 32 * j + i, xgrammar's layout) and of the bit tricks that masks, trie walks and kernels
// use. Internal; the public bitmask.h API is implemented with it. Usable from CUDA device code.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GBNF_HOST_DEVICE __host__ __device__
#else
#define GBNF_HOST_DEVICE
#endif

namespace gbnf::detail {

inline constexpr uint32_t kWordBits = 32;

// Number of words holding `n` bits (n >= 0). Written so that no n overflows (SIZE_MAX and
// INT64_MAX included).
template <typename Index>
GBNF_HOST_DEVICE constexpr Index WordsFor(Index n) {
  return n / kWordBits + (n % kWordBits != 0 ? 1 : 0);
}

// The word holding bit `i`, and i's position inside it (i >= 0).
template <typename Index>
GBNF_HOST_DEVICE constexpr Index WordOf(Index i) {
  return i / kWordBits;
}
template <typename Index>
GBNF_HOST_DEVICE constexpr uint32_t BitInWord(Index i) {
  return static_cast<uint32_t>(i % kWordBits);
}
template <typename Index>
GBNF_HOST_DEVICE constexpr uint32_t BitOf(Index i) {
  return uint32_t{1} << BitInWord(i);
}

template <typename Index>
GBNF_HOST_DEVICE inline bool TestBit(const uint32_t* words, Index i) {
  return (words[WordOf(i)] & BitOf(i)) != 0;
}
template <typename Index>
GBNF_HOST_DEVICE inline void SetBit(uint32_t* words, Index i) {
  words[WordOf(i)] |= BitOf(i);
}
template <typename Index>
GBNF_HOST_DEVICE inline void ClearBit(uint32_t* words, Index i) {
  words[WordOf(i)] &= ~BitOf(i);
}

// The low `n` bits set, for n in [0, 32].
GBNF_HOST_DEVICE constexpr uint32_t LowBits(uint32_t n) {
  return n >= kWordBits ? ~uint32_t{0} : (uint32_t{1} << n) - 1u;
}

// Sets bits [from, to): the partial words bit by bit, the whole ones at once.
inline void SetBitRange(uint32_t* words, size_t from, size_t to) {
  for (; from < to && BitInWord(from) != 0; ++from) SetBit(words, from);
  for (; from + kWordBits <= to; from += kWordBits) words[WordOf(from)] = ~uint32_t{0};
  for (; from < to; ++from) SetBit(words, from);
}

inline int PopCount(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcount(x);
#else
  int n = 0;
  for (; x != 0; x &= x - 1) ++n;
  return n;
#endif
}

inline int PopCount(uint64_t x) {
  return PopCount(static_cast<uint32_t>(x)) + PopCount(static_cast<uint32_t>(x >> 32));
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

inline int CountTrailingZeros(uint64_t x) {
  const auto low = static_cast<uint32_t>(x);
  return low != 0 ? CountTrailingZeros(low)
                  : 32 + CountTrailingZeros(static_cast<uint32_t>(x >> 32));
}

}  // namespace gbnf::detail
