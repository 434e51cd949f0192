// Resource limits of the front end. Each has a documented default (README "Limits"); hitting one
// is a GrammarError whose code names the limit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gbnf {

struct GrammarLimits {
  // Grammar text larger than this is refused before parsing (code "text_too_large").
  size_t max_text_bytes = size_t{8} << 20;
  // Number of distinct rules (code "too_many_rules").
  uint32_t max_rules = 100000;
  // Nesting of parentheses and postfix operators (code "nesting_too_deep"). Every recursive pass
  // over the tree (printer, analysis, automaton builder) is bounded by this depth.
  uint32_t max_nesting_depth = 256;
  // Largest m or n in x{m,n} (code "repetition_too_large"). Bounds stay exact up to this value.
  uint32_t max_repetition_bound = 1000000;
  // Number of AST nodes (code "grammar_too_large").
  uint32_t max_nodes = 4000000;
};

}  // namespace gbnf
