#include "automaton/inlining.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

constexpr uint32_t kCostCap = 1u << 30;

uint32_t AddCost(uint32_t a, uint32_t b) { return std::min<uint64_t>(kCostCap, uint64_t{a} + b); }
uint32_t MulCost(uint32_t a, uint32_t b) { return std::min<uint64_t>(kCostCap, uint64_t{a} * b); }

// Rules referenced by each rule (with repetition, in AST order).
std::vector<std::vector<RuleId>> CallGraph(const Grammar& g) {
  std::vector<std::vector<RuleId>> callees(g.rules().size());
  std::vector<NodeId> stack;
  for (RuleId r = 0; r < g.rules().size(); ++r) {
    stack.assign(1, g.rule(r).body);
    while (!stack.empty()) {
      const Node& n = g.node(stack.back());
      stack.pop_back();
      if (n.kind == NodeKind::kRuleRef) callees[r].push_back(n.rule);
      for (NodeId c : n.children) stack.push_back(c);
    }
  }
  return callees;
}

// Kosaraju: the strongly connected component of each rule in the call graph; `finish_order`
// receives the rules in DFS post-order (callees before callers, outside cycles).
std::vector<uint32_t> Components(const std::vector<std::vector<RuleId>>& callees,
                                 std::vector<RuleId>* finish_order) {
  size_t n = callees.size();
  std::vector<uint8_t> seen(n, 0);
  std::vector<std::pair<RuleId, size_t>> stack;
  for (RuleId root = 0; root < n; ++root) {
    if (seen[root]) continue;
    seen[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [r, i] = stack.back();
      if (i < callees[r].size()) {
        RuleId c = callees[r][i++];
        if (!seen[c]) {
          seen[c] = 1;
          stack.emplace_back(c, 0);
        }
      } else {
        finish_order->push_back(r);
        stack.pop_back();
      }
    }
  }
  std::vector<std::vector<RuleId>> callers(n);
  for (RuleId r = 0; r < n; ++r) {
    for (RuleId c : callees[r]) callers[c].push_back(r);
  }
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> comp(n, kNone);
  uint32_t next = 0;
  std::vector<RuleId> work;
  for (size_t k = n; k-- > 0;) {
    RuleId root = (*finish_order)[k];
    if (comp[root] != kNone) continue;
    comp[root] = next;
    work.assign(1, root);
    while (!work.empty()) {
      RuleId r = work.back();
      work.pop_back();
      for (RuleId c : callers[r]) {
        if (comp[c] == kNone) {
          comp[c] = next;
          work.push_back(c);
        }
      }
    }
    ++next;
  }
  return comp;
}

// Expanded size of a subtree, counting inlinable callees by their own cost.
uint32_t Cost(const Grammar& g, NodeId id, const std::vector<uint32_t>& rule_cost,
              const std::vector<uint8_t>& inlinable, uint32_t depth, uint32_t max_depth) {
  if (depth > max_depth) return kCostCap;
  const Node& n = g.node(id);
  uint32_t cost = 1;
  if (n.kind == NodeKind::kRuleRef && inlinable[n.rule]) return AddCost(1, rule_cost[n.rule]);
  for (NodeId c : n.children) {
    cost = AddCost(cost, Cost(g, c, rule_cost, inlinable, depth + 1, max_depth));
  }
  if (n.kind == NodeKind::kRepeat) {
    uint32_t copies = n.max == kUnbounded ? std::max<uint32_t>(n.min, 1) : std::max(n.max, 1u);
    cost = MulCost(cost, copies);
  }
  return cost;
}

uint32_t Depth(const Grammar& g, NodeId id, uint32_t depth, uint32_t max_depth) {
  uint32_t deepest = depth;
  if (depth > max_depth) return depth;
  for (NodeId c : g.node(id).children) deepest = std::max(deepest, Depth(g, c, depth + 1, max_depth));
  return deepest;
}

}  // namespace

std::vector<uint32_t> RuleDepths(const Grammar& g, uint32_t max_nesting_depth) {
  std::vector<uint32_t> depths;
  for (const Rule& r : g.rules()) depths.push_back(Depth(g, r.body, 0, max_nesting_depth));
  return depths;
}

std::vector<uint8_t> InlinableRules(const Grammar& g, uint32_t max_nesting_depth) {
  size_t n = g.rules().size();
  std::vector<std::vector<RuleId>> callees = CallGraph(g);
  std::vector<RuleId> finish;
  std::vector<uint32_t> comp = Components(callees, &finish);
  std::vector<uint32_t> comp_size(n, 0);
  for (RuleId r = 0; r < n; ++r) ++comp_size[comp[r]];
  std::vector<uint8_t> inlinable(n, 0);
  std::vector<uint32_t> cost(n, kCostCap);
  // DFS finish order visits callees before callers (outside cycles).
  for (RuleId r : finish) {
    bool self_call = std::find(callees[r].begin(), callees[r].end(), r) != callees[r].end();
    if (comp_size[comp[r]] > 1 || self_call) continue;
    // A distinct-items array keeps its own stack node: the matcher finds the array by it.
    if (!g.DistinctItemRules().empty() && g.DistinctItemRules()[r]) continue;
    cost[r] = Cost(g, g.rule(r).body, cost, inlinable, 0, max_nesting_depth);
    inlinable[r] = cost[r] <= kInlineBudget;
  }
  return inlinable;
}

}  // namespace gbnf::detail
