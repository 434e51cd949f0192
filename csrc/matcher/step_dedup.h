// Deduplication of one byte step's parser items, stack entries and predictions. Linear scans
// while a set is small (the common case: unambiguous grammars keep a handful of items), a hash
// table (StepTable) once it grows past kLinear, so large ambiguous steps stay O(1) per insert.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "matcher/gss.h"
#include "matcher/step_table.h"

namespace gbnf::detail {

class StepDedup {
 public:
  static constexpr size_t kLinear = 8;

  void Clear() {
    items_hashed_ = false;
    preds_hashed_ = false;
    preds_.clear();
    table_.Clear();
  }

  // True if (state, node) is not among `items` (this step's items so far).
  bool NewItem(const std::vector<Item>& items, StateId state, uint32_t node) {
    if (!items_hashed_) {
      for (const Item& it : items) {
        if (it.state == state && it.node == node) return false;
      }
      if (items.size() < kLinear) return true;
      items_hashed_ = true;
      for (const Item& it : items) table_.Insert(it.state, it.node, kItemTag);
    }
    return table_.Insert(state, node, kItemTag);
  }

  // True if `node` (created this step) has no stack entry (state, caller) yet.
  bool NewCont(const Gss& gss, uint32_t node, StateId state, uint32_t caller) {
    const GssNode& n = gss.node(node);
    if (n.cont_count < kLinear) {
      for (uint32_t k = n.cont_head; k != kNil; k = gss.cont(k).next) {
        if (gss.cont(k).state == state && gss.cont(k).node == caller) return false;
      }
      return true;
    }
    if (table_.Insert(node, kContMarker, kContMarker)) {
      for (uint32_t k = n.cont_head; k != kNil; k = gss.cont(k).next) {
        table_.Insert(gss.cont(k).state, gss.cont(k).node, node);
      }
    }
    return table_.Insert(state, caller, node);
  }

  // The node predicted for `rule` this step, or kNil.
  uint32_t FindPrediction(RuleId rule) const {
    if (preds_hashed_) return table_.Find(rule, kPredictTag, kPredictTag);
    for (const auto& [r, node] : preds_) {
      if (r == rule) return node;
    }
    return kNil;
  }

  void AddPrediction(RuleId rule, uint32_t node) {
    if (!preds_hashed_) {
      preds_.emplace_back(rule, node);
      if (preds_.size() <= kLinear) return;
      preds_hashed_ = true;
      for (const auto& [r, n] : preds_) table_.Put(r, kPredictTag, kPredictTag, n);
      return;
    }
    table_.Put(rule, kPredictTag, kPredictTag, node);
  }

 private:
  // Third key words: items and predictions never collide with stack entries (node ids).
  static constexpr uint32_t kItemTag = UINT32_MAX;
  static constexpr uint32_t kPredictTag = UINT32_MAX - 1;
  static constexpr uint32_t kContMarker = UINT32_MAX - 2;

  StepTable table_;
  bool items_hashed_ = false;
  bool preds_hashed_ = false;
  std::vector<std::pair<RuleId, uint32_t>> preds_;
};

}  // namespace gbnf::detail
