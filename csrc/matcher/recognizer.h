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
  void SetState(const std::vector<Item>& items, bool complete) {
    SetState(items.data(), items.data() + items.size(), complete);
  }
  void SetState(const Item* first, const Item* last, bool complete);
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
  // The same, leaving out whitespace bytes (between JSON tokens, where they change no value).
  int SingleNextByteBesidesWhitespace() const;
  // Sets bit b of bits[b / 64] for every byte value some item can take next.
  void NextBytes(uint64_t bits[4]) const;
  bool HasTokenEdges() const;
  // Some item can take a byte or a token next.
  bool CanTakeInput() const;

  // DistinctItems: the next AdvanceByte drops the parses inside the distinct-items arrays whose
  // stack node was predicted at one of these steps (items of that node do not take the byte,
  // completions into it are not resumed). `count` 0 lifts it; at most two steps.
  void SetBlocked(const uint64_t* steps, int count) {
    blocked_count_ = count;
    for (int i = 0; i < count; ++i) blocked_steps_[i] = steps[i];
  }

  Gss& gss() { return gss_; }
  const Gss& gss() const { return gss_; }

  // For each item that can take a byte or a token next: the rules from the root down to the
  // item's rule, following the first caller of each stack node (a node may have several; a rule
  // called in tail position left the stack and is not shown), then the rules inlined into it
  // that the next byte would be read in (Automaton::InlinedRules of each edge's target).
  // Distinct stacks, at most `limit`.
  std::vector<std::vector<RuleId>> RuleStacks(size_t limit) const;

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
  bool IsBlocked(uint32_t node) const {
    const GssNode& n = gss_.node(node);
    if (distinct_rules_.empty() || !distinct_rules_[n.rule]) return false;
    for (int i = 0; i < blocked_count_; ++i) {
      if (blocked_steps_[i] == n.step) return true;
    }
    return false;
  }

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const std::vector<int64_t>> token_ids_;
  uint32_t max_state_size_;
  std::vector<uint8_t> distinct_rules_;  // per rule: a "#@ distinct-items" array (or empty)
  uint64_t blocked_steps_[2] = {0, 0};
  int blocked_count_ = 0;
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
