// What the automaton builder needs to know of every rule before it builds any: which rules derive
// some string (productive), which derive the empty string (nullable), which it expands in place
// instead of calling (inlinable), how deep each body's syntax tree is, how large its automaton
// must be at least, and which rules the root reaches. The parser asks for the first, to refuse
// rules that can never finish.
//
// Inlining is exact (same language) and removes the prediction and completion work of helper
// rules like `ws`, `string` or `number` from the per-byte hot path. Only rules outside recursion
// (directly or through other rules) are inlined, and only small ones.
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

// For a caller that only wants productive and nullable: depths and sizes are then never capped.
inline constexpr uint32_t kNoDepthLimit = UINT32_MAX - 1;

// Expanded-size budget of an inlined rule, in AST nodes (repetition bodies count once per copy).
inline constexpr uint32_t kInlineBudget = 128;

// For a caller with no root rule: `reachable` stays empty.
inline constexpr RuleId kNoRoot = UINT32_MAX;

// What the analysis reads: a finished Grammar and the parser's builder both have these. Every
// rule must have a body (the parser asks only once no rule is undefined).
struct RuleTree {
  const std::vector<Node>& nodes;
  const std::vector<Rule>& rules;
  const std::vector<uint8_t>& distinct_items;  // per rule (or empty): never inlined
};

struct RuleFacts {
  std::vector<uint8_t> productive;  // per rule: 1 when it derives some string
  std::vector<uint8_t> nullable;    // per rule: 1 when it derives the empty string
  std::vector<uint8_t> inlinable;   // per rule: 1 when references to it may be replaced by its body
  std::vector<uint32_t> depth;      // per rule: its body's AST depth, capped at max_nesting_depth + 1
  // Per rule: a lower bound on the states plus edges of its own NFA (nfa_builder.cc builds it:
  // repetitions as copies; references to inlinable rules counted by the callee's bound when
  // the rule's inlined_height is within the nesting limit, else as the smaller of a call and
  // that bound), so that a rule too large for the automaton is refused before a generation
  // reaches it. Saturates at kSizeCap.
  std::vector<uint64_t> min_size;
  // Per rule: its body's depth with the inlinable references expanded in place, capped at
  // max_nesting_depth + 1 (within the limit the builder inlines every one of them).
  std::vector<uint32_t> inlined_height;
  std::vector<uint8_t> reachable;  // per rule: reached from the root through references
  // Per rule of a recursive component (rules that reach each other): the component's first
  // member; kNotRecursive for the others.
  std::vector<uint32_t> recursion;
};

inline constexpr uint32_t kNotRecursive = UINT32_MAX;

inline constexpr uint64_t kSizeCap = uint64_t{1} << 62;

// All four from one walk over the grammar's nodes, which turns each body into compact post-order
// steps; then the rules' strongly connected components, callees first: outside recursion a body's
// steps are evaluated once, inside a component again only when a member it references has just
// become productive or nullable. Linear in the grammar's size outside recursion.
RuleFacts AnalyzeRules(const RuleTree& grammar, uint32_t max_nesting_depth,
                       RuleId root = kNoRoot);

inline RuleFacts AnalyzeRules(const Grammar& grammar, uint32_t max_nesting_depth) {
  return AnalyzeRules({grammar.nodes(), grammar.rules(), grammar.DistinctItemRules()},
                      max_nesting_depth, grammar.root());
}

// The facts the automaton builds from: the parser's (Grammar::ParsedFacts) when they are the
// ones this limit gives, else AnalyzeRules. The parser's were computed without a nesting
// limit, which changes only bodies deeper than the limit (and the inlining of their callers).
// `reused`, when given, says which.
RuleFacts AutomatonRuleFacts(const Grammar& grammar, uint32_t max_nesting_depth,
                             bool* reused = nullptr);

}  // namespace gbnf::detail
