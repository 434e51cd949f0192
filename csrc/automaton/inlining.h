// Which rules the automaton builder expands in place instead of calling: small rules that are not
// recursive (directly or through other rules). Inlining is exact (same language) and removes the
// prediction and completion work of helper rules like `ws`, `string` or `number` from the
// per-byte hot path.
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

// Expanded-size budget of an inlined rule, in AST nodes (repetition bodies count once per copy).
inline constexpr uint32_t kInlineBudget = 128;

// Per rule: 1 when references to it may be replaced by its body.
std::vector<uint8_t> InlinableRules(const Grammar& grammar, uint32_t max_nesting_depth);

// Per rule: the nesting depth of its body's AST (capped just above max_nesting_depth).
std::vector<uint32_t> RuleDepths(const Grammar& grammar, uint32_t max_nesting_depth);

}  // namespace gbnf::detail
