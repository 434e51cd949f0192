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

class Recognizer {
 public:
  Recognizer(std::shared_ptr<const Automaton> automaton, uint32_t max_state_size);

  void Reset();
  // Mask-cache hook: a fresh state holding just `state` inside one rule invocation that has no
  // caller; complete() then means "that invocation may end here".
  void ResetIsolated(StateId state);
  // Advances every item over `byte`. False (state unchanged) if no item can take it. Throws
  // LimitError (state unchanged) when the step exceeds max_state_size.
  bool AdvanceByte(uint8_t byte);
  // Advances over token-reference edges that `token_id` matches.
  bool AdvanceToken(uint32_t token_id);

  bool complete() const { return complete_; }
  const std::vector<Item>& items() const { return items_; }
  void SetState(const std::vector<Item>& items, bool complete);
  // Token-level hook: adds `items` (closed item sets of the same GSS) to the current set.
  void MergeState(const std::vector<Item>& items, bool complete);
  // Token-level hook: token references resolved against a vocabulary, token_ids[node] for every
  // kTokenRef node (-1: matches nothing). Without it only <[id]> references match.
  void SetTokenIds(std::shared_ptr<const std::vector<int64_t>> token_ids) {
    token_ids_ = std::move(token_ids);
  }
  // The step that produced the current items (nodes created in it are this step's predictions).
  uint64_t step() const { return step_; }
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
  std::shared_ptr<const std::vector<int64_t>> token_ids_;
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
