// Mask fills by walking the token trie from a recognizer's current state (byte path only: the
// trie holds the vocabulary's normal tokens; EOS, special and empty tokens are handled by the
// caller). A rejected prefix skips every token that starts with it.
#pragma once

#include <cstdint>

#include "gbnf_sampler/vocab.h"
#include "mask/prefix_walker.h"
#include "mask/trie_bytes.h"

namespace gbnf::detail {

// Sets words[id] for every trie token the recognizer's state accepts: the reference walk over the
// whole trie. `walker` is between Begin and End.
void WalkAllTokens(PrefixWalker& walker, const TokenTrie& trie, const TrieBytes& tb,
                   uint32_t* words);

// The same, restricted to the trie positions whose bit is set in `candidates` (a bitset over
// positions) and whose token's bit is not already set in `words`.
void WalkCandidates(PrefixWalker& walker, const TokenTrie& trie, const TrieBytes& tb,
                    const uint32_t* candidates, uint32_t* words);

// The first set bit at or after `from` in a bitset of `num_bits` bits, or num_bits.
size_t NextSetBit(const uint32_t* bits, size_t num_bits, size_t from);

}  // namespace gbnf::detail
