// The token-level matcher's view of a Matcher's recognizer (mask walks run on it in place).
// Defined in matcher.cc, where Matcher::Impl lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gbnf_sampler/matcher.h"
#include "matcher/distinct_items.h"
#include "matcher/recognizer.h"

namespace gbnf::detail {

class MatcherAccess {
 public:
  static Recognizer& recognizer(Matcher& m);
  static const Recognizer& recognizer(const Matcher& m);
  static bool terminated(const Matcher& m);
  // The distinct-items scan of the text (null when the grammar has no such rule).
  static DistinctItems* distinct_items(Matcher& m);
  static const DistinctItems* distinct_items(const Matcher& m);
  // Whether m.AcceptToken would take the token, leaving m as it is.
  static bool TryToken(Matcher& m, uint32_t token_id, std::string_view bytes);
  // For each of `texts`, sorted, the index of the first byte m would refuse reading it from
  // the current state (npos: none); the steps of a prefix shared with the text before are
  // taken once, and m is left as it is.
  static void ProbeTexts(Matcher& m, const std::vector<std::string_view>& texts,
                         std::vector<size_t>* refused);
};

}  // namespace gbnf::detail
