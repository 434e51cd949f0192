// Each rule's shortest derivation, as the doctor's sampler needs it to end a random derivation
// near a target length (python/gbnf_sampler/doctor/sample.py, `shortest`, the reference the tests
// compare this with): the fewest code points a sentence of the rule has, then the fewest nested
// rule references among those sentences.
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/rule_graph.h"

namespace gbnf::detail {

// The length of a rule without a byte-level sentence (token references, or no end), as sample.py
// writes it (INF); any longer length counts as none.
inline constexpr uint64_t kNoDerivation = uint64_t{1} << 60;

// Ordered by length, then height (lexicographically, like Python's tuples).
struct Derivation {
  uint64_t length = kNoDerivation;  // code points
  uint64_t height = kNoDerivation;  // rule references nested on the deepest path
  friend bool operator<(const Derivation& a, const Derivation& b) {
    return a.length != b.length ? a.length < b.length : a.height < b.height;
  }
};

// No byte-level sentence.
inline constexpr Derivation kNoSentence{kNoDerivation, kNoDerivation};

// How derivations combine (sample.py's `_minimum`); lengths saturate at kNoDerivation.
inline Derivation SequenceOf(const Derivation& a, const Derivation& b) {
  if (a.length >= kNoDerivation || b.length >= kNoDerivation) return kNoSentence;
  const uint64_t length = a.length + b.length;  // both below 2^60: no overflow
  return length >= kNoDerivation ? kNoSentence
                                 : Derivation{length, a.height > b.height ? a.height : b.height};
}

// A reference to a rule whose shortest derivation is `callee`: one level deeper.
inline Derivation ReferenceTo(const Derivation& callee) {
  return callee.length < kNoDerivation ? Derivation{callee.length, callee.height + 1}
                                       : kNoSentence;
}

// `item` at least `min` times.
inline Derivation RepeatOf(const Derivation& item, uint32_t min) {
  if (min == 0) return {0, 0};
  if (item.length >= kNoDerivation || item.length >= kNoDerivation / min) return kNoSentence;
  return {item.length * min, item.height};
}

// Fills `table` (one entry per rule) for the components of `wanted` rules: `components` as
// ForEachComponent gives them (callees first), `users` = Reversed(RuleReferences). A component is
// evaluated when `wanted` marks its first member (mark whole components, closed under references
// apart from rules whose entries the table already holds, final); inside a recursive component a
// rule is evaluated again when a member it references improves (values only decrease, so the
// order does not change the result). Entries of other rules are left as they are (a fresh table:
// no derivation).
void ShortestDerivations(const Grammar& grammar,
                         const std::vector<std::vector<RuleId>>& components,
                         const RuleEdges& users, const std::vector<uint8_t>& wanted,
                         std::vector<Derivation>* table);

}  // namespace gbnf::detail
