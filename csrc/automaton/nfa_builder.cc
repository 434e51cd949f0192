#include "automaton/nfa_builder.h"

#include <algorithm>
#include <string>

#include "grammar/rule_facts.h"

namespace gbnf::detail {

Nfa BuildRuleNfa(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
                 RuleId rule, size_t budget) {
  NfaBuilder builder(grammar, limits, plan, budget);
  builder.BuildRule(rule);
  return builder.Finish();
}

NfaBuilder::NfaBuilder(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
                       size_t budget)
    : grammar_(grammar), limits_(limits), plan_(plan), budget_(budget) {}

void NfaBuilder::BuildRule(RuleId rule) {
  nfa_.start = NewState();
  nfa_.final = Build(grammar_.rule(rule).body, nfa_.start, 0);
}

StateId NfaBuilder::NewState() {
  nfa_.state_chain.push_back(chain_);
  ++nfa_.num_states;
  if (nfa_.num_states % kSizeCheckInterval == 0) CheckSize();
  return nfa_.num_states - 1;
}

void NfaBuilder::AddEdge(StateId from, StateId target, NfaEdgeKind kind, uint32_t label,
                         uint8_t lo, uint8_t hi) {
  nfa_.edges.push_back({from, target, kind, lo, hi, label});
  if (nfa_.edges.size() % kSizeCheckInterval == 0) CheckSize();
}

void NfaBuilder::CheckSize() const {
  size_t size = size_t{nfa_.num_states} + nfa_.edges.size();
  if (size > budget_) {
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
  if (plan_.inlinable[node.rule] &&
      depth + 1 + plan_.depth[node.rule] <= limits_.max_nesting_depth) {
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

// A class's UTF-8 sequences as an acyclic byte automaton: first a trie (sequences with the same
// leading ranges share nodes), then nodes with the same edges merged, children first, so that
// equal rests are shared too ([80-BF][80-BF] after every 3-byte lead). Built once per class
// node; each use copies it.
const ClassShape& NfaBuilder::Shape(NodeId id) {
  if (const ClassShape* found = plan_.shapes.Find(id)) return *found;
  const Node& node = grammar_.node(id);
  std::vector<CodepointRange> cps = node.kind == NodeKind::kAnyChar
                                        ? AnyCodepoints()
                                        : ClassCodepoints(node.ranges, node.negated);
  std::vector<Utf8Sequence> seqs;
  for (const CodepointRange& r : cps) AppendUtf8Sequences(r.lo, r.hi, &seqs);
  // The trie: node 0 is the start, edges to ClassShape::kEnd finish a sequence.
  std::vector<std::vector<ClassShape::Edge>> trie(1);
  for (const Utf8Sequence& seq : seqs) {
    uint32_t at = 0;
    for (int i = 0; i < seq.length; ++i) {
      const ByteRange r = seq.ranges[i];
      if (i + 1 == seq.length) {
        trie[at].push_back({r.lo, r.hi, ClassShape::kEnd});
        break;
      }
      uint32_t next = ClassShape::kEnd;
      for (const ClassShape::Edge& e : trie[at]) {
        if (e.lo == r.lo && e.hi == r.hi && e.to != ClassShape::kEnd) next = e.to;
      }
      if (next == ClassShape::kEnd) {
        next = static_cast<uint32_t>(trie.size());
        trie[at].push_back({r.lo, r.hi, next});
        trie.emplace_back();
      }
      at = next;
    }
  }
  // Children have larger indices than their parents: merging from the last node up sees every
  // child's representative before its parent's edges are compared.
  std::vector<uint32_t> same(trie.size());
  std::map<std::vector<ClassShape::Edge>, uint32_t> by_edges;
  for (size_t n = trie.size(); n-- > 1;) {
    for (ClassShape::Edge& e : trie[n]) {
      if (e.to != ClassShape::kEnd) e.to = same[e.to];
    }
    std::sort(trie[n].begin(), trie[n].end());
    same[n] = by_edges.emplace(trie[n], static_cast<uint32_t>(n)).first->second;
  }
  for (ClassShape::Edge& e : trie[0]) {
    if (e.to != ClassShape::kEnd) e.to = same[e.to];
  }
  // Number the kept nodes (the start first, then in trie order) and flatten their edges.
  ClassShape shape;
  std::vector<uint32_t> number(trie.size(), ClassShape::kEnd);
  number[0] = 0;
  uint32_t kept = 1;
  for (size_t n = 1; n < trie.size(); ++n) {
    if (same[n] == n) number[n] = kept++;
  }
  shape.nodes = kept;
  for (size_t n = 0; n < trie.size(); ++n) {
    if (n != 0 && same[n] != n) continue;
    for (const ClassShape::Edge& e : trie[n]) {
      const uint32_t to = e.to == ClassShape::kEnd ? e.to : number[e.to];
      shape.edges.push_back({number[n], e.lo, e.hi, to});
    }
  }
  return plan_.shapes.Insert(id, std::move(shape));
}

StateId NfaBuilder::BuildCodepoints(NodeId id, StateId in) {
  const ClassShape& shape = Shape(id);
  const StateId out = NewState();
  std::vector<StateId>& states = shape_states_;
  states.assign(1, in);
  for (uint32_t n = 1; n < shape.nodes; ++n) states.push_back(NewState());
  for (const ClassShape::FlatEdge& e : shape.edges) {
    AddEdge(states[e.from], e.to == ClassShape::kEnd ? out : states[e.to], NfaEdgeKind::kByte, 0,
            e.lo, e.hi);
  }
  return out;
}

StateId NfaBuilder::BuildAlternation(const Node& node, StateId in, uint32_t depth) {
  StateId out = NewState();
  size_t literals = 0;
  for (NodeId child : node.children) {
    const Node& c = grammar_.node(child);
    if (c.kind == NodeKind::kLiteral && !c.codepoints.empty() && ++literals > 1) break;
  }
  for (NodeId child : node.children) {
    const Node& c = grammar_.node(child);
    if (literals > 1 && c.kind == NodeKind::kLiteral && !c.codepoints.empty()) continue;
    StateId end = Build(child, in, depth + 1);
    AddEdge(end, out, NfaEdgeKind::kEpsilon);
  }
  if (literals > 1) BuildLiteralTrie(node, in, out);
  return out;
}

// The non-empty literal alternatives as one byte trie from `in` that ends in `out`: an enum of a
// thousand names gets a state per distinct prefix, not per byte of every name, and the matcher
// keeps one item per prefix read, not one per name that starts so.
void NfaBuilder::BuildLiteralTrie(const Node& node, StateId in, StateId out) {
  std::vector<std::string>& words = trie_words_;
  words.clear();
  for (NodeId child : node.children) {
    const Node& c = grammar_.node(child);
    if (c.kind != NodeKind::kLiteral || c.codepoints.empty()) continue;
    std::string& w = words.emplace_back();
    for (uint32_t cp : c.codepoints) {
      uint8_t bytes[4];
      const int n = EncodeUtf8(cp, bytes);
      w.append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(n));
    }
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  // path[i]: the state after the first i bytes of the previous word (path[0] = in).
  std::vector<StateId>& path = trie_path_;
  path.assign(1, in);
  for (size_t k = 0; k < words.size(); ++k) {
    const std::string& w = words[k];
    size_t common = 0;
    if (k > 0) {
      const std::string& previous = words[k - 1];
      while (common < previous.size() && common < w.size() && previous[common] == w[common]) {
        ++common;
      }
    }
    path.resize(common + 1);
    // In sorted order, the words that go on after this one come right after it; when none
    // does, its last byte leads straight to `out` (no state of its own).
    const bool extended = k + 1 < words.size() && words[k + 1].compare(0, w.size(), w) == 0;
    for (size_t i = common; i < w.size(); ++i) {
      const auto b = static_cast<uint8_t>(w[i]);
      if (i + 1 == w.size() && !extended) {
        AddEdge(path.back(), out, NfaEdgeKind::kByte, 0, b, b);
        break;
      }
      const StateId next = NewState();
      AddEdge(path.back(), next, NfaEdgeKind::kByte, 0, b, b);
      path.push_back(next);
    }
    if (extended) AddEdge(path.back(), out, NfaEdgeKind::kEpsilon);
  }
}

// x{m,n}: m copies, then (x (x ...)?)? with n-m copies; x{m,} ends with x* (m = 0) or x+.
StateId NfaBuilder::BuildRepeat(const Node& node, StateId in, uint32_t depth) {
  NodeId child = node.children[0];
  if (node.max == kUnbounded) {
    const StateId s = node.min > 1 ? BuildCopies(child, in, node.min - 1, depth) : in;
    return node.min == 0 ? BuildStar(child, s, depth) : BuildPlus(child, s, depth);
  }
  const StateId s = BuildCopies(child, in, node.min, depth);
  if (node.max <= node.min) return s;
  StateId exit = NewState();
  AddEdge(BuildCopies(child, s, node.max - node.min, depth, exit), exit, NfaEdgeKind::kEpsilon);
  return exit;
}

// With an `exit`, each copy may be the last: an epsilon edge leads from its start to `exit`.
StateId NfaBuilder::BuildCopies(NodeId child, StateId in, uint32_t copies, uint32_t depth,
                                StateId exit) {
  const StateId lo = nfa_.num_states;
  StateId s = in;
  for (uint32_t i = 0; i < copies; ++i) {
    if (exit != kNoExit) AddEdge(s, exit, NfaEdgeKind::kEpsilon);
    s = Build(child, s, depth + 1);
  }
  if (copies >= 2) nfa_.periods.push_back({lo, nfa_.num_states, copies});
  return s;
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
