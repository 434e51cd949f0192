// The key of the shared (level-2) mask cache: what an isolated classification of an automaton
// state depends on, written so that equal keys mean equal classifications.
//
// An isolated walk (Recognizer::ResetIsolated) from state s reads only the part of the automaton
// it can reach: the states reachable from s over byte edges and rule calls (a call reaches the
// called rule's start and, when the rule completes, the call's target), and of each such state
// its final kind (not final / final / final without edges), its byte edges, its call edges and
// whether the called rule is nullable. The key is that sub-automaton in a canonical numbering:
// states and rules numbered in the order a breadth-first walk from s meets them, edges in the
// automaton's own order. Two states with equal keys are the starts of isomorphic sub-automata,
// and the recognizer's item sets, stack and completions over one map one to one onto the other's
// (rule and state ids are only names to it), so their classifications over one vocabulary, with
// one max_state_size, are equal. Token-reference edges are left out: a byte walk never crosses
// them (they matter only through the final kind, which says whether a final state has edges).
//
// A walk over tokens of at most `max_bytes` bytes reads no state further than that many bytes
// from s (a call is taken to cost no byte, so called rules and their callers' resumptions count
// as near as the call). A key of more than a few hundred states is written in a second form, with
// the states further than max_bytes + 1 bytes as "far", without their edges: the positions of a
// long bounded repetition (maxLength: 2000) then share one key wherever more characters are left
// than a token holds. (A leading form number keeps the two forms apart.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gbnf_sampler/automaton.h"

namespace gbnf::detail {

struct StateKey {
  uint64_t hash = 0;
  std::vector<uint32_t> code;
  bool operator==(const StateKey& o) const { return hash == o.hash && code == o.code; }
};

// The key of `state` for tokens of at most `max_bytes` bytes, or false when the sub-automaton it
// covers has more than `max_states` states (such a state is classified on its own, never shared)
// or reaches a rule the automaton has not built yet (*unbuilt is set then: a key never builds a
// rule, since a large rule would cost more than the classification; a later try may succeed).
bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states,
                     size_t max_bytes, StateKey* out, bool* unbuilt = nullptr);

}  // namespace gbnf::detail
