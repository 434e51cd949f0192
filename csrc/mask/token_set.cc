#include "mask/token_set.h"

namespace gbnf::detail {

TokenSet::TokenSet(const std::vector<uint32_t>& sorted, size_t universe) : size_(sorted.size()) {
  // A list costs a word a member, a bitset a bit per element of the universe.
  if (sorted.size() * kWordBits < universe) {
    list_ = sorted;
    return;
  }
  bits_.assign(WordsFor(universe), 0);
  for (uint32_t v : sorted) SetBit(bits_.data(), v);
}

TokenSet::TokenSet(std::vector<uint32_t>&& bits, size_t count, size_t universe) : size_(count) {
  if (count * kWordBits >= universe) {
    bits_ = std::move(bits);
    return;
  }
  list_.reserve(count);
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint32_t word = bits[w]; word != 0; word &= word - 1) {
      list_.push_back(static_cast<uint32_t>(w * kWordBits + CountTrailingZeros(word)));
    }
  }
}

void TokenSet::OrInto(uint32_t* words) const {
  if (!bits_.empty()) {
    const uint32_t* src = bits_.data();
    const size_t n = bits_.size();
    for (size_t i = 0; i < n; ++i) words[i] |= src[i];
    return;
  }
  for (uint32_t v : list_) SetBit(words, v);
}

}  // namespace gbnf::detail
