#include "grammar/shortest_derivation.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

constexpr Derivation kNone{kNoDerivation, kNoDerivation};

uint64_t AddLength(uint64_t a, uint64_t b) { return std::min(kNoDerivation, a + b); }

class ShortestAnalysis {
 public:
  ShortestAnalysis(const Grammar& grammar, const RuleEdges& references, const RuleEdges& users,
                   const std::vector<uint8_t>* wanted)
      : grammar_(grammar), references_(references), wanted_(wanted), users_(users),
        table_(grammar.rules().size()), component_(grammar.rules().size(), kOutside),
        queued_(grammar.rules().size(), 0) {}

  std::vector<Derivation> Run() {
    ForEachComponent(references_, [this](const std::vector<RuleId>& members) { Settle(members); });
    return std::move(table_);
  }

 private:
  static constexpr uint32_t kOutside = UINT32_MAX;

  void Settle(const std::vector<RuleId>& members) {
    if (wanted_ != nullptr && !(*wanted_)[members.front()]) return;  // nor any other member
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

  // A body's value, its nodes in post-order (children before their parent) with a value stack.
  Derivation Evaluate(NodeId body) {
    values_.clear();
    stack_.assign(1, {body, false});
    while (!stack_.empty()) {
      const auto [id, ready] = stack_.back();
      stack_.pop_back();
      const Node& node = grammar_.node(id);
      if (!ready && !node.children.empty()) {
        stack_.push_back({id, true});
        for (auto c = node.children.rbegin(); c != node.children.rend(); ++c) {
          stack_.push_back({*c, false});
        }
        continue;
      }
      Combine(node);
    }
    return values_.back();
  }

  // Replaces the node's children's values (the top of the stack) by the node's.
  void Combine(const Node& node) {
    switch (node.kind) {
      case NodeKind::kLiteral:
        values_.push_back({node.codepoints.size(), 0});
        return;
      case NodeKind::kCharClass:
      case NodeKind::kAnyChar:
        values_.push_back({1, 0});
        return;
      case NodeKind::kTokenRef:
        values_.push_back(kNone);
        return;
      case NodeKind::kRuleRef: {
        const Derivation& callee = table_[node.rule];
        values_.push_back(callee.length < kNoDerivation
                              ? Derivation{callee.length, callee.height + 1}
                              : kNone);
        return;
      }
      case NodeKind::kSequence:
      case NodeKind::kAlternation: {
        const size_t first = values_.size() - node.children.size();
        Derivation value = node.kind == NodeKind::kSequence ? Derivation{0, 0} : kNone;
        for (size_t k = first; k < values_.size(); ++k) {
          const Derivation& part = values_[k];
          if (node.kind == NodeKind::kAlternation) {
            value = std::min(value, part);
          } else if (part.length >= kNoDerivation || value.length >= kNoDerivation) {
            value = kNone;
          } else {
            value = {AddLength(value.length, part.length), std::max(value.height, part.height)};
          }
        }
        if (value.length >= kNoDerivation) value = kNone;
        values_.resize(first);
        values_.push_back(value);
        return;
      }
      case NodeKind::kRepeat: {
        Derivation& item = values_.back();
        if (node.min == 0) {
          item = {0, 0};
        } else if (item.length < kNoDerivation) {
          const uint64_t cap = kNoDerivation / node.min;
          item.length = item.length >= cap ? kNoDerivation : item.length * node.min;
          if (item.length >= kNoDerivation) item = kNone;
        }
        return;
      }
    }
  }

  struct Pending {
    NodeId id;
    bool ready;  // children evaluated
  };

  const Grammar& grammar_;
  const RuleEdges& references_;
  const std::vector<uint8_t>* wanted_;
  const RuleEdges& users_;
  std::vector<Derivation> table_;
  std::vector<uint32_t> component_;  // per rule: its component's first member, once settled
  std::vector<uint8_t> queued_;      // per rule: on the work list of its component
  std::vector<Derivation> values_;
  std::vector<Pending> stack_;
};

}  // namespace

std::vector<Derivation> ShortestDerivations(const Grammar& grammar, const RuleEdges& references,
                                            const RuleEdges& users,
                                            const std::vector<uint8_t>* wanted) {
  return ShortestAnalysis(grammar, references, users, wanted).Run();
}

}  // namespace gbnf::detail
