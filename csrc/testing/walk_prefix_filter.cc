#include "testing/walk_prefix_filter.h"

#include <algorithm>
#include <stdexcept>

namespace gbnf::detail {
namespace {

// True when some text in the sorted list `texts` starts with `prefix`.
bool StartsSome(const std::vector<std::string>& texts, const std::string& prefix) {
  auto it = std::lower_bound(texts.begin(), texts.end(), prefix);
  return it != texts.end() && it->compare(0, prefix.size(), prefix) == 0;
}

// True when some text in `texts` starts with `prefix` and is longer than it.
bool ExtendsSome(const std::vector<std::string>& texts, const std::string& prefix) {
  for (auto it = std::lower_bound(texts.begin(), texts.end(), prefix);
       it != texts.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
    if (it->size() > prefix.size()) return true;
  }
  return false;
}

}  // namespace

std::vector<TokenId> WalkPrefixFilter(const TokenTrie& trie, const std::vector<std::string>& texts,
                                      size_t* visited) {
  std::vector<std::string> sorted(texts);
  std::sort(sorted.begin(), sorted.end());
  std::vector<TokenId> accepted;
  std::string held;  // the "parser stack": one byte per accepted byte
  size_t count = 0;
  for (TrieWalk w(trie); !w.Done(); ++count) {
    if (w.keep() > held.size()) throw std::logic_error("keep() exceeds the held prefix");
    held.resize(w.keep());
    if (w.bytes().compare(0, held.size(), held) != 0) {
      throw std::logic_error("the kept prefix is not a prefix of the token");
    }
    const std::string_view add = w.push();
    size_t n = 0;
    while (n < add.size() && StartsSome(sorted, held + add[n])) held += add[n++];
    if (n == add.size()) {
      accepted.push_back(w.token_id());
      // Nothing can follow the held bytes: every extension of this token is refused.
      if (ExtendsSome(sorted, held)) {
        w.Next();
      } else {
        w.Skip();
      }
    } else {
      w.Reject(static_cast<uint32_t>(held.size()));
    }
  }
  if (visited != nullptr) *visited = count;
  return accepted;
}

}  // namespace gbnf::detail
