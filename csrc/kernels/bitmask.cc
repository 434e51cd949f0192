// The public bitmask helpers, on the one bit layout of support/bits.h.
#include "gbnf_sampler/bitmask.h"

#include "support/bits.h"

namespace gbnf {

static_assert(kBitmaskWordBits == detail::kWordBits, "one bitmask layout");

int64_t BitmaskWords(int64_t vocab_size) { return detail::WordsFor(vocab_size); }

// Words are read and written as uint32_t (same object, permitted alias) so that bit 31 never
// touches signed arithmetic.
bool TestBit(const int32_t* bitmask, int64_t token_id) {
  return detail::TestBit(reinterpret_cast<const uint32_t*>(bitmask), token_id);
}
void SetBit(int32_t* bitmask, int64_t token_id) {
  detail::SetBit(reinterpret_cast<uint32_t*>(bitmask), token_id);
}
void ClearBit(int32_t* bitmask, int64_t token_id) {
  detail::ClearBit(reinterpret_cast<uint32_t*>(bitmask), token_id);
}

void FillBitmask(int32_t* bitmask, int64_t words, bool allowed) {
  const int32_t value = allowed ? -1 : 0;
  for (int64_t w = 0; w < words; ++w) bitmask[w] = value;
}

int64_t CountAllowed(const int32_t* bitmask, int64_t vocab_size) {
  const auto* words = reinterpret_cast<const uint32_t*>(bitmask);
  const int64_t full_words = detail::WordOf(vocab_size);
  int64_t count = 0;
  for (int64_t w = 0; w < full_words; ++w) count += detail::PopCount(words[w]);
  const uint32_t tail = detail::BitInWord(vocab_size);
  if (tail != 0) count += detail::PopCount(words[full_words] & detail::LowBits(tail));
  return count;
}

}  // namespace gbnf
