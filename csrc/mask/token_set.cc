#include "mask/token_set.h"

namespace gbnf::detail {

TokenSet::TokenSet(const std::vector<uint32_t>& sorted, size_t universe) : size_(sorted.size()) {
  // A list costs 4 bytes a member, a bitset universe / 8 bytes.
  if (sorted.size() * 32 < universe) {
    list_ = sorted;
    return;
  }
  bits_.assign(WordsFor(universe), 0);
  for (uint32_t v : sorted) SetBit(bits_.data(), v);
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
