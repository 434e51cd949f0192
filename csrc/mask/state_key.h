// The key of the shared (level-2) mask cache: what an isolated classification of an automaton
// state read of the automaton, written so that equal keys mean equal classifications.
//
// Distances: from the key's state s, a byte edge costs one byte, a rule call none (it reaches
// the called rule's start and the call's target, where the caller resumes once the rule
// completes). The ball of radius r is the states at most r bytes from s, with of each its final
// kind (not final / final / final without edges), its byte edges and its call edges (the called
// rule's start and whether it is nullable); the states just outside it are named, without their
// edges. The key of radius r is that ball in a canonical numbering, layer by layer (the states
// at distance 0, a layer mark, those at distance 1, ...): states and rules are numbered in the
// order the writing meets them, a layer's states are written in number order, each as its
// number, final kind and edges (in the automaton's own order). Two states with equal keys of
// radius r are the centres of isomorphic balls, and a key of a smaller radius is a prefix of
// the key of a larger one.
//
// An isolated walk from s (Recognizer::ResetIsolated) holds item sets whose states it records
// (ConfigWalker::states_met); one recognizer step reads only the states of its items and, in
// its closure, states at most one byte edge further (a call's rule start and its target are as
// near as the call). So if the states met lie within d bytes of s, the classification read
// nothing outside the ball of radius d + 1, and any state whose ball of that radius is
// isomorphic walks the same item sets, stack and completions one to one (rule and state ids are
// only names to the recognizer): over one vocabulary, with one max_state_size, the same
// classification. A classification is stored under the key of the smallest radius of a ladder
// (1, 2, 4, ..., up to the longest token plus one byte: no walk reads further) that covers
// d + 1. A string body's classification reads the body and the few bytes a token can take
// after its closing quote, so every string body followed by the same few bytes shares it,
// whatever the rest of the grammar; the positions of a long bounded repetition (maxLength:
// 2000) share one key wherever more characters are left than a token holds. A lookup tries the
// ladder's radii from the smallest (shared_cache.h says which radii hold entries, and whether a
// larger one may still match). Token-reference edges are left out: a byte walk never crosses
// them (they matter only through the final kind, which says whether a final state has edges).
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

// The radii of the key ladder: level l has radius 2^l, the last one the longest token plus one
// byte.
inline constexpr int kKeyLevels = 16;
uint32_t KeyRadius(int level, size_t max_token_bytes);
// The last level (its radius covers any walk over tokens of at most max_token_bytes bytes).
int TopKeyLevel(size_t max_token_bytes);

struct KeyScratch;

// The keys of one state at the ladder's radii, written from the smallest radius up in one pass:
// the ball is written layer by layer (the states at distance 0, then 1, ...), each state's
// record starting with its canonical number, so the key of a radius is a prefix of the key of
// any larger one. Uses per-thread scratch (one writer per thread at a time). Writing fails when
// the ball has more than `max_states` states or reaches a rule the automaton has not built yet
// (met_unbuilt_rule(): a key never builds a rule, since a large rule would cost more than a
// classification; a later try may succeed).
class StateKeyWriter {
 public:
  StateKeyWriter(const Automaton& automaton, StateId state, size_t max_states,
                 size_t max_token_bytes);
  ~StateKeyWriter();
  StateKeyWriter(const StateKeyWriter&) = delete;
  StateKeyWriter& operator=(const StateKeyWriter&) = delete;

  // Writes on up to the ladder's `level` (at least the last level written to); appends to
  // `crossed`, if given, the hashes of the keys of the levels passed on the way.
  bool WriteTo(int level, std::vector<uint64_t>* crossed = nullptr);
  // The key of the last level written to.
  const StateKey& key() const;
  // The level a classification that met `states` (ConfigWalker::states_met, duplicates allowed)
  // is stored at: the smallest whose radius covers their farthest one plus one byte.
  bool LevelOf(const std::vector<StateId>& states, int* level);
  bool met_unbuilt_rule() const { return unbuilt_; }

 private:
  bool MeasureUpTo(uint32_t radius);
  bool EmitLayer();
  bool Emit(StateId s);
  uint32_t Number(StateId s);
  void Fit(StateId s);

  const Automaton& a_;
  size_t max_states_;
  size_t max_token_bytes_;
  int level_ = -1;         // the last level written to
  uint32_t layer_ = 0;     // the next layer to write
  static constexpr size_t kBlockWords = 8;
  size_t hashed_ = 0;  // code words folded into the hash lanes (whole blocks)
  uint64_t lanes_[4] = {0x60EA27EEADC0B5D6ull, 0xC2B2AE3D27D4EB4Full, 0, 0x61C8864E7A143579ull};
  bool failed_ = false;  // the ball grew too large or met an unbuilt rule: every key fails
  bool unbuilt_ = false;
  KeyScratch& scratch_;
};

// The key a classification of `state` whose walks met `met` is stored under: its ladder level,
// and the hashes of the state's keys at every lower level (SharedMaskCache::MayHoldAbove).
struct StoredKey {
  int level = 0;
  StateKey key;
  std::vector<uint64_t> lower;
};
bool ComputeStoredKey(const Automaton& automaton, StateId state, size_t max_states,
                      size_t max_token_bytes, const std::vector<StateId>& met, StoredKey* out);

// The key of `state` at the ladder's `level` (one writer's WriteTo).
bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states,
                     size_t max_token_bytes, int level, StateKey* out, bool* unbuilt = nullptr);

}  // namespace gbnf::detail
