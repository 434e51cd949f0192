// Trie walks over ranges of positions, with prefix reuse and skipping of refused subtrees: the
// loop every classification and reference walk runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "gbnf_sampler/vocab.h"

namespace gbnf::detail {

// A trie walk over the positions [from, to) (see TokenTrie's invariants); the first position's
// bytes are all walked (nothing is held at `from`).
// `visit(pos, keep, add)` returns how many bytes of `add` were taken; the walk then moves to the
// next position (all taken) or past every token sharing the refused prefix, and calls
// `skipped(from, to)` for the positions jumped over (refused with the same prefix).
template <typename Visit, typename Skipped>
void WalkTrieRange(const TokenTrie& trie, size_t from, size_t to, Visit&& visit,
                   Skipped&& skipped) {
  uint32_t held = 0;
  for (size_t pos = from; pos < to;) {
    const uint32_t lcp = pos == from ? 0 : trie.lcp(pos);
    const uint32_t keep = held < lcp ? held : lcp;
    const std::string_view bytes = trie.bytes(pos);
    const size_t n = visit(pos, keep, std::string_view(bytes.data() + keep, bytes.size() - keep));
    if (n == bytes.size() - keep) {
      held = static_cast<uint32_t>(bytes.size());
      ++pos;
      continue;
    }
    held = static_cast<uint32_t>(keep + n);
    size_t next = trie.NextDiverging(pos, held + 1);
    if (next > to) next = to;
    if (next > pos + 1) skipped(pos + 1, next);
    pos = next;
  }
}

// The walk over every position.
template <typename Visit, typename Skipped>
void WalkTrie(const TokenTrie& trie, Visit&& visit, Skipped&& skipped) {
  WalkTrieRange(trie, 0, trie.size(), std::forward<Visit>(visit),
                std::forward<Skipped>(skipped));
}

}  // namespace gbnf::detail
