#include "grammar/shortest_derivation.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

class ShortestAnalysis {
 public:
  ShortestAnalysis(const Grammar& grammar, const RuleEdges& users,
                   const std::vector<uint8_t>& wanted, std::vector<Derivation>* table)
      : grammar_(grammar), users_(users), wanted_(wanted), table_(*table),
        component_(grammar.rules().size(), kOutside), queued_(grammar.rules().size(), 0) {}

  void Settle(const std::vector<RuleId>& members) {
    if (!wanted_[members.front()]) return;  // nor any other member
    const auto id = static_cast<uint32_t>(members.front());
    for (RuleId m : members) component_[m] = id;
    std::vector<RuleId> work(members.rbegin(), members.rend());
    for (RuleId m : members) queued_[m] = 1;
    while (!work.empty()) {
      const RuleId r = work.back();
      work.pop_back();
      queued_[r] = 0;
      const Derivation value = Evaluate(grammar_.rule(r).body);
      if (!(value < table_[r])) continue;
      table_[r] = value;
      for (const RuleId* u = users_.first(r); u != users_.last(r); ++u) {
        if (component_[*u] == id && !queued_[*u]) {
          queued_[*u] = 1;
          work.push_back(*u);
        }
      }
    }
  }

 private:
  static constexpr uint32_t kOutside = UINT32_MAX;

  // A composite node being evaluated: its next child, and the value of the children so far.
  struct Frame {
    NodeId id;
    uint32_t next;
    Derivation value;
  };

  // A body's value, depth first without recursion; leaves are folded into their parent at once.
  Derivation Evaluate(NodeId body) {
    frames_.clear();
    Derivation value;
    bool ready = Open(body, &value);
    for (;;) {
      if (ready) {
        if (frames_.empty()) return value;
        Fold(&frames_.back(), value);
      }
      Frame& frame = frames_.back();
      const Node& node = grammar_.node(frame.id);
      if (frame.next < node.children.size()) {
        ready = Open(node.children[frame.next], &value);
      } else {
        value = Close(node, frame.value);
        frames_.pop_back();
        ready = true;
      }
    }
  }

  // A leaf's value into *value (true), or a frame for a composite node (false).
  bool Open(NodeId id, Derivation* value) {
    const Node& node = grammar_.node(id);
    switch (node.kind) {
      case NodeKind::kLiteral: *value = {node.codepoints.size(), 0}; return true;
      case NodeKind::kCharClass:
      case NodeKind::kAnyChar: *value = {1, 0}; return true;
      case NodeKind::kTokenRef: *value = kNoSentence; return true;
      case NodeKind::kRuleRef: *value = ReferenceTo(table_[node.rule]); return true;
      case NodeKind::kSequence:
        if (node.children.empty()) {
          *value = {0, 0};
          return true;
        }
        frames_.push_back({id, 0, {0, 0}});
        return false;
      case NodeKind::kAlternation:
      case NodeKind::kRepeat:
        frames_.push_back({id, 0, kNoSentence});
        return false;
    }
    return true;
  }

  void Fold(Frame* frame, const Derivation& child) {
    switch (grammar_.node(frame->id).kind) {
      case NodeKind::kSequence: frame->value = SequenceOf(frame->value, child); break;
      case NodeKind::kAlternation: frame->value = std::min(frame->value, child); break;
      default: frame->value = child; break;  // a repeat's one item
    }
    ++frame->next;
  }

  static Derivation Close(const Node& node, const Derivation& value) {
    if (node.kind == NodeKind::kRepeat) return RepeatOf(value, node.min);
    return value.length < kNoDerivation ? value : kNoSentence;
  }

  const Grammar& grammar_;
  const RuleEdges& users_;
  const std::vector<uint8_t>& wanted_;
  std::vector<Derivation>& table_;
  std::vector<uint32_t> component_;  // per rule: its component's first member, once settled
  std::vector<uint8_t> queued_;      // per rule: on the work list of its component
  std::vector<Frame> frames_;
};

}  // namespace

void ShortestDerivations(const Grammar& grammar,
                         const std::vector<std::vector<RuleId>>& components,
                         const RuleEdges& users, const std::vector<uint8_t>& wanted,
                         std::vector<Derivation>* table) {
  table->resize(grammar.rules().size());
  ShortestAnalysis analysis(grammar, users, wanted, table);
  for (const std::vector<RuleId>& members : components) analysis.Settle(members);
}

}  // namespace gbnf::detail
