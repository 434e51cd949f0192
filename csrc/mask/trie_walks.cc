#include "mask/trie_walks.h"

#include "support/bits.h"

namespace gbnf::detail {

void WalkAllTokens(PrefixWalker& walker, const TokenTrie& trie, const TrieBytes& tb,
                   uint32_t* words) {
  WalkTrie(
      trie, tb,
      [&](size_t pos, uint32_t keep, std::string_view add) {
        const size_t n = walker.Extend(keep, add);
        if (n == add.size()) SetBit(words, static_cast<uint32_t>(trie.token_id(pos)));
        return n;
      },
      [](size_t, size_t) {});
}

size_t NextSetBit(const uint32_t* bits, size_t num_bits, size_t from) {
  if (from >= num_bits) return num_bits;
  size_t word = WordOf(from);
  uint32_t cur = bits[word] & ~LowBits(BitInWord(from));
  const size_t num_words = WordsFor(num_bits);
  while (cur == 0) {
    if (++word >= num_words) return num_bits;
    cur = bits[word];
  }
  size_t found = word * kWordBits + static_cast<size_t>(CountTrailingZeros(cur));
  return found < num_bits ? found : num_bits;
}

namespace {

uint32_t CommonPrefix(std::string_view a, std::string_view b, uint32_t limit) {
  uint32_t n = 0;
  while (n < limit && n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

void WalkCandidates(PrefixWalker& walker, const TokenTrie& trie, const TrieBytes& tb,
                    const uint32_t* candidates, uint32_t* words) {
  const size_t size = trie.size();
  std::string_view held_bytes;  // the walker holds a prefix of these bytes
  for (size_t pos = NextSetBit(candidates, size, 0); pos < size;) {
    const uint32_t id = static_cast<uint32_t>(trie.token_id(pos));
    if (TestBit(words, id)) {
      pos = NextSetBit(candidates, size, pos + 1);
      continue;
    }
    std::string_view bytes = tb.at(pos);
    uint32_t keep = CommonPrefix(held_bytes, bytes, walker.held());
    size_t n = walker.Extend(keep, bytes.substr(keep));
    held_bytes = bytes;
    size_t next = pos + 1;
    if (keep + n == bytes.size()) {
      SetBit(words, id);
    } else {
      // Every later token starting with the refused prefix is refused too (TokenTrie I4).
      next = trie.NextDiverging(pos, static_cast<uint32_t>(keep + n + 1));
    }
    pos = NextSetBit(candidates, size, next);
  }
}

}  // namespace gbnf::detail
