// The rule graph: which rules each rule's body references, the reverse (its users), and the
// graph's strongly connected components. The automaton's rule facts (rule_facts.h) and the
// doctor's (doctor_facts.h) are both computed component by component, callees first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

// Edges in compressed rows: rule r's edges lead to to[begin[r] .. begin[r + 1]).
struct RuleEdges {
  std::vector<uint32_t> begin;
  std::vector<RuleId> to;

  size_t rules() const { return begin.empty() ? 0 : begin.size() - 1; }
  const RuleId* first(RuleId r) const { return to.data() + begin[r]; }
  const RuleId* last(RuleId r) const { return to.data() + begin[r + 1]; }
};

// The distinct rules each rule's body references, in the order their first references appear
// in the source (left to right). visit(rule, node) sees every node of every body on the way
// (the walk's cost is reading the nodes, so a caller that needs more of them joins it).
template <typename Visit>
RuleEdges RuleReferences(const std::vector<Node>& nodes, const std::vector<Rule>& rules,
                         Visit&& visit) {
  constexpr uint32_t kNobody = UINT32_MAX;
  RuleEdges edges;
  edges.begin.reserve(rules.size() + 1);
  std::vector<uint32_t> last_user(rules.size(), kNobody);  // per rule: the last body naming it
  std::vector<NodeId> stack;
  for (RuleId r = 0; r < rules.size(); ++r) {
    edges.begin.push_back(static_cast<uint32_t>(edges.to.size()));
    stack.assign(1, rules[r].body);
    while (!stack.empty()) {
      const Node& node = nodes[stack.back()];
      stack.pop_back();
      visit(r, node);
      if (node.kind == NodeKind::kRuleRef) {
        if (last_user[node.rule] != r) {
          last_user[node.rule] = r;
          edges.to.push_back(node.rule);
        }
        continue;
      }
      stack.insert(stack.end(), node.children.rbegin(), node.children.rend());
    }
  }
  edges.begin.push_back(static_cast<uint32_t>(edges.to.size()));
  return edges;
}

inline RuleEdges RuleReferences(const std::vector<Node>& nodes, const std::vector<Rule>& rules) {
  return RuleReferences(nodes, rules, [](RuleId, const Node&) {});
}

// The same edges turned around: rule r leads to every rule that references it, in rule order.
RuleEdges Reversed(const RuleEdges& edges);

// Marks every rule an edge path leads to from a marked rule (`marked`: per rule).
void SpreadMarks(const RuleEdges& edges, std::vector<uint8_t>* marked);

// Tarjan's algorithm, without recursion: calls visit(members) once per strongly connected
// component, a component after every component it reaches (callees first). Roots are tried in
// rule order and edges followed in their order; members are listed in the order they were first
// met. (The doctor's Python reference, doctor/tree.py strongly_connected, gives the same lists.)
template <typename Visit>
void ForEachComponent(const RuleEdges& edges, Visit&& visit) {
  constexpr uint32_t kUnvisited = UINT32_MAX;
  const size_t n = edges.rules();
  std::vector<uint32_t> index(n, kUnvisited);
  std::vector<uint32_t> low(n, 0);
  std::vector<uint8_t> open(n, 0);  // on Tarjan's stack
  std::vector<RuleId> open_rules;
  std::vector<std::pair<RuleId, uint32_t>> path;  // rule, next edge to follow
  std::vector<RuleId> members;
  uint32_t counter = 0;
  auto enter = [&](RuleId r) {
    index[r] = low[r] = counter++;
    open[r] = 1;
    open_rules.push_back(r);
    path.emplace_back(r, edges.begin[r]);
  };
  for (RuleId top = 0; top < n; ++top) {
    if (index[top] != kUnvisited) continue;
    enter(top);
    while (!path.empty()) {
      const RuleId r = path.back().first;
      const uint32_t next = path.back().second;
      if (next < edges.begin[r + 1]) {
        ++path.back().second;
        const RuleId c = edges.to[next];
        if (index[c] == kUnvisited) {
          enter(c);
        } else if (open[c]) {
          low[r] = std::min(low[r], index[c]);
        }
        continue;
      }
      path.pop_back();
      if (!path.empty()) low[path.back().first] = std::min(low[path.back().first], low[r]);
      if (low[r] != index[r]) continue;
      auto first = std::find(open_rules.rbegin(), open_rules.rend(), r).base() - 1;
      members.assign(first, open_rules.end());
      open_rules.erase(first, open_rules.end());
      for (RuleId m : members) open[m] = 0;
      visit(static_cast<const std::vector<RuleId>&>(members));
    }
  }
}

}  // namespace gbnf::detail
