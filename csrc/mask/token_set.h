// A set of small integers (token ids, or positions in the token trie) stored in the smaller of
// two forms: a sorted list or a bitset over [0, universe). Immutable once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/bits.h"

namespace gbnf::detail {

class TokenSet {
 public:
  TokenSet() = default;
  // `sorted` ascending and unique, every value < universe.
  TokenSet(const std::vector<uint32_t>& sorted, size_t universe);
  // From a bitset of WordsFor(universe) words holding `count` members (moved in when kept).
  TokenSet(std::vector<uint32_t>&& bits, size_t count, size_t universe);

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  bool is_bitset() const { return !bits_.empty(); }
  size_t MemoryBytes() const { return list_.capacity() * 4 + bits_.capacity() * 4; }

  // SetBit(words, v) for every member v. `words` covers the universe.
  void OrInto(uint32_t* words) const;

 private:
  std::vector<uint32_t> list_;
  std::vector<uint32_t> bits_;
  size_t size_ = 0;
};

}  // namespace gbnf::detail
