#include "matcher/recognizer.h"

#include <algorithm>
#include <string>

#include "support/whitespace.h"

namespace gbnf::detail {
namespace {
// A tail call inherits its caller's stack entries only when there are this few (right
// recursion has one); otherwise it pushes an ordinary entry.
constexpr uint32_t kMaxInheritedConts = 4;
[[noreturn]] void ThrowStateLimit(uint32_t limit) {
  throw LimitError("max_state_size",
                   "matcher state exceeds max_state_size (" + std::to_string(limit) +
                       " items and stack entries in one step); the grammar is too ambiguous "
                       "for this input, or raise the limit");
}

}  // namespace

Recognizer::Recognizer(std::shared_ptr<const Automaton> automaton, uint32_t max_state_size)
    : automaton_(std::move(automaton)),
      max_state_size_(max_state_size),
      distinct_rules_(automaton_->grammar().DistinctItemRules()) {
  Reset();
}

void Recognizer::Reset() {
  gss_.Clear();
  BeginStep();
  uint32_t root = gss_.NewNode(automaton_->root(), step_);
  gss_.node(root).accepts = true;
  Add(automaton_->RuleStart(automaton_->root()), root);
  Closure();
  items_.swap(scratch_.next);
  complete_ = next_complete_;
}

void Recognizer::ResetIsolated(StateId state) {
  gss_.Clear();
  BeginStep();
  uint32_t node = gss_.NewNode(0, step_);
  gss_.node(node).accepts = true;
  Add(state, node);
  Closure();
  items_.swap(scratch_.next);
  complete_ = next_complete_;
}

void Recognizer::MergeState(const std::vector<Item>& items, bool complete) {
  for (const Item& it : items) {
    bool present = false;
    for (const Item& own : items_) present = present || (own.state == it.state && own.node == it.node);
    if (!present) items_.push_back(it);
  }
  complete_ = complete_ || complete;
}

void Recognizer::SetState(const Item* first, const Item* last, bool complete) {
  items_.assign(first, last);
  complete_ = complete;
}

void Recognizer::BeginStep() {
  ++step_;
  work_ = 0;
  next_complete_ = false;
  scratch_.next.clear();
  scratch_.dedup.Clear();
}

bool Recognizer::FinishStep() {
  if (scratch_.next.empty()) return false;
  Closure();
  items_.swap(scratch_.next);
  complete_ = next_complete_;
  return true;
}

std::vector<std::vector<RuleId>> Recognizer::RuleStacks(size_t limit) const {
  std::vector<std::vector<RuleId>> out;
  std::vector<uint32_t> seen;  // nodes on the current walk (stacks may loop: left recursion)
  for (const Item& it : items_) {
    if (out.size() >= limit) break;
    const bool takes_input = !automaton_->ByteEdges(it.state).empty() ||
                             !automaton_->TokenEdges(it.state).empty();
    if (!takes_input) continue;
    std::vector<RuleId> stack;
    seen.clear();
    for (uint32_t node = it.node;;) {
      if (std::find(seen.begin(), seen.end(), node) != seen.end()) break;
      seen.push_back(node);
      const GssNode& n = gss_.node(node);
      stack.push_back(n.rule);
      if (n.cont_head == kNil) break;
      node = gss_.cont(n.cont_head).node;
    }
    std::reverse(stack.begin(), stack.end());
    // Rules inlined into the item's rule: those the next byte (token) would be read in.
    auto add = [&](const std::vector<RuleId>& inlined) {
      std::vector<RuleId> full = stack;
      full.insert(full.end(), inlined.begin(), inlined.end());
      if (out.size() < limit && std::find(out.begin(), out.end(), full) == out.end()) {
        out.push_back(std::move(full));
      }
    };
    for (const ByteEdge& e : automaton_->ByteEdges(it.state)) add(automaton_->InlinedRules(e.target));
    for (const TokenEdge& e : automaton_->TokenEdges(it.state)) {
      add(automaton_->InlinedRules(e.target));
    }
  }
  return out;
}

bool Recognizer::AdvanceByte(uint8_t byte) {
  BeginStep();
  for (const Item& it : items_) {
    if (blocked_count_ > 0 && IsBlocked(it.node)) continue;
    for (const ByteEdge& e : automaton_->ByteEdges(it.state)) {
      if (byte < e.lo) break;  // edges are sorted by lo
      if (byte <= e.hi) Add(e.target, it.node);
    }
  }
  return FinishStep();
}

bool Recognizer::AdvanceToken(uint32_t token_id) {
  BeginStep();
  const Grammar& g = automaton_->grammar();
  for (const Item& it : items_) {
    for (const TokenEdge& e : automaton_->TokenEdges(it.state)) {
      const Node& ref = g.node(e.node);
      int64_t want = token_ids_ ? (*token_ids_)[e.node] : (ref.token_by_id ? ref.token_id : -1);
      if (want < 0) continue;  // <text> needs a vocabulary
      if ((static_cast<uint64_t>(want) == token_id) != ref.negated) Add(e.target, it.node);
    }
  }
  return FinishStep();
}

// Predicts and completes until the new item set is closed. Items appended while iterating are
// visited too.
void Recognizer::Closure() {
  for (size_t i = 0; i < scratch_.next.size(); ++i) {
    Item it = scratch_.next[i];
    for (const CallEdge& c : automaton_->CallEdges(it.state)) Predict(c.rule, c.target, it.node);
    if (automaton_->IsFinal(it.state)) Complete(it.node);
  }
}

inline void Recognizer::CountWork() {
  if (++work_ > max_state_size_) ThrowStateLimit(max_state_size_);
}

inline void Recognizer::Add(StateId state, uint32_t node) {
  if (!scratch_.dedup.NewItem(scratch_.next, state, node)) return;
  CountWork();
  scratch_.next.push_back({state, node});
}

inline void Recognizer::AddCont(uint32_t node, StateId state, uint32_t caller) {
  if (!scratch_.dedup.NewCont(gss_, node, state, caller)) return;
  CountWork();
  gss_.AddCont(node, state, caller);
}

uint32_t Recognizer::PredictedNode(RuleId rule) {
  uint32_t node = scratch_.dedup.FindPrediction(rule);
  if (node != kNil) return node;
  node = gss_.NewNode(rule, step_);
  scratch_.dedup.AddPrediction(rule, node);
  Add(automaton_->RuleStart(rule), node);
  return node;
}

void Recognizer::Predict(RuleId rule, StateId target, uint32_t caller) {
  uint32_t node = PredictedNode(rule);
  const GssNode& c = gss_.node(caller);
  if (automaton_->IsPureFinal(target) && c.step != step_ &&
      c.cont_count <= kMaxInheritedConts) {
    // Tail call: completing `rule` completes the caller's rule, whose stack entries are final.
    bool accepts = c.accepts;
    for (uint32_t k = c.cont_head; k != kNil;) {
      GssCont cont = gss_.cont(k);
      CountWork();
      AddCont(node, cont.state, cont.node);
      k = cont.next;
    }
    if (accepts) gss_.node(node).accepts = true;
  } else {
    AddCont(node, target, caller);
  }
  if (automaton_->RuleNullable(rule)) Add(target, caller);
}

void Recognizer::Complete(uint32_t node) {
  GssNode& n = gss_.node(node);
  if (n.completed_step == step_) return;
  n.completed_step = step_;
  if (n.accepts) next_complete_ = true;
  if (n.step == step_) return;  // an empty completion: already taken at prediction
  for (uint32_t k = n.cont_head; k != kNil;) {
    GssCont cont = gss_.cont(k);
    CountWork();
    if (blocked_count_ == 0 || !IsBlocked(cont.node)) Add(cont.state, cont.node);
    k = cont.next;
  }
}

int Recognizer::SingleNextByte() const {
  int value = -1;
  for (const Item& it : items_) {
    for (const ByteEdge& e : automaton_->ByteEdges(it.state)) {
      if (e.lo != e.hi || (value >= 0 && value != e.lo)) return -1;
      value = e.lo;
    }
  }
  return value;
}

int Recognizer::SingleNextByteBesidesWhitespace() const {
  int value = -1;
  for (const Item& it : items_) {
    for (const ByteEdge& e : automaton_->ByteEdges(it.state)) {
      bool all_space = true;
      for (int b = e.lo; b <= e.hi && all_space; ++b) {
        all_space = IsWhitespaceByte(static_cast<uint8_t>(b));
      }
      if (all_space) continue;
      if (e.lo != e.hi || (value >= 0 && value != e.lo)) return -1;
      value = e.lo;
    }
  }
  return value;
}

void Recognizer::NextBytes(uint64_t bits[4]) const {
  for (const Item& it : items_) {
    for (const ByteEdge& e : automaton_->ByteEdges(it.state)) {
      for (int w = e.lo >> 6; w <= e.hi >> 6; ++w) {  // the range's bits, a word at a time
        const int lo = w == e.lo >> 6 ? e.lo & 63 : 0;
        const int hi = w == e.hi >> 6 ? e.hi & 63 : 63;
        bits[w] |= (~uint64_t{0} >> (63 - hi)) & (~uint64_t{0} << lo);
      }
    }
  }
}

bool Recognizer::CanTakeInput() const {
  for (const Item& it : items_) {
    if (!automaton_->ByteEdges(it.state).empty() || !automaton_->TokenEdges(it.state).empty()) {
      return true;
    }
  }
  return false;
}

bool Recognizer::HasTokenEdges() const {
  for (const Item& it : items_) {
    if (!automaton_->TokenEdges(it.state).empty()) return true;
  }
  return false;
}

}  // namespace gbnf::detail
