// The token side of MatcherLimits::max_whitespace: which tokens keep every run of whitespace
// bytes within the bound, given the run the text already ends with.
//
// Per token: the whitespace run it starts with (lead), the longest one inside it, the one it
// ends with, and whether it is whitespace only. After a run r, a token fits when its inner and
// final runs are within the bound and r plus its lead (its whole length, for an all-whitespace
// token) is too: the same rule the byte matcher applies. So a token's "key" (lead, or length)
// must be at most the budget max - r; the sets for small budgets are precomputed bitsets, the
// rare tokens with a key of kDenseBudgets or more are cleared one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "gbnf_sampler/vocab.h"

namespace gbnf::detail {

class WhitespaceFilter {
 public:
  // Budgets below this get a bitset of their own.
  static constexpr uint32_t kDenseBudgets = 64;

  WhitespaceFilter(const Vocab& vocab, uint32_t max_whitespace);
  // The filter of (vocab, max_whitespace), built once while the vocabulary lives: a scan of the
  // whole vocabulary and up to kDenseBudgets bitsets, which every compile of a JSON Schema
  // grammar (bounded by default) would otherwise pay again. Thread-safe.
  static std::shared_ptr<const WhitespaceFilter> Shared(const std::shared_ptr<const Vocab>& vocab,
                                                        uint32_t max_whitespace);

  // Clears from the token bitmask `words` the tokens that would make a run longer than the
  // bound after a text ending in `run` whitespace bytes. EOS tokens are never cleared.
  void Apply(uint32_t* words, uint32_t run) const;
  size_t Bytes() const;

 private:
  uint32_t max_;
  bool fits_all_ = true;                        // no token is ever refused (`always_` unused)
  std::vector<uint32_t> always_;                // tokens allowed when the budget is large
  std::vector<std::vector<uint32_t>> dense_;    // [k]: tokens allowed with budget k
  std::vector<std::pair<uint32_t, uint32_t>> sparse_;  // (key, token), key >= kDenseBudgets,
                                                        // by key, descending
};

}  // namespace gbnf::detail
