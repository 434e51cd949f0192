// Internal: turns the Thompson NFA into the Automaton's flat arrays (automaton.cc) and prunes
// states that can never complete their rule (liveness.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "automaton/nfa_builder.h"
#include "gbnf_sampler/automaton.h"

namespace gbnf {

class AutomatonAssembler {
 public:
  AutomatonAssembler(const detail::Nfa& nfa, const AutomatonLimits& limits, Automaton* out)
      : nfa_(nfa), limits_(limits), a_(*out) {}
  void Run();

 private:
  void IndexNfa();
  void NumberStates();
  void EmitState(StateId nfa_state);
  void FinishState(size_t byte_first);
  void PruneDeadStates();  // liveness.cc
  void ComputeNullable();
  bool ReachesFinalViaNullable(RuleId r, std::vector<uint32_t>* stack);
  void CheckSize() const;
  std::vector<uint8_t> LiveStates() const;  // liveness.cc
  void SetFinalKinds();

  const detail::Nfa& nfa_;
  AutomatonLimits limits_;
  Automaton& a_;
  std::vector<uint32_t> out_begin_;  // NFA CSR by source state
  std::vector<uint32_t> out_edges_;  // edge indices
  std::vector<uint8_t> nfa_final_;
  std::vector<StateId> new_id_;      // NFA state -> automaton state, or kNone
  std::vector<StateId> important_;   // automaton state -> NFA state
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
  std::vector<StateId> stack_;
  bool final_ = false;
  static constexpr StateId kNone = UINT32_MAX;
};

}  // namespace gbnf
