#pragma once

// Jump-forward drafts checked against a grammar: shared by the llama.cpp sampler hook and the
// Python TokenMatcher (the batched server plans its drafts per sequence).

#include <cstddef>
#include <cstdint>

#include "gbnf_sampler/token_matcher.h"

namespace gbnf {

// Checks `tokens` in order from the matcher's present state (left unchanged): returns the
// length of the prefix the grammar accepts, and writes only[i] for each of those tokens: true
// when it is the only token the grammar allows at its position (a model needs no logits to
// pick it). Ids outside the vocabulary end the prefix.
size_t PlanDraft(const TokenMatcher& matcher, const int32_t* tokens, size_t count, bool* only);

}  // namespace gbnf
