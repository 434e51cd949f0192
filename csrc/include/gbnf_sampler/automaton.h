// The byte-level pushdown automaton: every rule of a Grammar compiled into a small epsilon-free
// FSM whose edges are byte ranges, rule calls and token references. Immutable once built and
// shared (std::shared_ptr<const Automaton>) by every Matcher of the grammar. Only the root and
// the rules reached by call edges get their FSM; a rule only ever expanded in place (inlined) or
// never used has a start state that matches nothing.
//
// Layout: states are numbered 0..num_states()-1 across all rules; each rule's states are
// contiguous from its start state (the root's first, not in rule id order). Each state's
// outgoing edges of each kind are a contiguous slice of one flat array (CSR): ByteEdges(s),
// CallEdges(s), TokenEdges(s). A state is final when its rule may complete there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf {

using StateId = uint32_t;

// Resource limits of the automaton builder. Hitting one throws LimitError naming it.
struct AutomatonLimits {
  // States plus edges of the built automaton (limit name "max_automaton_size"). x{0,1000000}
  // of a one-byte item needs about 3 million.
  size_t max_automaton_size = size_t{16} << 20;
  // AST nesting the builder follows (limit name "max_nesting_depth"); the parser's default.
  uint32_t max_nesting_depth = 1000;
};

struct ByteEdge {
  uint8_t lo = 0;  // inclusive byte range
  uint8_t hi = 0;
  StateId target = 0;
};

struct CallEdge {
  RuleId rule = 0;
  StateId target = 0;  // where the caller resumes once `rule` completes
};

// A whole vocabulary token (<[id]>, <text>, or their negation). Crossed only at token level.
struct TokenEdge {
  NodeId node = 0;  // the kTokenRef node in the grammar (id, text, negation)
  StateId target = 0;
};

// A contiguous slice of edges; avoids depending on C++20 std::span.
template <typename T>
struct EdgeSpan {
  const T* first = nullptr;
  const T* last = nullptr;
  const T* begin() const { return first; }
  const T* end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  bool empty() const { return first == last; }
};

class Automaton {
 public:
  // Compiles `grammar` (its root and the rules it calls). Throws LimitError when a limit is
  // reached.
  static std::shared_ptr<const Automaton> Build(std::shared_ptr<const Grammar> grammar,
                                                const AutomatonLimits& limits = {});

  const Grammar& grammar() const { return *grammar_; }
  size_t num_states() const { return final_.size(); }
  size_t num_edges() const { return bytes_.size() + calls_.size() + tokens_.size(); }
  size_t num_rules() const { return rule_start_.size(); }
  RuleId root() const { return root_; }

  StateId RuleStart(RuleId r) const { return rule_start_[r]; }
  bool RuleNullable(RuleId r) const { return rule_nullable_[r] != 0; }
  bool IsFinal(StateId s) const { return final_[s] != 0; }
  // Final with no outgoing edge: reaching it means the rule is complete and nothing else.
  bool IsPureFinal(StateId s) const { return final_[s] == 2; }

  EdgeSpan<ByteEdge> ByteEdges(StateId s) const { return Slice(bytes_, byte_begin_, s); }
  EdgeSpan<CallEdge> CallEdges(StateId s) const { return Slice(calls_, call_begin_, s); }
  EdgeSpan<TokenEdge> TokenEdges(StateId s) const { return Slice(tokens_, token_begin_, s); }
  // The rules expanded in place (inlined) around state s, outermost first: the rule stack inside
  // the state's own rule. Empty for most states. For explanations.
  const std::vector<RuleId>& InlinedRules(StateId s) const {
    return state_chain_.empty() ? chains_[0] : chains_[state_chain_[s]];
  }

 private:
  friend class AutomatonAssembler;
  template <typename T>
  static EdgeSpan<T> Slice(const std::vector<T>& v, const std::vector<uint32_t>& begin,
                           StateId s) {
    return {v.data() + begin[s], v.data() + begin[s + 1]};
  }

  std::shared_ptr<const Grammar> grammar_;
  RuleId root_ = 0;
  std::vector<StateId> rule_start_;
  std::vector<uint8_t> rule_nullable_;
  std::vector<uint8_t> final_;  // 0: not final, 1: final, 2: final without edges
  std::vector<uint32_t> byte_begin_, call_begin_, token_begin_;  // num_states + 1 each
  std::vector<ByteEdge> bytes_;
  std::vector<CallEdge> calls_;
  std::vector<TokenEdge> tokens_;
  std::vector<uint32_t> state_chain_;  // per state, into chains_ (empty: no rule was inlined)
  std::vector<std::vector<RuleId>> chains_{{}};
};

}  // namespace gbnf
