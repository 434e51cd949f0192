// What the grammar doctor (python/gbnf_sampler/doctor/facts.py) knows of every rule before its
// checks run. The doctor's Python walks of the syntax tree took a third of its time on the 1-5 MB
// grammars of large JSON Schemas; here they are one pass each over the flat node array. The
// Python definitions stay as the reference the tests compare these with.
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/rule_graph.h"

namespace gbnf::detail {

struct DoctorFacts {
  RuleEdges references;  // RuleReferences: distinct, in first-reference order
  RuleEdges users;       // Reversed(references)
  std::vector<std::vector<RuleId>> components;  // ForEachComponent's, in its order
  std::vector<uint8_t> recursive;  // per rule: in a component of two or more, or names itself
  std::vector<uint8_t> nullable;   // per rule: derives the empty string
  std::vector<uint8_t> reachable;  // per rule: the root reaches it through references
  // Per rule: every terminal it can reach, through the rules it references, is invisible (see
  // InvisibleCodepoint); any character, a negated class or a token reference never is.
  std::vector<uint8_t> invisible;
  std::vector<uint8_t> tokens;  // per rule: its own body holds a token reference
  // The components ambiguous_growth measures (python/gbnf_sampler/doctor/growth.py,
  // `candidates`): recursive, reachable, and with a reference to a member that is not a tail
  // call (the last item of one of a body's alternatives). Indices into `components`, in order.
  std::vector<uint32_t> growth_candidates;
};

DoctorFacts AnalyzeForDoctor(const Grammar& grammar);

// A code point a reader does not see: Unicode White_Space and the zero-width format characters
// models are known to loop on (the doctor's INVISIBLE table).
bool InvisibleCodepoint(uint32_t cp);

}  // namespace gbnf::detail
