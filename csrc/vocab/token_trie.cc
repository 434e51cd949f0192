// TokenTrie: the normal tokens sorted by bytes, with shared-prefix lengths and subtree ends.
#include <algorithm>

#include "gbnf_sampler/vocab.h"
#include "support/utf8.h"

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

// The UTF-8 state after `bytes` from a character boundary.
detail::Utf8State Utf8After(std::string_view bytes) {
  detail::Utf8State state = detail::kUtf8Start;
  for (char c : bytes) state = detail::Utf8Next(state, static_cast<uint8_t>(c));
  return state;
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
  trie_token_.assign((vocab.size() + 31) / 32, 0);
  for (TokenId id : ids_) trie_token_[id / 32] |= uint32_t{1} << (id % 32);
  next_lower_ = NextLower(lcp_);
  subtree_end_.reserve(normal.size());
  for (size_t p = 0; p < normal.size(); ++p) {
    const auto len = static_cast<uint32_t>(normal[p].bytes.size());
    subtree_end_.push_back(static_cast<uint32_t>(NextDiverging(p, len)));
  }
  SummarizeSubtrees();
  ListJsonStringClasses();
}

// Bottom up (a position's subtree lies after it): each position's summary is the union over its
// direct children c (q = p + 1, then subtree_end(q), up to subtree_end(p)) of the bytes c adds
// to bytes(p) and of c's own summary.
void TokenTrie::SummarizeSubtrees() {
  const size_t n = ids_.size();
  below_ascii_.assign(2 * n, 0);
  byte_flags_.assign(n, 0);
  below_chars_.assign(n, 0);
  std::vector<uint8_t> invalid(n, 0);
  chars_.assign(n, 0);
  for (size_t p = 0; p < n; ++p) {
    uint32_t chars = 0;
    for (char ch : bytes(p)) chars += (static_cast<uint8_t>(ch) & 0xC0) != 0x80 ? 1 : 0;
    chars_[p] = static_cast<uint8_t>(std::min<uint32_t>(chars, 255));
    const detail::Utf8State state = Utf8After(bytes(p));
    invalid[p] = state == detail::kUtf8Invalid;
    if (state != detail::kUtf8Start) byte_flags_[p] = kEndsInsideChar;
  }
  for (size_t p = n; p-- > 0;) {
    const size_t depth = bytes(p).size();
    uint64_t lo = 0;
    uint64_t hi = 0;
    uint8_t flags = 0;
    uint32_t chars = 0;
    for (size_t c = p + 1; c < subtree_end_[p]; c = subtree_end_[c]) {
      uint32_t edge_chars = 0;
      for (char ch : bytes(c).substr(depth)) {
        const auto b = static_cast<uint8_t>(ch);
        if ((b & 0xC0) != 0x80) ++edge_chars;
        if (b >= 0x80) {
          flags |= kBelowNonAscii;
        } else if (b < 64) {
          lo |= uint64_t{1} << b;
        } else {
          hi |= uint64_t{1} << (b - 64);
        }
      }
      lo |= below_ascii_[2 * c];
      hi |= below_ascii_[2 * c + 1];
      flags |= static_cast<uint8_t>(byte_flags_[c] & (kBelowNonAscii | kBelowInvalidUtf8));
      if (invalid[c]) flags |= kBelowInvalidUtf8;
      chars = std::max<uint32_t>(chars, edge_chars + below_chars_[c]);
    }
    below_chars_[p] = static_cast<uint8_t>(std::min<uint32_t>(chars, 255));
    below_ascii_[2 * p] = lo;
    below_ascii_[2 * p + 1] = hi;
    byte_flags_[p] |= flags;
  }
}

size_t TokenTrie::NextDiverging(size_t pos, uint32_t depth) const {
  // Every position jumped over has lcp >= depth, so by (I2) it shares the first `depth` bytes.
  size_t q = pos + 1;
  while (q < ids_.size() && lcp_[q] >= depth) q = next_lower_[q];
  return std::min(q, ids_.size());
}

}  // namespace gbnf
