// Test support, compiled into the _core module only (not into gbnf_core): a reference client of
// the public TrieWalk, bound as Vocab.trie_walk_prefix_filter for tests of the walk contract.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gbnf_sampler/vocab.h"

namespace gbnf::detail {

// The ids of the trie's tokens that are a prefix of at least one of `texts`, found with a walk
// whose "parser" accepts a byte when the prefix held so far plus that byte starts one of
// `texts`, and that calls Skip() after a token no text extends. Checks the walk contract as it
// goes (the popped stack is a prefix of each token) and throws std::logic_error if it is broken.
// `visited`, when not null, receives the number of positions visited.
std::vector<TokenId> WalkPrefixFilter(const TokenTrie& trie, const std::vector<std::string>& texts,
                                      size_t* visited);

}  // namespace gbnf::detail
