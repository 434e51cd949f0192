// Thompson construction: a Grammar's rules as one byte-level NFA with epsilon edges. Every rule
// gets a start state and one final state; repetition x{m,n} becomes m copies of x followed by a
// nested optional chain of n-m copies (x (x (x)?)?)?, so each state's epsilon closure stays small.
#pragma once

#include <cstdint>
#include <map>
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

struct Nfa {
  uint32_t num_states = 0;
  std::vector<NfaEdge> edges;
  std::vector<StateId> rule_start;  // per rule
  std::vector<StateId> rule_final;  // per rule
  // Per state: the chain of inlined rules it was built inside (an index into `chains`; chain 0
  // is empty: the state belongs to its own rule's body). For explanations (rule stacks).
  std::vector<uint32_t> state_chain;
  std::vector<std::vector<RuleId>> chains{{}};
};

// Builds the NFA of the root and of every rule it calls (a rule only ever expanded in place
// matches nothing on its own). Throws LimitError("max_automaton_size" / "max_nesting_depth").
Nfa BuildNfa(const Grammar& grammar, const AutomatonLimits& limits);

class NfaBuilder {
 public:
  NfaBuilder(const Grammar& grammar, const AutomatonLimits& limits);
  Nfa Finish() { return std::move(nfa_); }
  // Builds the root's body and, transitively, the body of every rule a call edge names.
  void BuildCalledRules();

 private:
  StateId NewState();
  void Call(RuleId rule);  // queues the rule's body (once)
  void AddEdge(StateId from, StateId target, NfaEdgeKind kind, uint32_t label = 0,
               uint8_t lo = 0, uint8_t hi = 0);
  void CheckSize() const;
  // Adds the fragment of `node` starting at `in` and returns its end state. Never adds an edge
  // into `in`, so fragments can share their start state.
  StateId Build(NodeId node, StateId in, uint32_t depth);
  StateId BuildRuleRef(const Node& node, StateId in, uint32_t depth);
  StateId BuildLiteral(const Node& node, StateId in);
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
  const ClassShape& Shape(NodeId id);
  StateId BuildCodepoints(NodeId id, StateId in);
  StateId BuildAlternation(const Node& node, StateId in, uint32_t depth);
  void BuildLiteralTrie(const Node& node, StateId in, StateId out);
  StateId BuildRepeat(const Node& node, StateId in, uint32_t depth);
  StateId BuildStar(NodeId child, StateId in, uint32_t depth);
  StateId BuildPlus(NodeId child, StateId in, uint32_t depth);

  const Grammar& grammar_;
  AutomatonLimits limits_;
  Nfa nfa_;
  std::unordered_map<NodeId, ClassShape> shapes_;  // per class / any node
  std::vector<StateId> shape_states_;             // BuildCodepoints' scratch
  std::vector<uint8_t> inline_;        // per rule: expand references in place
  std::vector<uint32_t> rule_depth_;   // per rule: AST depth of the body
  std::vector<uint8_t> called_;        // per rule: named by a call edge (or the root)
  std::vector<RuleId> to_build_;       // rules whose bodies are built, in order
  uint32_t chain_ = 0;                 // the inlined rules being built (index into nfa_.chains)
  std::map<std::pair<uint32_t, RuleId>, uint32_t> chain_ids_;  // (outer chain, rule) -> chain
  std::vector<std::string> trie_words_;  // BuildLiteralTrie's scratch (it never recurses)
  std::vector<StateId> trie_path_;
};

}  // namespace gbnf::detail
