// A set of small integers (token ids, or positions in the token trie) stored in the smaller of
// two forms: a sorted list or a bitset over [0, universe). Immutable once built. The words live
// in the set itself, or in memory it only views (a memory-mapped cache file, kept alive by the
// set's `keep` reference). A bitset also records its long runs of all-zero or all-one words, so
// that writing it over a mask row stores those runs instead of copying them (see CopyInto).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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
  // A view of `num_words` words at `words` (a list of `count` members, or a bitset), owned by
  // `keep`. The caller has checked the words (members < universe, no padding bits).
  static TokenSet View(const uint32_t* words, size_t num_words, size_t count, bool bitset,
                       std::shared_ptr<const void> keep);

  TokenSet(const TokenSet& o) { *this = o; }
  TokenSet& operator=(const TokenSet& o);
  TokenSet(TokenSet&& o) noexcept { *this = std::move(o); }
  TokenSet& operator=(TokenSet&& o) noexcept;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  bool is_bitset() const { return bitset_; }
  // The stored words: a list's members, or the bitset's words.
  const uint32_t* words() const { return data_; }
  size_t num_words() const { return num_words_; }
  // Heap bytes owned by the set (a view owns only its runs' index).
  size_t MemoryBytes() const {
    return owned_.capacity() * 4 + uniform_.capacity() * sizeof(UniformRun);
  }
  // Members, ascending.
  std::vector<uint32_t> Members() const;

  // SetBit(words, v) for every member v. `words` covers the universe.
  void OrInto(uint32_t* words) const;
  // A bitset's words written over words[0, num_words()). A 262k-token row is 32 KiB: copying it
  // reads and writes 64 KiB, more than a core's L1, while storing a uniform run only writes, so a
  // nearly all-ones row (a free stretch's) costs about a third of a copy.
  void CopyInto(uint32_t* words) const;

 private:
  // Words [begin, end) all equal `value` (0 or ~0u).
  struct UniformRun {
    uint32_t begin;
    uint32_t end;
    uint32_t value;
  };
  // Runs shorter than this are copied with the words around them (a store of a few cache lines
  // gains nothing over a copy).
  static constexpr size_t kMinUniformRunWords = 64;
  // Smaller bitsets are not searched for runs: a copy of 24 KiB (a 196k-token row) stays within
  // a core's L1 with its source, where storing instead of copying saves nothing.
  static constexpr size_t kMinRunSearchWords = 6144;

  void Own(std::vector<uint32_t>&& words, bool bitset);
  void FindUniformRuns();

  std::vector<uint32_t> owned_;
  std::shared_ptr<const void> keep_;
  std::vector<UniformRun> uniform_;  // a bitset's, ascending; empty when none is long enough
  const uint32_t* data_ = nullptr;
  size_t num_words_ = 0;
  size_t size_ = 0;
  bool bitset_ = false;
};

}  // namespace gbnf::detail
