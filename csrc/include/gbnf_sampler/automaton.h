// The byte-level pushdown automaton: every rule of a Grammar compiled into a small epsilon-free
// FSM whose edges are byte ranges, rule calls and token references. Immutable once built and
// shared (std::shared_ptr<const Automaton>) by every Matcher of the grammar. Only the root and
// the rules reached by call edges get their FSM; a rule only ever expanded in place (inlined) or
// never used has a start state that matches nothing.
//
// Lazy: the root's FSM is built with the automaton, every other rule's on first reach
// (RuleStart), so the first steps of a large grammar never wait for the whole of it.
//
// Layout: states are numbered 0..num_states()-1 across the rules built so far, in build order;
// each rule's states are contiguous from its start state. Each state's outgoing edges of each
// kind are a contiguous slice of its rule's edge arrays: ByteEdges(s), CallEdges(s),
// TokenEdges(s). A state is final when its rule may complete there. Readers take no lock: a
// state id is only handed out (by RuleStart, or an edge) after its record is written.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf {
namespace detail {
struct RulePlan;
}  // namespace detail

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
  // Compiles `grammar`'s root rule now and every other rule when it is first reached (RuleStart):
  // a large grammar costs, up front, only the rules its first steps need. Throws LimitError when
  // a limit is reached: here for the root and for every rule the root reaches whose build is
  // sure to fail (nested too deep, or a lower bound of its size past the limit); otherwise, by
  // a later rule, from the RuleStart that builds it.
  static std::shared_ptr<const Automaton> Build(std::shared_ptr<const Grammar> grammar,
                                                const AutomatonLimits& limits = {});
  // The same with `root` as the start rule instead of the grammar's own (the doctor measures a
  // rule's sentences so, without a grammar of its own). The rules refused up front are still
  // the ones the grammar's root reaches; a rule only `root` reaches is refused when first built.
  static std::shared_ptr<const Automaton> Build(std::shared_ptr<const Grammar> grammar,
                                                const AutomatonLimits& limits, RuleId root);
  ~Automaton();
  Automaton(const Automaton&) = delete;
  Automaton& operator=(const Automaton&) = delete;

  const Grammar& grammar() const { return *grammar_; }
  // States and edges of the rules built so far.
  size_t num_states() const { return num_states_.load(std::memory_order_acquire); }
  size_t num_edges() const { return num_edges_.load(std::memory_order_acquire); }
  size_t num_rules() const { return num_rules_; }
  RuleId root() const { return root_; }

  // The rule's start state, its FSM built first if needed (thread-safe; may throw LimitError).
  StateId RuleStart(RuleId r) const {
    const StateId s = start_[r].load(std::memory_order_acquire);
    return s != kUnbuilt ? s : BuildRule(r);
  }
  bool RuleBuilt(RuleId r) const { return start_[r].load(std::memory_order_acquire) != kUnbuilt; }
  bool RuleNullable(RuleId r) const { return rule_nullable_[r] != 0; }
  // Builds the root and every rule it reaches through call edges, and returns those rules in id
  // order: the whole automaton, for passes that need all of it (precompute order, cache files).
  const std::vector<RuleId>& BuildAll() const;
  // The number of states of the rule's FSM (built first if needed).
  size_t RuleStates(RuleId r) const;

  bool IsFinal(StateId s) const { return Record(s).final != 0; }
  // Final with no outgoing edge: reaching it means the rule is complete and nothing else.
  bool IsPureFinal(StateId s) const { return Record(s).final == 2; }
  // The rule whose FSM holds state s.
  RuleId RuleOf(StateId s) const { return Record(s).rule; }

  EdgeSpan<ByteEdge> ByteEdges(StateId s) const {
    const StateRecord& r = Record(s);
    return {r.bytes, r.bytes + r.num_bytes};
  }
  EdgeSpan<CallEdge> CallEdges(StateId s) const {
    const StateRecord& r = Record(s);
    return {r.calls, r.calls + r.num_calls};
  }
  EdgeSpan<TokenEdge> TokenEdges(StateId s) const {
    const StateRecord& r = Record(s);
    return {r.tokens, r.tokens + r.num_tokens};
  }
  // The state whose mask `s` may take: `s` stepped down the copies of a repetition while each
  // step's two states agree within `radius` bytes (equal state keys of that radius: the same
  // classification where it reads no further); `s` itself when it has no such twin.
  StateId TwinBelow(StateId s, uint32_t radius) const {
    for (StateId below = TwinOf(s, radius); below != s; below = TwinOf(s, radius)) s = below;
    return s;
  }
  // One step of TwinBelow: the twin one copy down, or `s`.
  StateId TwinOf(StateId s, uint32_t radius) const {
    const StateRecord& r = Record(s);
    return r.twin_period == 0 || r.twin_agree < radius ? s : s - r.twin_period;
  }
  // The rules expanded in place (inlined) around state s, outermost first: the rule stack inside
  // the state's own rule. Empty for most states. For explanations.
  const std::vector<RuleId>& InlinedRules(StateId s) const;

 private:
  struct RuleBlock;  // a built rule's edges (automaton.cc)
  // Where a state's edges are, and what it is. Written once, before the state's id is published.
  struct StateRecord {
    const ByteEdge* bytes = nullptr;
    const CallEdge* calls = nullptr;
    const TokenEdge* tokens = nullptr;
    uint32_t num_bytes = 0;
    uint32_t num_calls = 0;
    uint32_t num_tokens : 30;
    uint32_t final : 2;  // 0: not final, 1: final, 2: final without edges
    RuleId rule = 0;
    uint32_t twin_period = 0;  // states back to this state's twin in the previous copy, or 0
    uint32_t twin_agree = 0;   // bytes within which the two agree
  };
  static constexpr StateId kUnbuilt = UINT32_MAX;

  // A state's record: one acquire load and an index, as cheap as the flat arrays of an eager
  // build (the walkers' inner loops make several lookups per byte).
  const StateRecord& Record(StateId s) const { return records_.load(std::memory_order_acquire)[s]; }

  Automaton(std::shared_ptr<const Grammar> grammar, const AutomatonLimits& limits, RuleId root);
  StateId BuildRule(RuleId r) const;
  void BuildRuleOnce(RuleId r) const;
  // Builds one of large_rules_ (at Build), a size limit failure naming the rule.
  void BuildLargeRule(RuleId r) const;

  std::shared_ptr<const Grammar> grammar_;
  AutomatonLimits limits_;
  RuleId root_ = 0;
  size_t num_rules_ = 0;
  std::vector<uint8_t> rule_nullable_;
  std::vector<uint8_t> rule_productive_;
  std::unique_ptr<detail::RulePlan> plan_;
  // Reachable rules whose size bound is a large share of the limit: built up front, so that one
  // too large once built is refused by Build, not by a generation's step.
  std::vector<RuleId> large_rules_;
  std::unique_ptr<std::atomic<StateId>[]> start_;  // per rule; kUnbuilt until built
  std::unique_ptr<std::once_flag[]> built_once_;    // per rule
  // The records of every state published so far, indexed by id. When a rule does not fit, the
  // records move to an array twice as large; the old arrays stay allocated until the automaton
  // dies, since a reader may still be indexing one (it holds every id it can know of). At most
  // about twice the records' bytes in all.
  mutable std::atomic<const StateRecord*> records_{nullptr};
  mutable std::vector<std::unique_ptr<StateRecord[]>> record_arrays_;  // the last is records_
  mutable size_t records_capacity_ = 0;
  mutable std::atomic<size_t> num_states_{0};
  mutable std::atomic<size_t> num_edges_{0};
  mutable std::mutex publish_mutex_;  // numbering new states; the record arrays, the blocks
  mutable std::vector<std::unique_ptr<RuleBlock>> blocks_;
  mutable std::vector<uint32_t> block_of_rule_;  // per rule, into blocks_ (built rules only)
  mutable std::once_flag all_once_;
  mutable std::vector<RuleId> all_rules_;
};

}  // namespace gbnf
