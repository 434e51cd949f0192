// The whitespace bytes a run counts (MatcherLimits::max_whitespace): space, tab, LF, CR.
#pragma once

#include <cstdint>

namespace gbnf::detail {

inline bool IsWhitespaceByte(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace gbnf::detail
