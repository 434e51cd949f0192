#include "automaton/nfa_builder.h"

#include <algorithm>
#include <string>

#include "grammar/rule_facts.h"

namespace gbnf::detail {

Nfa BuildRuleNfa(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
                 RuleId rule, size_t budget, bool replicate) {
  NfaBuilder builder(grammar, limits, plan, budget, replicate);
  builder.BuildRule(rule);
  return builder.Finish();
}

NfaBuilder::NfaBuilder(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
                       size_t budget, bool replicate)
    : grammar_(grammar), limits_(limits), plan_(plan), budget_(budget), replicate_(replicate) {}

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
  size_t size = size_t{nfa_.num_states} + nfa_.num_edges();
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
// A long repetition builds three copies; when the third is the second shifted by one copy's
// states (each copy is built the same way from its own start, so it is, but that is checked),
// the rest are replicas of it (NfaReplica: states, and edges read through the third copy's): a
// maxLength of 2000 characters is 2000 copies of a JSON character's few dozen states and
// edges, of which the NFA then holds three.
constexpr uint32_t kBuiltCopies = 3;
constexpr uint32_t kMinReplicatedCopies = 8;

StateId NfaBuilder::BuildCopies(NodeId child, StateId in, uint32_t copies, uint32_t depth,
                                StateId exit) {
  const StateId lo = nfa_.num_states;
  StateId s = in;
  CopyMark marks[kBuiltCopies + 1];  // where each copy built starts, and the last one's end
  bool shifted = false;
  for (uint32_t i = 0; i < copies; ++i) {
    if (i <= kBuiltCopies) marks[i] = Mark();
    if (i == kBuiltCopies && replicate_ && copies >= kMinReplicatedCopies &&
        CopyRepeats(lo, marks[1], marks[2], marks[3])) {
      // A repetition inside another one's copies is replicated with edges: the outer one's
      // template holds them.
      ReplicateCopy(marks[2], marks[3], copies - i, copies_open_ == 0);
      const StateId per_copy = marks[3].state - marks[2].state;
      if (s >= marks[2].state - per_copy && s < marks[3].state) s += (copies - i) * per_copy;
      shifted = true;
      break;
    }
    if (exit != kNoExit) AddEdge(s, exit, NfaEdgeKind::kEpsilon);
    ++copies_open_;
    s = Build(child, s, depth + 1);
    --copies_open_;
    if (i < kBuiltCopies) marks[i].end = s;
  }
  if (copies >= 2) nfa_.periods.push_back({lo, nfa_.num_states, copies, shifted});
  return s;
}

bool NfaBuilder::CopyRepeats(StateId lo, const CopyMark& a, const CopyMark& b,
                             const CopyMark& c) const {
  const StateId per_copy = b.state - a.state;
  if (a.state - lo != per_copy || c.state - b.state != per_copy ||
      c.edge - b.edge != b.edge - a.edge || c.period - b.period != b.period - a.period) {
    return false;
  }
  // The second copy's edges touch its own states and the first copy's end (its start).
  const auto shift = [&](StateId x) { return x >= lo && x < b.state ? x + per_copy : x; };
  if (b.end != shift(a.end)) return false;  // the next copy starts at the end of this one
  for (size_t k = 0; k < b.edge - a.edge; ++k) {
    const NfaEdge& x = nfa_.edges[a.edge + k];
    const NfaEdge& y = nfa_.edges[b.edge + k];
    if (y.from != shift(x.from) || y.target != shift(x.target) || y.kind != x.kind ||
        y.lo != x.lo || y.hi != x.hi || y.label != x.label) {
      return false;
    }
  }
  for (StateId k = 0; k < per_copy; ++k) {
    if (nfa_.state_chain[a.state + k] != nfa_.state_chain[b.state + k]) return false;
  }
  for (size_t k = 0; k < b.period - a.period; ++k) {
    const NfaPeriod& x = nfa_.periods[a.period + k];
    const NfaPeriod& y = nfa_.periods[b.period + k];
    if (y.lo != x.lo + per_copy || y.hi != x.hi + per_copy || y.copies != x.copies ||
        y.shifted != x.shifted) {
      return false;
    }
  }
  return true;
}

// The budget is checked after each copy whose states or edges reached a multiple of the check
// interval (a build checks at the multiple itself: at most one copy earlier or later).
void NfaBuilder::ReplicateCopy(const CopyMark& b, const CopyMark& c, uint32_t count,
                               bool virtual_edges) {
  const StateId per_copy = c.state - b.state;
  const StateId touched = b.state - per_copy;  // the copy's edges touch [touched, c.state)
  const size_t copy_edges = c.edge - b.edge;
  // Reserved up to the budget: a count far past it throws at its first check.
  const size_t room = budget_ / std::max<size_t>(1, per_copy + copy_edges);
  const size_t reserved = std::min<size_t>(count, room + 1);
  // A replica's edges are found by their source (AutomatonAssembler::ForEachOut): every source
  // must be one of the states that move.
  virtual_edges = virtual_edges && per_copy > 0;
  for (size_t e = b.edge; e < c.edge && virtual_edges; ++e) {
    virtual_edges = nfa_.edges[e].from >= touched && nfa_.edges[e].from < c.state;
  }
  if (virtual_edges) {
    nfa_.replicas.push_back({touched, c.state, per_copy, static_cast<uint32_t>(b.edge),
                             static_cast<uint32_t>(c.edge), count});
  } else {
    nfa_.edges.reserve(nfa_.edges.size() + reserved * copy_edges);
  }
  nfa_.state_chain.reserve(nfa_.state_chain.size() + reserved * per_copy);
  for (uint32_t k = 1; k <= count; ++k) {
    const StateId offset = k * per_copy;
    const size_t states_before = nfa_.num_states;
    const size_t edges_before = nfa_.num_edges();
    if (virtual_edges) {
      nfa_.replica_edges += copy_edges;
    } else {
      for (size_t e = b.edge; e < c.edge; ++e) {
        NfaEdge edge = nfa_.edges[e];
        if (edge.from >= touched && edge.from < c.state) edge.from += offset;
        if (edge.target >= touched && edge.target < c.state) edge.target += offset;
        nfa_.edges.push_back(edge);
      }
    }
    for (StateId s = b.state; s < c.state; ++s) nfa_.state_chain.push_back(nfa_.state_chain[s]);
    nfa_.num_states += per_copy;
    for (size_t p = b.period; p < c.period; ++p) {
      NfaPeriod period = nfa_.periods[p];
      period.lo += offset;
      period.hi += offset;
      nfa_.periods.push_back(period);
    }
    if (states_before / kSizeCheckInterval != nfa_.num_states / kSizeCheckInterval ||
        edges_before / kSizeCheckInterval != nfa_.num_edges() / kSizeCheckInterval) {
      CheckSize();
    }
  }
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
