// The adaptive mask cache entry of one automaton state: every normal token of the vocabulary
// classified against an isolated walk from the state (a fresh stack, one rule invocation with no
// caller):
//   accepted   the token's bytes are all consumed inside the invocation (allowed in any context);
//   dependent  the invocation can end after a non-empty proper prefix of the token, and the
//              token is not accepted: whether the rest fits depends on the stack below
//              (checked per step against the full state);
//   rejected   neither.
// An invocation that can end before the token's first byte does not make the token dependent:
// when an item's invocation can end there, the items it returns to are in the same item set
// (the recognizer's closure completes it), and their own cache entries cover the token.
// So the union over the live items' states of `accepted`, plus the `dependent` tokens that pass
// a walk from the full state, is exactly the byte-path mask (see token_matcher.cc).
//
// Two classifiers compute it: ClassifyState, the reference (the recognizer on every byte,
// PrefixWalker), and ClassifyRange + MergeParts, the fast path (ConfigWalker: a table of the
// recognizer's steps; LoopWalk: subtree jumps where the parser loops or counts), which also
// splits the trie into ranges that threads classify apart.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/vocab.h"
#include "mask/token_set.h"

namespace gbnf::detail {

struct StateMask {
  TokenSet accepted;   // token ids
  TokenSet dependent;  // positions in the token trie
  size_t MemoryBytes() const { return accepted.MemoryBytes() + dependent.MemoryBytes(); }
};

// Classifies every token of `trie` from `state` (the reference). A token whose walk exceeds
// max_state_size is put in `dependent` (decided per step).
StateMask ClassifyState(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                        StateId state, uint32_t max_state_size);

// Ascending, disjoint ranges [first, second) of trie positions.
using PositionRuns = std::vector<std::pair<uint32_t, uint32_t>>;

// The classification of the trie positions [from, to): the accepted and the dependent positions
// as runs (a jumped subtree is one run; MergeParts turns the accepted ones into token ids).
struct StateMaskPart {
  PositionRuns accepted;
  size_t num_accepted = 0;
  PositionRuns dependent;
  size_t num_dependent = 0;
  // The automaton states the walk's item sets held (ConfigWalker::states_met): the shared
  // cache's key radius (state_key.h).
  std::vector<StateId> states_met;
};

// The fast path over [from, to), the same answer as ClassifyState's on those positions.
void ClassifyRange(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                   StateId state, uint32_t max_state_size, size_t from, size_t to,
                   StateMaskPart* out);

// The parts of consecutive ranges covering the whole trie, in trie order, as one entry.
StateMask MergeParts(std::vector<StateMaskPart>& parts, const TokenTrie& trie);

// ClassifyRange over the whole trie, in one part.
StateMask ClassifyStateFast(const std::shared_ptr<const Automaton>& automaton,
                            const TokenTrie& trie, StateId state, uint32_t max_state_size);

}  // namespace gbnf::detail
