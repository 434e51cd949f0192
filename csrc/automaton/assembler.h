// Internal: turns one rule's Thompson NFA into its epsilon-free FSM (automaton.cc) and prunes
// the states that can never complete the rule (liveness.cc). State ids are local to the rule
// (its start is 0); Automaton numbers them when it publishes the rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "automaton/nfa_builder.h"
#include "gbnf_sampler/automaton.h"

namespace gbnf {

// One rule's FSM in flat arrays (CSR), edge targets local to the rule.
struct AssembledRule {
  std::vector<ByteEdge> bytes;
  std::vector<CallEdge> calls;
  std::vector<TokenEdge> tokens;
  std::vector<uint32_t> byte_begin, call_begin, token_begin;  // num_states + 1 each
  std::vector<uint8_t> final;  // 0: not final, 1: final, 2: final without edges
  std::vector<uint32_t> chain;  // per state, into chains (empty: no rule was inlined)
  std::vector<std::vector<RuleId>> chains{{}};
  // Per state (empty when the rule has no twins): the states per copy between the state and its
  // twin one copy earlier (0: none), and how far their futures agree (period_twins.cc).
  std::vector<uint32_t> twin_period, twin_agree;
  size_t shifted_states = 0;  // emitted by shifting the state one copy earlier (for tests)
  size_t num_states() const { return final.size(); }
  size_t num_edges() const { return bytes.size() + calls.size() + tokens.size(); }
};

// Throws LimitError("max_automaton_size").
[[noreturn]] void ThrowTooLarge(const AutomatonLimits& limits);

class AutomatonAssembler {
 public:
  // `productive`: per rule, whether it derives some string (a call of any other rule is dead).
  // `budget`: the states and edges the rule may have before LimitError("max_automaton_size").
  AutomatonAssembler(const detail::Nfa& nfa, const std::vector<uint8_t>& productive,
                     const AutomatonLimits& limits, size_t budget, AssembledRule* out)
      : nfa_(nfa), productive_(productive), limits_(limits), budget_(budget), a_(*out) {}
  // `recursion` (RuleFacts::recursion) and `rule`: the rules whose calls may lead back to this
  // rule's start (twins, period_twins.cc).
  void Run(const std::vector<uint32_t>& recursion, RuleId rule);

 private:
  // A shifted repetition's copies (NfaPeriod::shifted) that may be emitted by shifting the
  // copy before: `copies` copies of `per_copy` NFA states from `lo`, and `fsm_per_copy` FSM
  // states each. What the closures of copy 1 reached (copy indices) says how far that holds.
  struct CopyPlan {
    StateId lo = 0;
    StateId per_copy = 0;
    uint32_t copies = 0;
    StateId fsm_per_copy = 0;
    uint32_t lowest = UINT32_MAX;  // the lowest copy a closure of copy 1 reached
    uint32_t visited = 0;          // the highest copy a closure of copy 1 went through
    uint32_t targets = 0;          // the highest copy an edge of copy 1's states leads to
    bool entered = false;          // a closure went into the copies from outside them
    bool Holds(StateId s) const { return s >= lo && s - lo < StateId{copies} * per_copy; }
    uint32_t CopyOf(StateId s) const { return (s - lo) / per_copy; }
    void Note(StateId from, StateId to, bool consumes);
    uint32_t LastShifted() const;  // the last copy emitted by shifting (< 2: none)
  };
  void IndexNfa();
  // Calls fn(edge) for each NFA edge out of `s`, the replicas' (NfaReplica) included.
  template <typename Fn>
  void ForEachOut(StateId s, Fn&& fn) const;
  void NumberStates();
  std::vector<CopyPlan> PlanCopies() const;
  void EmitStates();
  template <bool kWatch>
  void EmitState(StateId nfa_state);
  // The edges of FSM state `from`, targets in [lo, hi) moved up by `shift`, as the next state.
  void EmitShifted(StateId from, StateId lo, StateId hi, StateId shift);
  void FinishState(size_t byte_first);
  void PruneDeadStates();  // liveness.cc
  void CheckSize() const;
  std::vector<uint8_t> LiveStates() const;  // liveness.cc
  void FinishLiveStates(std::vector<uint8_t>* live) const;
  void SetFinalKinds();
  void FindPeriodTwins(const std::vector<uint32_t>& recursion, RuleId rule);  // period_twins.cc

  const detail::Nfa& nfa_;
  const std::vector<uint8_t>& productive_;
  AutomatonLimits limits_;
  size_t budget_;
  AssembledRule& a_;
  std::vector<uint32_t> out_begin_;  // NFA CSR by source state
  std::vector<uint32_t> out_edges_;  // edge indices
  // Per replica: its template's edges by source (an index from touched_lo), as out_begin_.
  std::vector<std::vector<uint32_t>> replica_begin_, replica_edges_;
  std::vector<uint8_t> nfa_final_;
  std::vector<StateId> new_id_;      // NFA state -> FSM state, or kNone
  std::vector<StateId> important_;   // FSM state -> NFA state
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
  std::vector<StateId> stack_;
  bool final_ = false;
  // The repetitions EmitStates planned (copies 2 .. LastShifted() of each were shifted from the
  // one before: FindPeriodTwins need not compare them).
  std::vector<CopyPlan> plans_;
  CopyPlan* watch_ = nullptr;  // EmitState<true> notes what it reaches there
  static constexpr StateId kNone = UINT32_MAX;
};

template <typename Fn>
void AutomatonAssembler::ForEachOut(StateId s, Fn&& fn) const {
  for (uint32_t k = out_begin_[s]; k < out_begin_[s + 1]; ++k) fn(nfa_.edges[out_edges_[k]]);
  for (size_t r = 0; r < nfa_.replicas.size(); ++r) {
    const detail::NfaReplica& rep = nfa_.replicas[r];
    if (s < rep.touched_lo + rep.per_copy) continue;
    // The template's sources span two copies: s is the image of at most two of them.
    const uint32_t top = (s - rep.touched_lo) / rep.per_copy;
    for (uint32_t i = std::max(top, 2u) - 1; i <= std::min(top, rep.count); ++i) {
      const StateId x = s - i * rep.per_copy;
      const std::vector<uint32_t>& begin = replica_begin_[r];
      for (uint32_t k = begin[x - rep.touched_lo]; k < begin[x - rep.touched_lo + 1]; ++k) {
        detail::NfaEdge e = nfa_.edges[replica_edges_[r][k]];
        e.from = s;
        e.target = rep.Moved(e.target, i);
        fn(e);
      }
    }
  }
}

}  // namespace gbnf
