#include "automaton/nfa_builder.h"

#include <string>
#include <tuple>

#include "automaton/inlining.h"

namespace gbnf::detail {

Nfa BuildNfa(const Grammar& grammar, const AutomatonLimits& limits) {
  NfaBuilder builder(grammar, limits);
  builder.BuildCalledRules();
  return builder.Finish();
}

NfaBuilder::NfaBuilder(const Grammar& grammar, const AutomatonLimits& limits)
    : grammar_(grammar),
      limits_(limits),
      inline_(InlinableRules(grammar, limits.max_nesting_depth)),
      rule_depth_(RuleDepths(grammar, limits.max_nesting_depth)) {}

// Only the root and the rules some call edge names get a body of their own: a rule whose every
// reference is expanded in place (the many small rules of a schema grammar) would otherwise be
// built once more, unreachable, and then carried through every later pass. The rest get a start
// state that matches nothing. Bodies are built root first, then in the order calls are met; each
// rule's states stay contiguous.
void NfaBuilder::BuildCalledRules() {
  const size_t n = grammar_.rules().size();
  nfa_.rule_start.assign(n, 0);
  nfa_.rule_final.assign(n, 0);
  called_.assign(n, 0);
  Call(grammar_.root());
  for (size_t i = 0; i < to_build_.size(); ++i) {
    const RuleId rule = to_build_[i];
    const StateId start = NewState();
    nfa_.rule_start[rule] = start;
    nfa_.rule_final[rule] = Build(grammar_.rule(rule).body, start, 0);
  }
  for (RuleId rule = 0; rule < n; ++rule) {
    if (called_[rule]) continue;
    nfa_.rule_start[rule] = NewState();
    nfa_.rule_final[rule] = NewState();  // unreachable from the start: the rule matches nothing
  }
}

void NfaBuilder::Call(RuleId rule) {
  if (called_[rule]) return;
  called_[rule] = 1;
  to_build_.push_back(rule);
}

StateId NfaBuilder::NewState() {
  nfa_.state_chain.push_back(chain_);
  ++nfa_.num_states;
  if ((nfa_.num_states & 0xFFF) == 0) CheckSize();
  return nfa_.num_states - 1;
}

void NfaBuilder::AddEdge(StateId from, StateId target, NfaEdgeKind kind, uint32_t label,
                         uint8_t lo, uint8_t hi) {
  nfa_.edges.push_back({from, target, kind, lo, hi, label});
  if ((nfa_.edges.size() & 0xFFF) == 0) CheckSize();
}

void NfaBuilder::CheckSize() const {
  size_t size = size_t{nfa_.num_states} + nfa_.edges.size();
  if (size > limits_.max_automaton_size) {
    throw LimitError("max_automaton_size",
                     "grammar automaton exceeds max_automaton_size (" +
                         std::to_string(limits_.max_automaton_size) +
                         " states and edges); reduce repetition bounds or nesting");
  }
}

StateId NfaBuilder::Build(NodeId id, StateId in, uint32_t depth) {
  if (depth > limits_.max_nesting_depth) {
    throw LimitError("max_nesting_depth", "grammar nesting exceeds max_nesting_depth (" +
                                              std::to_string(limits_.max_nesting_depth) + ")");
  }
  const Node& node = grammar_.node(id);
  switch (node.kind) {
    case NodeKind::kSequence: {
      StateId s = in;
      for (NodeId child : node.children) s = Build(child, s, depth + 1);
      return s;
    }
    case NodeKind::kAlternation:
      return BuildAlternation(node, in, depth);
    case NodeKind::kLiteral:
      return BuildLiteral(node, in);
    case NodeKind::kCharClass:
    case NodeKind::kAnyChar:
      return BuildCodepoints(id, in);
    case NodeKind::kRuleRef:
      return BuildRuleRef(node, in, depth);
    case NodeKind::kTokenRef: {
      StateId out = NewState();
      AddEdge(in, out, NfaEdgeKind::kToken, id);
      return out;
    }
    case NodeKind::kRepeat:
      return BuildRepeat(node, in, depth);
  }
  return in;
}

// A small non-recursive rule is expanded in place (while the nesting budget allows); any other
// reference becomes a call edge.
StateId NfaBuilder::BuildRuleRef(const Node& node, StateId in, uint32_t depth) {
  if (inline_[node.rule] && depth + 1 + rule_depth_[node.rule] <= limits_.max_nesting_depth) {
    const uint32_t outer = chain_;
    auto [it, added] = chain_ids_.try_emplace({outer, node.rule},
                                              static_cast<uint32_t>(nfa_.chains.size()));
    if (added) {
      std::vector<RuleId> chain = nfa_.chains[outer];
      chain.push_back(node.rule);
      nfa_.chains.push_back(std::move(chain));
    }
    chain_ = it->second;
    const StateId out = Build(grammar_.rule(node.rule).body, in, depth + 1);
    chain_ = outer;
    return out;
  }
  Call(node.rule);
  StateId out = NewState();
  AddEdge(in, out, NfaEdgeKind::kCall, node.rule);
  return out;
}

StateId NfaBuilder::BuildLiteral(const Node& node, StateId in) {
  StateId s = in;
  for (uint32_t cp : node.codepoints) {
    uint8_t bytes[4];
    int n = EncodeUtf8(cp, bytes);
    for (int i = 0; i < n; ++i) {
      StateId next = NewState();
      AddEdge(s, next, NfaEdgeKind::kByte, 0, bytes[i], bytes[i]);
      s = next;
    }
  }
  return s;
}

const std::vector<Utf8Sequence>& NfaBuilder::Sequences(NodeId id) {
  auto it = sequences_.find(id);
  if (it != sequences_.end()) return it->second;
  const Node& node = grammar_.node(id);
  std::vector<CodepointRange> cps = node.kind == NodeKind::kAnyChar
                                        ? AnyCodepoints()
                                        : ClassCodepoints(node.ranges, node.negated);
  std::vector<Utf8Sequence> seqs;
  for (const CodepointRange& r : cps) AppendUtf8Sequences(r.lo, r.hi, &seqs);
  return sequences_.emplace(id, std::move(seqs)).first->second;
}

// A byte trie of the class's sequences: sequences with the same leading ranges share states.
StateId NfaBuilder::BuildCodepoints(NodeId id, StateId in) {
  const std::vector<Utf8Sequence>& seqs = Sequences(id);
  StateId out = NewState();
  // (parent state, lo, hi) -> child state, for the interior trie nodes built so far.
  std::vector<std::tuple<StateId, uint8_t, uint8_t, StateId>> trie;
  for (const Utf8Sequence& seq : seqs) {
    StateId s = in;
    for (int i = 0; i < seq.length; ++i) {
      ByteRange r = seq.ranges[i];
      if (i + 1 == seq.length) {
        AddEdge(s, out, NfaEdgeKind::kByte, 0, r.lo, r.hi);
        break;
      }
      StateId next = 0;
      bool found = false;
      for (const auto& [p, lo, hi, child] : trie) {
        if (p == s && lo == r.lo && hi == r.hi) {
          next = child;
          found = true;
          break;
        }
      }
      if (!found) {
        next = NewState();
        AddEdge(s, next, NfaEdgeKind::kByte, 0, r.lo, r.hi);
        trie.emplace_back(s, r.lo, r.hi, next);
      }
      s = next;
    }
  }
  return out;
}

StateId NfaBuilder::BuildAlternation(const Node& node, StateId in, uint32_t depth) {
  StateId out = NewState();
  for (NodeId child : node.children) {
    StateId end = Build(child, in, depth + 1);
    AddEdge(end, out, NfaEdgeKind::kEpsilon);
  }
  return out;
}

// x{m,n}: m copies, then (x (x ...)?)? with n-m copies; x{m,} ends with x* (m = 0) or x+.
StateId NfaBuilder::BuildRepeat(const Node& node, StateId in, uint32_t depth) {
  NodeId child = node.children[0];
  StateId s = in;
  if (node.max == kUnbounded) {
    for (uint32_t i = 1; i < node.min; ++i) s = Build(child, s, depth + 1);
    return node.min == 0 ? BuildStar(child, s, depth) : BuildPlus(child, s, depth);
  }
  for (uint32_t i = 0; i < node.min; ++i) s = Build(child, s, depth + 1);
  if (node.max <= node.min) return s;
  StateId exit = NewState();
  for (uint32_t i = node.min; i < node.max; ++i) {
    AddEdge(s, exit, NfaEdgeKind::kEpsilon);
    s = Build(child, s, depth + 1);
  }
  AddEdge(s, exit, NfaEdgeKind::kEpsilon);
  return exit;
}

StateId NfaBuilder::BuildStar(NodeId child, StateId in, uint32_t depth) {
  StateId loop = NewState();
  AddEdge(in, loop, NfaEdgeKind::kEpsilon);
  StateId end = Build(child, loop, depth + 1);
  AddEdge(end, loop, NfaEdgeKind::kEpsilon);
  return loop;
}

StateId NfaBuilder::BuildPlus(NodeId child, StateId in, uint32_t depth) {
  StateId loop = NewState();
  AddEdge(in, loop, NfaEdgeKind::kEpsilon);
  StateId end = Build(child, loop, depth + 1);
  AddEdge(end, loop, NfaEdgeKind::kEpsilon);
  StateId out = NewState();
  AddEdge(end, out, NfaEdgeKind::kEpsilon);
  return out;
}

}  // namespace gbnf::detail
