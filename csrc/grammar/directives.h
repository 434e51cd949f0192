// Directives: comment lines that start with "#@" and carry what GBNF has no syntax for. Stock
// llama.cpp reads them as comments. The one directive today:
//
//   #@ distinct-items RULE [RULE ...]
//
// Each RULE matches a JSON array whose items must be pairwise distinct as JSON values
// (JSON Schema uniqueItems; csrc/matcher/distinct_items.h enforces it while matching). The rule
// must start with the array's "[" and call or hold its items itself, and an item's rule must end
// with the item's last byte (the schema converter writes such rules; the check drops the parses
// of the array at the byte that closes a duplicate, so a parse that reads on inside the item's
// rule would escape it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gbnf_sampler/error.h"
#include "gbnf_sampler/grammar.h"
#include "grammar/lexer.h"

namespace gbnf::detail {

inline constexpr std::string_view kDistinctItemsDirective = "#@ distinct-items";

// Per rule of `grammar`: 1 when a distinct-items directive names it (empty when none does).
// Unknown rule names are added to *errors, unknown "#@" directives to *warnings.
std::vector<uint8_t> ReadDistinctItems(const Grammar& grammar, std::string_view text,
                                       const SourceMap& map, std::vector<Diagnostic>* errors,
                                       std::vector<Diagnostic>* warnings);

}  // namespace gbnf::detail
