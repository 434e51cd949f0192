#include "grammar/rule_facts.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "automaton/utf8_ranges.h"
#include "grammar/rule_graph.h"

namespace gbnf::detail {
namespace {

constexpr uint32_t kCostCap = 1u << 30;
constexpr uint32_t kNone = kNotRecursive;

uint32_t AddCost(uint32_t a, uint32_t b) { return std::min<uint64_t>(kCostCap, uint64_t{a} + b); }
uint32_t MulCost(uint32_t a, uint32_t b) { return std::min<uint64_t>(kCostCap, uint64_t{a} * b); }
uint64_t AddSize(uint64_t a, uint64_t b) { return std::min(kSizeCap, a + b); }
uint64_t MulSize(uint64_t a, uint32_t b) {
  if (a <= UINT32_MAX) return std::min(kSizeCap, a * b);  // below 2^64: no overflow
  return b != 0 && a > kSizeCap / b ? kSizeCap : a * b;
}

// One node of a rule body, in post-order (children before their parent), so that one pass with a
// stack of summaries evaluates the body. Far smaller than the grammar's nodes, and contiguous:
// bodies are read from here, not from the tree, after the first walk.
struct Step {
  enum Kind : uint8_t { kTerminal, kRule, kSequence, kAlternation, kRepeat };
  Kind kind;
  bool productive;  // kTerminal
  bool nullable;    // kTerminal
  uint32_t a;       // kRule: the rule; kSequence, kAlternation: child count; kRepeat: min;
                    // kTerminal: its smallest NFA (states plus edges)
  uint32_t b;       // kRepeat: max
};

// The rules' bodies as steps, the distinct rules each references, and the reverse (its users),
// from one walk over the grammar.
struct RulePrograms {
  std::vector<uint32_t> step_begin;  // rule r's body: steps[step_begin[r] .. step_begin[r + 1])
  std::vector<Step> steps;
  RuleEdges refs;   // in first-reference order, as RuleReferences gives them
  RuleEdges users;
  std::vector<uint8_t> self_reference;

  explicit RulePrograms(const RuleTree& tree) : tree_(tree), last_user_(tree.rules.size(), kNone) {
    const size_t n = tree.rules.size();
    step_begin.reserve(n + 1);
    refs.begin.reserve(n + 1);
    steps.reserve(tree.nodes.size());
    self_reference.assign(n, 0);
    for (RuleId r = 0; r < n; ++r) {
      step_begin.push_back(static_cast<uint32_t>(steps.size()));
      refs.begin.push_back(static_cast<uint32_t>(refs.to.size()));
      Emit(tree.rules[r].body, r);
    }
    step_begin.push_back(static_cast<uint32_t>(steps.size()));
    refs.begin.push_back(static_cast<uint32_t>(refs.to.size()));
    users = Reversed(refs);
  }

 private:
  void Emit(NodeId id, RuleId r) {
    const Node& node = tree_.nodes[id];
    for (NodeId c : node.children) Emit(c, r);
    switch (node.kind) {
      case NodeKind::kRuleRef:
        steps.push_back({Step::kRule, false, false, node.rule, 0});
        if (last_user_[node.rule] != r) {
          last_user_[node.rule] = r;
          refs.to.push_back(node.rule);
          if (node.rule == r) self_reference[r] = 1;
        }
        return;
      case NodeKind::kSequence:
      case NodeKind::kAlternation:
        steps.push_back({node.kind == NodeKind::kSequence ? Step::kSequence : Step::kAlternation,
                         false, false, static_cast<uint32_t>(node.children.size()), 0});
        return;
      case NodeKind::kRepeat:
        steps.push_back({Step::kRepeat, false, false, node.min, node.max});
        return;
      case NodeKind::kLiteral: {
        // A state and an edge per byte, so at least per code point (in a literal trie the last
        // byte's state is the alternation's end, counted by the alternation). The code points
        // themselves are not read: on a freshly parsed grammar that is a cache miss per node.
        const auto length = static_cast<uint32_t>(node.codepoints.size());
        steps.push_back({Step::kTerminal, true, length == 0, length == 0 ? 0 : 2 * length - 1, 0});
        return;
      }
      case NodeKind::kCharClass: {
        // Not empty: the automaton builder's own test (it has byte edges then). Only a negated
        // class needs the set worked out; its byte automaton then holds a path as long as the
        // UTF-8 form of its largest code point (that many edges, and states).
        uint32_t size = node.ranges.empty() ? 1 : 2;
        if (node.negated) size = SetSize(ClassCodepoints(node.ranges, true));
        steps.push_back({Step::kTerminal, size > 1, false, size, 0});
        return;
      }
      case NodeKind::kAnyChar: {
        static const uint32_t any_size = SetSize(AnyCodepoints());
        steps.push_back({Step::kTerminal, true, false, any_size, 0});
        return;
      }
      case NodeKind::kTokenRef:
        steps.push_back({Step::kTerminal, true, false, 2, 0});
        return;
    }
  }

  static uint32_t Utf8Length(uint32_t cp) {
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }

  // A lower bound on the byte automaton of a code point set (1: empty, no edges). Its start has
  // an edge per distinct first byte range of the set's UTF-8 sequences, and the longest encoding
  // is a path: a state and an edge per further byte, and the end state.
  static uint32_t SetSize(const std::vector<CodepointRange>& set) {
    if (set.empty()) return 1;
    std::vector<Utf8Sequence> sequences;
    for (const CodepointRange& r : set) AppendUtf8Sequences(r.lo, r.hi, &sequences);
    std::vector<std::pair<uint8_t, uint8_t>> leads;
    for (const Utf8Sequence& q : sequences) leads.emplace_back(q.ranges[0].lo, q.ranges[0].hi);
    std::sort(leads.begin(), leads.end());
    const auto distinct = std::unique(leads.begin(), leads.end()) - leads.begin();
    return static_cast<uint32_t>(distinct) + 2 * Utf8Length(set.back().hi) - 1;
  }

  const RuleTree& tree_;
  std::vector<uint32_t> last_user_;  // per rule: the last rule seen referencing it
};

class RuleAnalysis {
 public:
  RuleAnalysis(const RuleTree& tree, uint32_t max_depth)
      : tree_(tree), programs_(tree), max_depth_(max_depth), cost_(tree.rules.size(), kCostCap) {
    const size_t n = tree.rules.size();
    facts_.productive.assign(n, 0);
    facts_.nullable.assign(n, 0);
    facts_.inlinable.assign(n, 0);
    facts_.depth.assign(n, 0);
    facts_.min_size.assign(n, 0);
    facts_.inlined_height.assign(n, 0);
    component_.assign(n, kNone);
    examined_.assign(n, 0);
  }

  RuleFacts Run(RuleId root) {
    VisitComponents();
    if (root != kNoRoot) MarkReachable(root);
    facts_.recursion = std::move(component_);
    return std::move(facts_);
  }

 private:
  struct Summary {
    bool productive;
    bool nullable;
    uint32_t cost;    // expanded size, inlinable callees counted by their own cost
    uint32_t height;  // AST depth below this node
    uint64_t size;    // lower bound on the NFA's states plus edges (RuleFacts::min_size)
    // The same two with every inlinable reference expanded in place: the builder's nesting
    // depth once the inlined bodies count (saturates past the limit), and the size then, a
    // lower bound that holds when that depth is within the limit (every reference is inlined).
    uint32_t inlined_height;
    uint64_t inlined_size;
  };
  struct Gained {
    bool productive = false;
    bool nullable = false;
  };

  // Components come out callees first, so every rule a component references outside itself is
  // settled when the component is.
  void VisitComponents() {
    ForEachComponent(programs_.refs,
                     [this](const std::vector<RuleId>& members) { Settle(members); });
  }

  // Facts of the component of `members`, all its outside callees settled.
  void Settle(const std::vector<RuleId>& members) {
    const RuleId first = members.front();
    if (members.size() == 1 && !programs_.self_reference[first]) {
      const Summary s = Evaluate(first);
      Record(first, s);
      const bool distinct_items =
          !tree_.distinct_items.empty() && tree_.distinct_items[first] != 0;
      cost_[first] = s.height > max_depth_ ? kCostCap : s.cost;
      // A distinct-items array keeps its own stack node: the matcher finds the array by it.
      facts_.inlinable[first] = !distinct_items && cost_[first] <= kInlineBudget;
      return;
    }
    // Recursive: the least fixpoint of productive and nullable inside the component. A member
    // is read again only when a member it references has just become productive or nullable.
    const auto id = static_cast<uint32_t>(first);
    for (RuleId m : members) component_[m] = id;
    std::vector<RuleId> work;
    auto reexamine_users = [&](RuleId r, Gained gained) {
      if (!gained.productive && !gained.nullable) return;
      const RuleEdges& users = programs_.users;
      for (const RuleId* user = users.first(r); user != users.last(r); ++user) {
        const RuleId u = *user;
        if (component_[u] == id && examined_[u] &&
            ((gained.productive && !facts_.productive[u]) ||
             (gained.nullable && !facts_.nullable[u]))) {
          work.push_back(u);
        }
      }
    };
    for (RuleId m : members) {
      examined_[m] = 1;
      reexamine_users(m, Record(m, Evaluate(m)));
      while (!work.empty()) {
        const RuleId u = work.back();
        work.pop_back();
        reexamine_users(u, Record(u, Evaluate(u)));
      }
    }
  }

  void MarkReachable(RuleId root) {
    facts_.reachable.assign(tree_.rules.size(), 0);
    facts_.reachable[root] = 1;
    SpreadMarks(programs_.refs, &facts_.reachable);
  }

  // Stores a rule's facts; says which of productive and nullable it has just become.
  Gained Record(RuleId r, const Summary& s) {
    facts_.depth[r] = std::min(s.height, max_depth_ + 1);
    // Inside the nesting limit the builder inlines every inlinable reference (it inlines one
    // where its depth plus the callee's fits), so the callees' own bounds count in full.
    facts_.min_size[r] = s.inlined_height <= max_depth_ ? s.inlined_size : s.size;
    facts_.inlined_height[r] = s.inlined_height;
    const Gained gained{s.productive && !facts_.productive[r], s.nullable && !facts_.nullable[r]};
    facts_.productive[r] |= static_cast<uint8_t>(s.productive);
    facts_.nullable[r] |= static_cast<uint8_t>(s.nullable);
    return gained;
  }

  // The summary of rule r's body, from its steps.
  Summary Evaluate(RuleId r) {
    values_.clear();
    for (uint32_t i = programs_.step_begin[r]; i < programs_.step_begin[r + 1]; ++i) {
      const Step& step = programs_.steps[i];
      switch (step.kind) {
        case Step::kTerminal:
          values_.push_back({step.productive, step.nullable, 1, 0, step.a, 0, step.a});
          break;
        case Step::kRule: {
          // A call is a state and an edge; an inlinable rule is expanded in place where the
          // nesting limit leaves room, else called.
          const RuleId c = step.a;
          const bool inline_ = facts_.inlinable[c] != 0;
          values_.push_back({facts_.productive[c] != 0, facts_.nullable[c] != 0,
                             inline_ ? AddCost(1, cost_[c]) : 1u, 0,
                             inline_ ? std::min<uint64_t>(2, facts_.min_size[c]) : 2,
                             inline_ ? Deeper(facts_.inlined_height[c]) : 0,
                             inline_ ? facts_.min_size[c] : 2});
          break;
        }
        case Step::kSequence:
        case Step::kAlternation: {
          const bool all = step.kind == Step::kSequence;
          // An alternation's literals share one trie, so it is at least its largest
          // alternative (and its end state).
          Summary s{all, all, 1, 0, all ? 0u : 1u, 0, all ? 0u : 1u};
          for (size_t k = values_.size() - step.a; k < values_.size(); ++k) {
            const Summary& part = values_[k];
            s.productive = all ? s.productive && part.productive : s.productive || part.productive;
            s.nullable = all ? s.nullable && part.nullable : s.nullable || part.nullable;
            s.cost = AddCost(s.cost, part.cost);
            s.height = std::max(s.height, part.height + 1);
            s.size = all ? AddSize(s.size, part.size) : std::max(s.size, AddSize(1, part.size));
            s.inlined_height = std::max(s.inlined_height, Deeper(part.inlined_height));
            s.inlined_size = all ? AddSize(s.inlined_size, part.inlined_size)
                                 : std::max(s.inlined_size, AddSize(1, part.inlined_size));
          }
          values_.resize(values_.size() - step.a);
          values_.push_back(s);
          break;
        }
        case Step::kRepeat: {
          Summary& item = values_.back();
          const bool may_be_empty = step.a == 0 || step.b == 0;
          const uint32_t copies =
              step.b == kUnbounded ? std::max<uint32_t>(step.a, 1) : std::max(step.b, 1u);
          // The builder's copies: x{m,n} n of them, x{m,} m (at least one).
          const uint32_t built = step.b == kUnbounded ? std::max<uint32_t>(step.a, 1) : step.b;
          item = {may_be_empty || item.productive, may_be_empty || item.nullable,
                  MulCost(AddCost(1, item.cost), copies), item.height + 1,
                  MulSize(item.size, built), Deeper(item.inlined_height),
                  MulSize(item.inlined_size, built)};
          break;
        }
      }
    }
    return values_.back();
  }

  // One level below `height`, saturated just past the nesting limit.
  uint32_t Deeper(uint32_t height) const { return std::min(height, max_depth_) + 1; }

  const RuleTree& tree_;
  const RulePrograms programs_;
  const uint32_t max_depth_;
  RuleFacts facts_;
  std::vector<uint32_t> cost_;       // per settled rule outside recursion
  std::vector<uint32_t> component_;  // per rule in a recursive component: its first member
  std::vector<uint8_t> examined_;    // per rule in a recursive component: read once already
  std::vector<Summary> values_;      // Evaluate's stack
};

}  // namespace

RuleFacts AnalyzeRules(const RuleTree& grammar, uint32_t max_nesting_depth, RuleId root) {
  return RuleAnalysis(grammar, max_nesting_depth).Run(root);
}

RuleFacts AutomatonRuleFacts(const Grammar& grammar, uint32_t max_nesting_depth, bool* reused) {
  const RuleFacts* parsed = grammar.ParsedFacts();
  // The parse's facts hold for a limit every body fits within, inlined callees included (the
  // size bounds count those in full only then).
  const bool reuse =
      parsed != nullptr &&
      std::all_of(parsed->inlined_height.begin(), parsed->inlined_height.end(),
                  [max_nesting_depth](uint32_t height) { return height <= max_nesting_depth; });
  if (reused != nullptr) *reused = reuse;
  return reuse ? *parsed : AnalyzeRules(grammar, max_nesting_depth);
}

}  // namespace gbnf::detail
