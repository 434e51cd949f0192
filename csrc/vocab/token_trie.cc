// TokenTrie: the normal tokens sorted by bytes, with shared-prefix lengths and subtree ends.
#include <algorithm>

#include "gbnf_sampler/vocab.h"

namespace gbnf {
namespace {

uint32_t CommonPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<uint32_t>(i);
}

// The first 8 bytes as a big-endian integer, zero-padded: key(a) < key(b) implies a < b in
// unsigned-byte order, so most comparisons of the sort are one integer comparison.
uint64_t PrefixKey(std::string_view b) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) {
    key = (key << 8) | (i < b.size() ? static_cast<unsigned char>(b[i]) : 0U);
  }
  return key;
}

struct SortEntry {
  uint64_t key;
  std::string_view bytes;
  TokenId id;
  // Bytes (unsigned, lexicographic: string_view uses char_traits<char>::compare), then id.
  bool operator<(const SortEntry& o) const {
    if (key != o.key) return key < o.key;
    const int c = bytes.compare(o.bytes);
    return c != 0 ? c < 0 : id < o.id;
  }
};

// next_lower[p]: the first q > p with lcp[q] < lcp[p], or lcp.size() if none.
std::vector<uint32_t> NextLower(const std::vector<uint32_t>& lcp) {
  const uint32_t n = static_cast<uint32_t>(lcp.size());
  std::vector<uint32_t> next(n, n);
  std::vector<uint32_t> open;  // positions waiting for a smaller lcp; their lcps never decrease
  for (uint32_t q = 0; q < n; ++q) {
    while (!open.empty() && lcp[q] < lcp[open.back()]) {
      next[open.back()] = q;
      open.pop_back();
    }
    open.push_back(q);
  }
  return next;
}

}  // namespace

TokenTrie::TokenTrie(const Vocab& vocab) : vocab_(&vocab) {
  std::vector<SortEntry> normal;
  normal.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const std::string_view b = vocab.TokenUnchecked(id);
    if (b.empty() || vocab.IsEos(id) || vocab.IsSpecial(id)) {
      excluded_.push_back(id);
    } else {
      normal.push_back({PrefixKey(b), b, id});
    }
  }
  std::sort(normal.begin(), normal.end());
  ids_.reserve(normal.size());
  lcp_.reserve(normal.size());
  offsets_.reserve(normal.size() + 1);
  offsets_.push_back(0);
  size_t total = 0;
  for (const SortEntry& e : normal) total += e.bytes.size();
  bytes_.reserve(total);
  for (size_t p = 0; p < normal.size(); ++p) {
    ids_.push_back(normal[p].id);
    lcp_.push_back(p == 0 ? 0 : CommonPrefix(normal[p - 1].bytes, normal[p].bytes));
    bytes_.append(normal[p].bytes);
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }
  any_token_.assign((vocab.size() + 31) / 32, 0);
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (vocab.TokenUnchecked(id).empty() || vocab.IsEos(id)) continue;
    any_token_[i / 32] |= uint32_t{1} << (i % 32);
  }
  next_lower_ = NextLower(lcp_);
  subtree_end_.reserve(normal.size());
  for (size_t p = 0; p < normal.size(); ++p) {
    const auto len = static_cast<uint32_t>(normal[p].bytes.size());
    subtree_end_.push_back(static_cast<uint32_t>(NextDiverging(p, len)));
  }
}

size_t TokenTrie::NextDiverging(size_t pos, uint32_t depth) const {
  // Every position jumped over has lcp >= depth, so by (I2) it shares the first `depth` bytes.
  size_t q = pos + 1;
  while (q < ids_.size() && lcp_[q] >= depth) q = next_lower_[q];
  return std::min(q, ids_.size());
}

}  // namespace gbnf
