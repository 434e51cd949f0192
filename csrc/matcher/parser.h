// The Earley-style recognizer over the automaton: the current item set, advanced one byte (or
// one token reference) at a time. Prediction shares one stack node per (rule, step); nullable
// rules complete at prediction time (Aycock-Horspool), and a call in tail position inherits its
// caller's continuations, so right recursion does not grow the stack.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "matcher/gss.h"
#include "matcher/step_dedup.h"

namespace gbnf::detail {

class Parser {
 public:
  Parser(std::shared_ptr<const Automaton> automaton, uint32_t max_state_size);

  void Reset();
  // Advances every item over `byte`. False (state unchanged) if no item can take it. Throws
  // LimitError (state unchanged) when the step exceeds max_state_size.
  bool AdvanceByte(uint8_t byte);
  // Advances over token-reference edges that `token_id` matches.
  bool AdvanceToken(uint32_t token_id);

  bool complete() const { return complete_; }
  const std::vector<Item>& items() const { return items_; }
  void SetState(const std::vector<Item>& items, bool complete);
  const Automaton& automaton() const { return *automaton_; }
  const std::shared_ptr<const Automaton>& automaton_ptr() const { return automaton_; }

  // The one byte value every item can take next, or -1 (none, or a choice).
  int SingleNextByte() const;
  bool HasTokenEdges() const;

  Gss& gss() { return gss_; }

 private:
  // Per-step buffers, reused across steps and not copied by fork.
  struct Scratch {
    Scratch() = default;
    Scratch(const Scratch&) {}
    Scratch& operator=(const Scratch&) { return *this; }
    std::vector<Item> next;
    StepDedup dedup;
  };

  void BeginStep();
  bool FinishStep();
  void Closure();
  void Add(StateId state, uint32_t node);
  void AddCont(uint32_t node, StateId state, uint32_t caller);
  void Predict(RuleId rule, StateId target, uint32_t caller);
  void Complete(uint32_t node);
  uint32_t PredictedNode(RuleId rule);
  void CountWork();

  std::shared_ptr<const Automaton> automaton_;
  uint32_t max_state_size_;
  Gss gss_;
  std::vector<Item> items_;
  bool complete_ = false;
  uint64_t step_ = 0;
  // During a step:
  uint32_t work_ = 0;
  bool next_complete_ = false;
  Scratch scratch_;
};

}  // namespace gbnf::detail
