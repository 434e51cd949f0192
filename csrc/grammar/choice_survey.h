// The choices (alternations) the doctor's shadowed_alternative check has work for
// (python/gbnf_sampler/doctor/shadow.py), and each one's duplicate alternatives: the same subtree
// as an earlier alternative of the same choice. Finding duplicates was most of that check's time
// on the 1-5 MB grammars of large JSON Schemas (thousands of alternatives per rule); shadow.py's
// own search stays as the reference the tests compare this with.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

struct ChoiceSurvey {
  RuleId rule = 0;
  uint32_t ordinal = 0;  // which of the rule's choices, counted in preorder (parents first)
  // (alternative, the first earlier alternative equal to it), by alternative index
  std::vector<std::pair<uint32_t, uint32_t>> duplicates;
};

// In rule order, then preorder: every choice with a duplicate, two one-character alternatives (a
// one-character literal, a class, "."), or a literal of two or more code points beside an
// alternative that is not a literal; the check has nothing to do for any other.
std::vector<ChoiceSurvey> SurveyChoices(const Grammar& grammar);

}  // namespace gbnf::detail
