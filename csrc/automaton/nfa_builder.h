// Thompson construction: one rule of a Grammar as a byte-level NFA with epsilon edges, a start
// state and one final state (references to other rules are call edges, or expanded in place).
// Repetition x{m,n} becomes m copies of x followed by a nested optional chain of n-m copies
// (x (x (x)?)?)?, so each state's epsilon closure stays small.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "automaton/utf8_ranges.h"
#include "gbnf_sampler/automaton.h"

namespace gbnf::detail {

enum class NfaEdgeKind : uint8_t { kEpsilon, kByte, kCall, kToken };

struct NfaEdge {
  StateId from = 0;
  StateId target = 0;
  NfaEdgeKind kind = NfaEdgeKind::kEpsilon;
  uint8_t lo = 0;      // kByte
  uint8_t hi = 0;      // kByte
  uint32_t label = 0;  // kCall: rule id; kToken: token-ref node id
};

// `copies` equal copies of one item built one after the other: the states of [lo, hi), the
// same number per copy (a repetition's copies; the automaton looks for twins among them).
// `shifted`: every copy but the first is the one before it, its states and edges shifted by one
// copy's states (what the builder checked when it replicated a copy instead of building it).
struct NfaPeriod {
  StateId lo = 0;
  StateId hi = 0;
  uint32_t copies = 0;
  bool shifted = false;
};

// The copies of a long repetition that hold states but no edges in Nfa::edges (built by
// NfaBuilder::BuildCopies): the template is the edges [edge_lo, edge_hi) of one copy, which touch
// the states [touched_lo, touched_hi) (the copy before's end and the copy's own states); the
// replica i, for i in [1, count], has the template's edges with the touched states moved up by
// i * per_copy.
struct NfaReplica {
  StateId touched_lo = 0;
  StateId touched_hi = 0;
  StateId per_copy = 0;
  uint32_t edge_lo = 0;
  uint32_t edge_hi = 0;
  uint32_t count = 0;
  StateId Moved(StateId x, uint32_t i) const {
    return x >= touched_lo && x < touched_hi ? x + i * per_copy : x;
  }
};

struct Nfa {
  uint32_t num_states = 0;
  std::vector<NfaEdge> edges;
  std::vector<NfaReplica> replicas;
  size_t replica_edges = 0;  // the edges of the replicas, not in `edges`
  size_t num_edges() const { return edges.size() + replica_edges; }
  StateId start = 0;
  StateId final = 0;
  // Per state: the chain of inlined rules it was built inside (an index into `chains`; chain 0
  // is empty: the state belongs to its own rule's body). For explanations (rule stacks).
  std::vector<uint32_t> state_chain;
  std::vector<std::vector<RuleId>> chains{{}};
  std::vector<NfaPeriod> periods;  // repetitions of at least two copies
};

// A character class or "." as a small acyclic byte automaton (see Shape).
struct ClassShape {
  static constexpr uint32_t kEnd = UINT32_MAX;  // the class's end state
  struct Edge {
    uint8_t lo = 0;
    uint8_t hi = 0;
    uint32_t to = kEnd;
    bool operator<(const Edge& o) const {
      return lo != o.lo ? lo < o.lo : hi != o.hi ? hi < o.hi : to < o.to;
    }
    bool operator==(const Edge& o) const { return lo == o.lo && hi == o.hi && to == o.to; }
  };
  struct FlatEdge {
    uint32_t from = 0;  // node 0: the class's start
    uint8_t lo = 0;
    uint8_t hi = 0;
    uint32_t to = kEnd;
  };
  uint32_t nodes = 1;
  std::vector<FlatEdge> edges;
};

// Class shapes by class node, shared by the builds of every rule of a grammar (a JSON string's
// character class is inlined into most rules). Thread-safe; entries never move.
class ShapeCache {
 public:
  const ClassShape* Find(NodeId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = shapes_.find(id);
    return it == shapes_.end() ? nullptr : &it->second;
  }
  // Keeps the first shape stored for `id` (builds racing agree).
  const ClassShape& Insert(NodeId id, ClassShape shape) {
    std::lock_guard<std::mutex> lock(mutex_);
    return shapes_.emplace(id, std::move(shape)).first->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<NodeId, ClassShape> shapes_;
};

// What the builder needs to know of every rule, computed once per grammar (automaton.cc).
struct RulePlan {
  std::vector<uint8_t> inlinable;  // per rule: expand references in place (rule_facts.h)
  std::vector<uint32_t> depth;     // per rule: AST depth of the body
  std::vector<uint32_t> recursion;  // per rule: RuleFacts::recursion
  mutable ShapeCache shapes;  // filled as rules are built
};

// The builder compares its size with its budget each time its states or its edges reach a
// multiple of this: a rule whose NFA is more than twice this over the budget is always refused.
inline constexpr size_t kSizeCheckInterval = 4096;

// Builds `rule`'s NFA. `budget`: the states and edges it may have before LimitError
// ("max_automaton_size"); also throws LimitError("max_nesting_depth"). `replicate`: long
// repetitions copy one checked copy instead of building each (off only to test that they agree).
Nfa BuildRuleNfa(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
                 RuleId rule, size_t budget, bool replicate = true);

class NfaBuilder {
 public:
  NfaBuilder(const Grammar& grammar, const AutomatonLimits& limits, const RulePlan& plan,
             size_t budget, bool replicate);
  Nfa Finish() { return std::move(nfa_); }
  void BuildRule(RuleId rule);

 private:
  StateId NewState();
  void AddEdge(StateId from, StateId target, NfaEdgeKind kind, uint32_t label = 0,
               uint8_t lo = 0, uint8_t hi = 0);
  void CheckSize() const;
  // Adds the fragment of `node` starting at `in` and returns its end state. Never adds an edge
  // into `in`, so fragments can share their start state.
  StateId Build(NodeId node, StateId in, uint32_t depth);
  StateId BuildRuleRef(const Node& node, StateId in, uint32_t depth);
  StateId BuildLiteral(const Node& node, StateId in);
  const ClassShape& Shape(NodeId id);
  StateId BuildCodepoints(NodeId id, StateId in);
  StateId BuildAlternation(const Node& node, StateId in, uint32_t depth);
  void BuildLiteralTrie(const Node& node, StateId in, StateId out);
  StateId BuildRepeat(const Node& node, StateId in, uint32_t depth);
  StateId BuildStar(NodeId child, StateId in, uint32_t depth);
  StateId BuildPlus(NodeId child, StateId in, uint32_t depth);
  static constexpr StateId kNoExit = UINT32_MAX;
  // `copies` copies of `child` from `in`, one after the other; the last one's end.
  StateId BuildCopies(NodeId child, StateId in, uint32_t copies, uint32_t depth,
                      StateId exit = kNoExit);
  // Where the build of one copy began (its first state, edge and nested period), and its end.
  struct CopyMark {
    StateId state = 0;
    size_t edge = 0;
    size_t period = 0;
    StateId end = 0;
  };
  CopyMark Mark() const {
    return {nfa_.num_states, nfa_.edges.size(), nfa_.periods.size(), 0};
  }
  // Whether the copy built between `b` and `c` is the one built between `a` and `b` shifted by
  // its states (the copies start at `lo`).
  bool CopyRepeats(StateId lo, const CopyMark& a, const CopyMark& b, const CopyMark& c) const;
  // Appends `count` copies, each the copy between `b` and `c` shifted once more: their edges
  // in Nfa::edges, or (`virtual_edges`) as an NfaReplica.
  void ReplicateCopy(const CopyMark& b, const CopyMark& c, uint32_t count, bool virtual_edges);

  const Grammar& grammar_;
  AutomatonLimits limits_;
  Nfa nfa_;
  std::vector<StateId> shape_states_;             // BuildCodepoints' scratch
  const RulePlan& plan_;
  size_t budget_;
  bool replicate_;
  uint32_t copies_open_ = 0;  // repetitions whose copies are being built (nested counts)
  uint32_t chain_ = 0;                 // the inlined rules being built (index into nfa_.chains)
  std::map<std::pair<uint32_t, RuleId>, uint32_t> chain_ids_;  // (outer chain, rule) -> chain
  std::vector<std::string> trie_words_;  // BuildLiteralTrie's scratch (it never recurses)
  std::vector<StateId> trie_path_;
};

}  // namespace gbnf::detail
