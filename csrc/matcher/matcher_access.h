// The token-level matcher's view of a Matcher's parser (mask walks run on it in place). Defined
// in matcher.cc, where MatcherImpl lives.
#pragma once

#include "gbnf_sampler/matcher.h"
#include "matcher/parser.h"

namespace gbnf::detail {

class MatcherAccess {
 public:
  static Parser& parser(Matcher& m);
  static const Parser& parser(const Matcher& m);
  static bool terminated(const Matcher& m);
};

}  // namespace gbnf::detail
