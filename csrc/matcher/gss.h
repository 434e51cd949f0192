// The graph-structured stack: one node per (rule, byte position) where the rule was predicted,
// holding the continuations (caller state, caller's node) to resume when the rule completes.
// Nodes and continuations live in two flat pools owned by one Matcher (so fork() is two vector
// copies); a node is immutable once its byte step is over. Unreachable nodes are reclaimed by a
// mark-and-sweep collection whose roots the matcher supplies (current items and history).
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/automaton.h"

namespace gbnf::detail {

inline constexpr uint32_t kNil = UINT32_MAX;

// A parser item: automaton state `state` inside the rule invocation `node`.
struct Item {
  StateId state = 0;
  uint32_t node = 0;
};

struct GssCont {
  StateId state = 0;  // caller's state after the call
  uint32_t node = 0;  // caller's node
  uint32_t next = kNil;
};

struct GssNode {
  uint64_t step = 0;            // byte step that created it; immutable after that step
  uint64_t completed_step = 0;  // last step its completion was processed
  uint32_t cont_head = kNil;    // singly linked list in the continuation pool
  uint32_t cont_count = 0;
  RuleId rule = 0;
  bool accepts = false;  // completing here completes the root: the sentence may end
  bool in_use = false;
  bool marked = false;
};

class Gss {
 public:
  uint32_t NewNode(RuleId rule, uint64_t step);
  void AddCont(uint32_t node, StateId state, uint32_t caller) {
    uint32_t id;
    if (free_conts_ != kNil && !speculative_) {
      id = free_conts_;
      free_conts_ = conts_[id].next;
    } else {
      id = static_cast<uint32_t>(conts_.size());
      conts_.emplace_back();
    }
    GssNode& n = nodes_[node];
    conts_[id] = {state, caller, n.cont_head};
    n.cont_head = id;
    ++n.cont_count;
  }
  GssNode& node(uint32_t id) { return nodes_[id]; }
  const GssNode& node(uint32_t id) const { return nodes_[id]; }
  const GssCont& cont(uint32_t id) const { return conts_[id]; }
  void Clear();

  // Speculation (used by the mask walk): while on, nodes and entries are only appended (the
  // free lists are left alone), so RestoreMark() can drop everything created after Mark().
  struct MarkPoint {
    size_t nodes = 0;
    size_t conts = 0;
    uint32_t in_use = 0;
  };
  void SetSpeculative(bool on) { speculative_ = on; }
  MarkPoint Mark() const { return {nodes_.size(), conts_.size(), in_use_}; }
  void RestoreMark(const MarkPoint& m) {
    nodes_.resize(m.nodes);
    conts_.resize(m.conts);
    in_use_ = m.in_use;
  }

  // Raw access for the mask walk's memo (mask/config_walker.cc), which saves the nodes and
  // entries one step created and puts them back, at the same ids, later.
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_conts() const { return conts_.size(); }
  const GssNode* nodes_data() const { return nodes_.data(); }
  const GssCont* conts_data() const { return conts_.data(); }
  // Appends saved nodes and entries (speculative mode); the stack then holds `after`.
  void AppendSaved(const GssNode* nodes, size_t num_nodes, const GssCont* conts,
                   size_t num_conts, const MarkPoint& after) {
    nodes_.insert(nodes_.end(), nodes, nodes + num_nodes);
    conts_.insert(conts_.end(), conts, conts + num_conts);
    in_use_ = after.in_use;
  }

  // Collection: MarkFrom for every root item's node, then Sweep.
  bool ShouldCollect() const { return in_use_ > collect_threshold_; }
  void MarkFrom(uint32_t node);
  void Sweep();

 private:
  std::vector<GssNode> nodes_;
  std::vector<GssCont> conts_;
  uint32_t free_nodes_ = kNil;  // linked through cont_head of free nodes
  uint32_t free_conts_ = kNil;
  uint32_t in_use_ = 0;
  uint32_t collect_threshold_ = 4096;
  std::vector<uint32_t> mark_stack_;
  bool speculative_ = false;
};

}  // namespace gbnf::detail
