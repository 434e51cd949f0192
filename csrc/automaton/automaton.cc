// Automaton::Build: Thompson NFA (nfa_builder.cc) -> epsilon-free per-rule FSMs in flat arrays,
// plus the nullable-rule analysis the matcher needs for empty completions.
#include "gbnf_sampler/automaton.h"

#include <algorithm>
#include <string>
#include <utility>

#include "automaton/assembler.h"

namespace gbnf {


void AutomatonAssembler::Run() {
  IndexNfa();
  NumberStates();
  // Sized once: growing by doubling copied the arrays and touched fresh pages at every step.
  // The NFA's edge count bounds the byte edges of most grammars.
  for (auto* begin : {&a_.byte_begin_, &a_.call_begin_, &a_.token_begin_}) {
    begin->reserve(important_.size() + 1);
  }
  a_.final_.reserve(important_.size());
  a_.bytes_.reserve(nfa_.edges.size());
  a_.byte_begin_.push_back(0);
  a_.call_begin_.push_back(0);
  a_.token_begin_.push_back(0);
  for (StateId s : important_) EmitState(s);
  CheckSize();
  a_.rule_start_.reserve(nfa_.rule_start.size());
  for (StateId s : nfa_.rule_start) a_.rule_start_.push_back(new_id_[s]);
  if (nfa_.chains.size() > 1) {
    a_.chains_ = nfa_.chains;
    a_.state_chain_.reserve(important_.size());
    for (StateId s : important_) a_.state_chain_.push_back(nfa_.state_chain[s]);
  }
  PruneDeadStates();
  SetFinalKinds();
  ComputeNullable();
}

void AutomatonAssembler::IndexNfa() {
  out_begin_.assign(nfa_.num_states + 1, 0);
  for (const detail::NfaEdge& e : nfa_.edges) ++out_begin_[e.from + 1];
  for (size_t i = 0; i < nfa_.num_states; ++i) out_begin_[i + 1] += out_begin_[i];
  out_edges_.resize(nfa_.edges.size());
  std::vector<uint32_t> fill(out_begin_.begin(), out_begin_.end() - 1);
  for (uint32_t i = 0; i < nfa_.edges.size(); ++i) out_edges_[fill[nfa_.edges[i].from]++] = i;
  nfa_final_.assign(nfa_.num_states, 0);
  for (StateId s : nfa_.rule_final) nfa_final_[s] = 1;
}

// Only rule starts and targets of consuming edges (byte, call, token) survive elimination; they
// keep their relative order, so each rule's states stay contiguous.
void AutomatonAssembler::NumberStates() {
  std::vector<uint8_t> keep(nfa_.num_states, 0);
  for (StateId s : nfa_.rule_start) keep[s] = 1;
  for (const detail::NfaEdge& e : nfa_.edges) {
    if (e.kind != detail::NfaEdgeKind::kEpsilon) keep[e.target] = 1;
  }
  new_id_.assign(nfa_.num_states, kNone);
  for (StateId s = 0; s < nfa_.num_states; ++s) {
    if (!keep[s]) continue;
    new_id_[s] = static_cast<StateId>(important_.size());
    important_.push_back(s);
  }
  stamp_.assign(nfa_.num_states, 0);
}

// The new state's edges are the consuming edges of every NFA state in its epsilon closure.
void AutomatonAssembler::EmitState(StateId nfa_state) {
  ++epoch_;
  final_ = false;
  size_t byte_first = a_.bytes_.size();
  stack_.assign(1, nfa_state);
  stamp_[nfa_state] = epoch_;
  while (!stack_.empty()) {
    StateId s = stack_.back();
    stack_.pop_back();
    if (nfa_final_[s]) final_ = true;
    for (uint32_t k = out_begin_[s]; k < out_begin_[s + 1]; ++k) {
      const detail::NfaEdge& e = nfa_.edges[out_edges_[k]];
      switch (e.kind) {
        case detail::NfaEdgeKind::kEpsilon:
          if (stamp_[e.target] != epoch_) {
            stamp_[e.target] = epoch_;
            stack_.push_back(e.target);
          }
          break;
        case detail::NfaEdgeKind::kByte:
          a_.bytes_.push_back({e.lo, e.hi, new_id_[e.target]});
          break;
        case detail::NfaEdgeKind::kCall:
          a_.calls_.push_back({e.label, new_id_[e.target]});
          break;
        case detail::NfaEdgeKind::kToken:
          a_.tokens_.push_back({e.label, new_id_[e.target]});
          break;
      }
    }
  }
  FinishState(byte_first);
}

// Sorts the state's byte edges by range start (merging adjacent ranges to one target) and
// records the CSR boundaries.
void AutomatonAssembler::FinishState(size_t byte_first) {
  auto first = a_.bytes_.begin() + static_cast<std::ptrdiff_t>(byte_first);
  std::sort(first, a_.bytes_.end(), [](const ByteEdge& x, const ByteEdge& y) {
    return std::tie(x.target, x.lo) < std::tie(y.target, y.lo);
  });
  size_t w = byte_first;
  for (size_t r = byte_first; r < a_.bytes_.size(); ++r) {
    ByteEdge e = a_.bytes_[r];
    if (w > byte_first && a_.bytes_[w - 1].target == e.target &&
        int{e.lo} <= int{a_.bytes_[w - 1].hi} + 1) {
      a_.bytes_[w - 1].hi = std::max(a_.bytes_[w - 1].hi, e.hi);
    } else {
      a_.bytes_[w++] = e;
    }
  }
  a_.bytes_.resize(w);
  std::sort(a_.bytes_.begin() + static_cast<std::ptrdiff_t>(byte_first), a_.bytes_.end(),
            [](const ByteEdge& x, const ByteEdge& y) { return x.lo < y.lo; });
  size_t call_first = a_.call_begin_.back();
  std::sort(a_.calls_.begin() + call_first, a_.calls_.end(), [](const CallEdge& x, const CallEdge& y) {
    return std::tie(x.rule, x.target) < std::tie(y.rule, y.target);
  });
  a_.calls_.erase(std::unique(a_.calls_.begin() + call_first, a_.calls_.end(),
                              [](const CallEdge& x, const CallEdge& y) {
                                return x.rule == y.rule && x.target == y.target;
                              }),
                  a_.calls_.end());
  a_.byte_begin_.push_back(static_cast<uint32_t>(a_.bytes_.size()));
  a_.call_begin_.push_back(static_cast<uint32_t>(a_.calls_.size()));
  a_.token_begin_.push_back(static_cast<uint32_t>(a_.tokens_.size()));
  a_.final_.push_back(final_ ? 1 : 0);
  CheckSize();
}

// Final states without any outgoing edge are "pure": reaching one completes the rule, nothing else.
void AutomatonAssembler::SetFinalKinds() {
  for (StateId s = 0; s < a_.num_states(); ++s) {
    bool no_edges = a_.ByteEdges(s).empty() && a_.CallEdges(s).empty() && a_.TokenEdges(s).empty();
    if (a_.final_[s] != 0) a_.final_[s] = no_edges ? 2 : 1;
  }
}

void AutomatonAssembler::CheckSize() const {
  if (a_.num_states() + a_.num_edges() > limits_.max_automaton_size) {
    throw LimitError("max_automaton_size",
                     "grammar automaton exceeds max_automaton_size (" +
                         std::to_string(limits_.max_automaton_size) +
                         " states and edges); reduce repetition bounds or nesting");
  }
}

// A rule is nullable when its start reaches a final state through calls of nullable rules only.
// Worklist: a rule is re-examined whenever one of its callees becomes nullable.
void AutomatonAssembler::ComputeNullable() {
  size_t n = a_.rule_start_.size();
  a_.rule_nullable_.assign(n, 0);
  // Each rule's states are contiguous, starting at its start state (rules are not in id order).
  std::vector<std::pair<StateId, RuleId>> starts;
  starts.reserve(n);
  for (RuleId r = 0; r < n; ++r) starts.emplace_back(a_.rule_start_[r], r);
  std::sort(starts.begin(), starts.end());
  std::vector<std::vector<RuleId>> callers(n);
  for (size_t i = 0; i < n; ++i) {
    const auto [lo, r] = starts[i];
    const StateId hi = i + 1 < n ? starts[i + 1].first : static_cast<StateId>(a_.num_states());
    for (StateId s = lo; s < hi; ++s) {
      for (const CallEdge& c : a_.CallEdges(s)) callers[c.rule].push_back(r);
    }
  }
  std::vector<RuleId> work;
  for (RuleId r = static_cast<RuleId>(n); r-- > 0;) work.push_back(r);
  std::vector<uint32_t> stack;
  std::fill(stamp_.begin(), stamp_.end(), 0);
  stamp_.resize(std::max(stamp_.size(), a_.num_states()), 0);
  epoch_ = 0;
  while (!work.empty()) {
    RuleId r = work.back();
    work.pop_back();
    if (a_.rule_nullable_[r] || !ReachesFinalViaNullable(r, &stack)) continue;
    a_.rule_nullable_[r] = 1;
    for (RuleId c : callers[r]) {
      if (!a_.rule_nullable_[c]) work.push_back(c);
    }
  }
}

bool AutomatonAssembler::ReachesFinalViaNullable(RuleId r, std::vector<uint32_t>* stack) {
  ++epoch_;
  stack->assign(1, a_.rule_start_[r]);
  stamp_[a_.rule_start_[r]] = epoch_;
  while (!stack->empty()) {
    StateId s = stack->back();
    stack->pop_back();
    if (a_.IsFinal(s)) return true;
    for (const CallEdge& c : a_.CallEdges(s)) {
      if (a_.rule_nullable_[c.rule] && stamp_[c.target] != epoch_) {
        stamp_[c.target] = epoch_;
        stack->push_back(c.target);
      }
    }
  }
  return false;
}

std::shared_ptr<const Automaton> Automaton::Build(std::shared_ptr<const Grammar> grammar,
                                                  const AutomatonLimits& limits) {
  auto automaton = std::make_shared<Automaton>();
  detail::Nfa nfa = detail::BuildNfa(*grammar, limits);
  AutomatonAssembler(nfa, limits, automaton.get()).Run();
  automaton->grammar_ = std::move(grammar);
  automaton->root_ = automaton->grammar_->root();
  return automaton;
}

}  // namespace gbnf
