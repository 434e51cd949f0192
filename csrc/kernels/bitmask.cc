// Small helpers on bitmask rows: fill and count.
#include "gbnf_sampler/bitmask.h"

#include "kernels/bits.h"

namespace gbnf {

void FillBitmask(int32_t* bitmask, int64_t words, bool allowed) {
  const int32_t value = allowed ? -1 : 0;
  for (int64_t w = 0; w < words; ++w) bitmask[w] = value;
}

int64_t CountAllowed(const int32_t* bitmask, int64_t vocab_size) {
  const auto* words = reinterpret_cast<const uint32_t*>(bitmask);
  const int64_t full_words = vocab_size / kBitmaskWordBits;
  int64_t count = 0;
  for (int64_t w = 0; w < full_words; ++w) count += detail::PopCount(words[w]);
  const int64_t tail = vocab_size % kBitmaskWordBits;
  if (tail != 0) count += detail::PopCount(words[full_words] & detail::LowBits(tail));
  return count;
}

}  // namespace gbnf
