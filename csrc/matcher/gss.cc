#include "matcher/gss.h"

#include <algorithm>

namespace gbnf::detail {

uint32_t Gss::NewNode(RuleId rule, uint64_t step) {
  uint32_t id;
  if (free_nodes_ != kNil) {
    id = free_nodes_;
    free_nodes_ = nodes_[id].cont_head;
  } else {
    id = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  GssNode& n = nodes_[id];
  n = GssNode();
  n.step = step;
  n.rule = rule;
  n.in_use = true;
  ++in_use_;
  return id;
}

void Gss::Clear() {
  nodes_.clear();
  conts_.clear();
  free_nodes_ = kNil;
  free_conts_ = kNil;
  in_use_ = 0;
  collect_threshold_ = 4096;
}

void Gss::MarkFrom(uint32_t root) {
  if (nodes_[root].marked) return;
  nodes_[root].marked = true;
  mark_stack_.assign(1, root);
  while (!mark_stack_.empty()) {
    uint32_t id = mark_stack_.back();
    mark_stack_.pop_back();
    for (uint32_t c = nodes_[id].cont_head; c != kNil; c = conts_[c].next) {
      uint32_t caller = conts_[c].node;
      if (!nodes_[caller].marked) {
        nodes_[caller].marked = true;
        mark_stack_.push_back(caller);
      }
    }
  }
}

void Gss::Sweep() {
  for (uint32_t id = 0; id < nodes_.size(); ++id) {
    GssNode& n = nodes_[id];
    if (n.marked || !n.in_use) {
      n.marked = false;
      continue;
    }
    for (uint32_t c = n.cont_head; c != kNil;) {
      uint32_t next = conts_[c].next;
      conts_[c].next = free_conts_;
      free_conts_ = c;
      c = next;
    }
    n.in_use = false;
    n.cont_head = free_nodes_;
    free_nodes_ = id;
    --in_use_;
  }
  collect_threshold_ = std::max<uint32_t>(4096, in_use_ * 2);
}

}  // namespace gbnf::detail
