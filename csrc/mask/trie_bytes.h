// The token trie's byte strings stored in trie order (position p's bytes right after position
// p-1's), so that walks read them sequentially instead of jumping through the vocabulary in id
// order (a cache miss per token on 128k+ vocabularies). One copy per vocabulary content, shared
// by every CompiledGrammar of that vocabulary (a registry of weak references keyed by the
// vocabulary fingerprint and size).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gbnf_sampler/vocab.h"

namespace gbnf::detail {

class TrieBytes {
 public:
  static std::shared_ptr<const TrieBytes> For(const std::shared_ptr<const Vocab>& vocab);
  TrieBytes(const TokenTrie& trie, std::weak_ptr<const Vocab> source);

  // Holds exactly `vocab`'s trie bytes.
  bool Holds(const Vocab& vocab) const;

  std::string_view at(size_t pos) const {
    return std::string_view(bytes_.data() + offsets_[pos], offsets_[pos + 1] - offsets_[pos]);
  }

 private:
  std::string bytes_;
  std::vector<uint32_t> offsets_;  // trie size + 1
  std::weak_ptr<const Vocab> source_;  // the vocabulary it was built from
};

// A trie walk over the positions [from, to) (see TokenTrie's invariants), reading bytes from
// TrieBytes; the first position's bytes are all walked (nothing is held at `from`).
// `visit(pos, keep, add)` returns how many bytes of `add` were taken; the walk then moves to the
// next position (all taken) or past every token sharing the refused prefix, and calls
// `skipped(from, to)` for the positions jumped over (refused with the same prefix).
template <typename Visit, typename Skipped>
void WalkTrieRange(const TokenTrie& trie, const TrieBytes& tb, size_t from, size_t to,
                   Visit&& visit, Skipped&& skipped) {
  uint32_t held = 0;
  for (size_t pos = from; pos < to;) {
    const uint32_t lcp = pos == from ? 0 : trie.lcp(pos);
    const uint32_t keep = held < lcp ? held : lcp;
    const std::string_view bytes = tb.at(pos);
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
void WalkTrie(const TokenTrie& trie, const TrieBytes& tb, Visit&& visit, Skipped&& skipped) {
  WalkTrieRange(trie, tb, 0, trie.size(), std::forward<Visit>(visit),
                std::forward<Skipped>(skipped));
}

}  // namespace gbnf::detail
