// Which copies of a long repetition the assembler emits by shifting (automaton.cc). The NFA
// builder replicated them (NfaPeriod::shifted): every copy but the first is the one before it
// shifted by its states. A closure from copy j then goes through the states of copy j - 1's
// closure shifted by one copy, as long as it reaches none of the last copies (whose ends lead
// out of the repetition) and never comes back into the copies from outside them. The closures
// of copy 1, taken first, say how far they reach; copies 2 .. LastShifted() are emitted by
// shifting the state one copy earlier.
#include <algorithm>
#include <vector>

#include "automaton/assembler.h"

namespace gbnf {
namespace {

constexpr uint32_t kMinShiftedCopies = 8;

}  // namespace

void AutomatonAssembler::CopyPlan::Note(StateId from, StateId to, bool consumes) {
  if (!Holds(to)) return;
  if (!Holds(from)) {
    entered = true;
    return;
  }
  const uint32_t copy = CopyOf(to);
  lowest = std::min(lowest, copy);
  uint32_t& highest = consumes ? targets : visited;
  highest = std::max(highest, copy);
}

// A closure from copy j reaches copies up to j - 1 + visited and its edges lead up to
// j - 1 + targets: the states gone through must be followed by a copy that is not the last one
// (its end's edges leave the repetition), and the targets must lie in the copies.
uint32_t AutomatonAssembler::CopyPlan::LastShifted() const {
  if (entered || lowest < 1 || visited + 1 >= copies || targets > copies) return 1;
  return std::min(copies - 1 - visited, copies - targets);
}

// The outermost shifted repetitions of enough copies whose FSM states repeat with the copies:
// copy j + 1's states are copy j's, each one copy further, from copy 1 on.
std::vector<AutomatonAssembler::CopyPlan> AutomatonAssembler::PlanCopies() const {
  std::vector<CopyPlan> plans;
  for (const detail::NfaPeriod& p : nfa_.periods) {
    if (!p.shifted || p.copies < kMinShiftedCopies || p.hi == p.lo) continue;
    CopyPlan plan;
    plan.lo = p.lo;
    plan.copies = p.copies;
    plan.per_copy = (p.hi - p.lo) / p.copies;
    bool repeats = true;
    StateId fsm_per_copy = 0;
    for (StateId s = p.lo + plan.per_copy; s < p.hi - plan.per_copy && repeats; ++s) {
      const StateId here = new_id_[s];
      const StateId next = new_id_[s + plan.per_copy];
      if (here == kNone || next == kNone) {
        repeats = here == next;
      } else {
        if (fsm_per_copy == 0) fsm_per_copy = next - here;
        repeats = next - here == fsm_per_copy;
      }
    }
    if (!repeats || fsm_per_copy == 0) continue;
    plan.fsm_per_copy = fsm_per_copy;
    plans.push_back(plan);
  }
  // Outermost first: a repetition nested in another one's copies is shifted with them.
  std::sort(plans.begin(), plans.end(), [](const CopyPlan& x, const CopyPlan& y) {
    return x.lo != y.lo ? x.lo < y.lo : x.copies * x.per_copy > y.copies * y.per_copy;
  });
  std::vector<CopyPlan> outermost;
  for (const CopyPlan& plan : plans) {
    if (!outermost.empty() && plan.lo < outermost.back().lo +
                                             outermost.back().copies * outermost.back().per_copy) {
      continue;
    }
    outermost.push_back(plan);
  }
  return outermost;
}

}  // namespace gbnf
