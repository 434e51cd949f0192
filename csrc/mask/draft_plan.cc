#include "mask/draft_plan.h"

#include <vector>

#include "support/bits.h"

namespace gbnf {
namespace {

size_t CountAllowed(const std::vector<uint32_t>& words) {
  size_t n = 0;
  for (uint32_t w : words) n += static_cast<size_t>(detail::PopCount(w));
  return n;
}

}  // namespace

size_t PlanDraft(const TokenMatcher& matcher, const int32_t* tokens, size_t count, bool* only) {
  TokenMatcher probe = matcher.Fork();
  const size_t vocab_size = matcher.compiled().vocab().size();
  std::vector<uint32_t> words(probe.MaskWords(), 0);
  for (size_t i = 0; i < count; ++i) {
    if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= vocab_size) return i;
    const auto id = static_cast<size_t>(tokens[i]);
    probe.FillMask(words.data(), words.size());
    if (!detail::TestBit(words.data(), id) || !probe.AcceptToken(tokens[i])) return i;
    only[i] = CountAllowed(words) == 1;
  }
  return count;
}

}  // namespace gbnf
