// TrieWalk: in-order traversal of a TokenTrie with prefix reuse and subtree skipping.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gbnf_sampler/vocab.h"

namespace gbnf {

TrieWalk::TrieWalk(const TokenTrie& trie) : trie_(&trie) {}

void TrieWalk::MoveTo(size_t pos, uint32_t held) {
  // Positions skipped on the way have lcp >= held (see Reject and Skip), so by (I2) the common
  // prefix of the held bytes and bytes(pos) is min(held, lcp(pos)).
  pos_ = pos;
  keep_ = Done() ? 0 : std::min(held, trie_->lcp(pos));
}

void TrieWalk::CheckNotDone(const char* what) const {
  if (Done()) throw std::logic_error(std::string("TrieWalk::") + what + " called after the end");
}

void TrieWalk::Next() {
  CheckNotDone("Next");
  MoveTo(pos_ + 1, static_cast<uint32_t>(bytes().size()));
}

void TrieWalk::Reject(uint32_t accepted) {
  CheckNotDone("Reject");
  const size_t len = bytes().size();
  if (accepted < keep_ || accepted >= len) {
    throw std::invalid_argument("TrieWalk::Reject(" + std::to_string(accepted) +
                                "): expected a byte count in [" + std::to_string(keep_) + ", " +
                                std::to_string(len) + ")");
  }
  MoveTo(trie_->NextDiverging(pos_, accepted + 1), accepted);
}

void TrieWalk::Skip() {
  CheckNotDone("Skip");
  const auto len = static_cast<uint32_t>(bytes().size());
  const size_t next = pos_ + 1;
  // Duplicates (same bytes) sort right after this token and are still visited.
  const bool duplicate = next < trie_->size() && trie_->lcp(next) == len &&
                         trie_->bytes(next).size() == len;
  MoveTo(duplicate ? next : trie_->subtree_end(pos_), len);
}

}  // namespace gbnf
