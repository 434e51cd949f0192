// Internal: turns one rule's Thompson NFA into its epsilon-free FSM (automaton.cc) and prunes
// the states that can never complete the rule (liveness.cc). State ids are local to the rule
// (its start is 0); Automaton numbers them when it publishes the rule.
#pragma once

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
  void IndexNfa();
  void NumberStates();
  void EmitState(StateId nfa_state);
  void FinishState(size_t byte_first);
  void PruneDeadStates();  // liveness.cc
  void CheckSize() const;
  std::vector<uint8_t> LiveStates() const;  // liveness.cc
  void SetFinalKinds();
  void FindPeriodTwins(const std::vector<uint32_t>& recursion, RuleId rule);  // period_twins.cc

  const detail::Nfa& nfa_;
  const std::vector<uint8_t>& productive_;
  AutomatonLimits limits_;
  size_t budget_;
  AssembledRule& a_;
  std::vector<uint32_t> out_begin_;  // NFA CSR by source state
  std::vector<uint32_t> out_edges_;  // edge indices
  std::vector<uint8_t> nfa_final_;
  std::vector<StateId> new_id_;      // NFA state -> FSM state, or kNone
  std::vector<StateId> important_;   // FSM state -> NFA state
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
  std::vector<StateId> stack_;
  bool final_ = false;
  static constexpr StateId kNone = UINT32_MAX;
};

}  // namespace gbnf
