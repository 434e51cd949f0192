// Batch operations over many token-level matchers, run on a shared thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gbnf_sampler/token_matcher.h"

namespace gbnf {

// matchers[i]->FillMask into row i of a bitmask whose rows start `row_stride` words apart and
// hold `num_words` words each. Distinct matchers must be distinct objects.
void FillMasks(const std::vector<TokenMatcher*>& matchers, uint32_t* bitmask, size_t row_stride,
               size_t num_words);

// accepted[i] = matchers[i]->AcceptToken(token_ids[i]). Throws VocabError for an id outside a
// vocabulary (the other matchers may have advanced).
std::vector<uint8_t> AcceptTokens(const std::vector<TokenMatcher*>& matchers,
                                  const std::vector<TokenId>& token_ids);

}  // namespace gbnf
