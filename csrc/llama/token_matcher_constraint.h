// The native sampler's constraint backed by a TokenMatcher (the mask engine).
#pragma once

#include <memory>

#include "gbnf_sampler/token_matcher.h"
#include "llama/sampler_hook.h"

namespace gbnf::llama {

std::unique_ptr<TokenConstraint> MakeTokenMatcherConstraint(TokenMatcher matcher);

}  // namespace gbnf::llama
