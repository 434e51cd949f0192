// Automaton: per rule, on first reach, Thompson NFA (nfa_builder.cc) -> epsilon-free FSM in flat
// arrays (here) -> dead states pruned (liveness.cc) -> numbered and published. The analyses that
// need every rule (productive and nullable rules, inlining) run on the grammar, up front
// (rule_facts.cc).
#include "gbnf_sampler/automaton.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "automaton/assembler.h"
#include "grammar/rule_facts.h"

namespace gbnf {


void AutomatonAssembler::Run(const std::vector<uint32_t>& recursion, RuleId rule) {
  IndexNfa();
  NumberStates();
  // Sized once: growing by doubling copied the arrays and touched fresh pages at every step.
  // The NFA's edge count bounds the byte edges of most rules.
  for (auto* begin : {&a_.byte_begin, &a_.call_begin, &a_.token_begin}) {
    begin->reserve(important_.size() + 1);
    begin->push_back(0);
  }
  a_.final.reserve(important_.size());
  a_.bytes.reserve(nfa_.num_edges());
  EmitStates();
  CheckSize();
  if (nfa_.chains.size() > 1) {
    a_.chains = nfa_.chains;
    a_.chain.reserve(important_.size());
    for (StateId s : important_) a_.chain.push_back(nfa_.state_chain[s]);
  }
  PruneDeadStates();
  SetFinalKinds();
  FindPeriodTwins(recursion, rule);
}

void AutomatonAssembler::IndexNfa() {
  out_begin_.assign(nfa_.num_states + 1, 0);
  for (const detail::NfaEdge& e : nfa_.edges) ++out_begin_[e.from + 1];
  for (size_t i = 0; i < nfa_.num_states; ++i) out_begin_[i + 1] += out_begin_[i];
  out_edges_.resize(nfa_.edges.size());
  std::vector<uint32_t> fill(out_begin_.begin(), out_begin_.end() - 1);
  for (uint32_t i = 0; i < nfa_.edges.size(); ++i) out_edges_[fill[nfa_.edges[i].from]++] = i;
  replica_begin_.resize(nfa_.replicas.size());
  replica_edges_.resize(nfa_.replicas.size());
  for (size_t r = 0; r < nfa_.replicas.size(); ++r) {
    const detail::NfaReplica& rep = nfa_.replicas[r];
    std::vector<uint32_t>& begin = replica_begin_[r];
    begin.assign(rep.touched_hi - rep.touched_lo + 1, 0);
    for (uint32_t e = rep.edge_lo; e < rep.edge_hi; ++e) {
      ++begin[nfa_.edges[e].from - rep.touched_lo + 1];
    }
    for (size_t i = 0; i + 1 < begin.size(); ++i) begin[i + 1] += begin[i];
    replica_edges_[r].resize(rep.edge_hi - rep.edge_lo);
    std::vector<uint32_t> at(begin.begin(), begin.end() - 1);
    for (uint32_t e = rep.edge_lo; e < rep.edge_hi; ++e) {
      replica_edges_[r][at[nfa_.edges[e].from - rep.touched_lo]++] = e;
    }
  }
  nfa_final_.assign(nfa_.num_states, 0);
  nfa_final_[nfa_.final] = 1;
}

// Only the start and targets of consuming edges (byte, call, token) survive elimination; they
// keep their relative order, so the start stays state 0.
void AutomatonAssembler::NumberStates() {
  std::vector<uint8_t> keep(nfa_.num_states, 0);
  keep[nfa_.start] = 1;
  for (const detail::NfaEdge& e : nfa_.edges) {
    if (e.kind != detail::NfaEdgeKind::kEpsilon) keep[e.target] = 1;
  }
  // A replica's targets: the template's that stay put, once; the ones that move, as a pattern
  // over the states they move in, laid down once per replica.
  for (const detail::NfaReplica& rep : nfa_.replicas) {
    std::vector<uint8_t> moved(rep.touched_hi - rep.touched_lo, 0);
    for (uint32_t k = rep.edge_lo; k < rep.edge_hi; ++k) {
      const detail::NfaEdge& e = nfa_.edges[k];
      if (e.kind == detail::NfaEdgeKind::kEpsilon) continue;
      if (e.target >= rep.touched_lo && e.target < rep.touched_hi) {
        moved[e.target - rep.touched_lo] = 1;
      } else {
        keep[e.target] = 1;
      }
    }
    for (uint32_t i = 1; i <= rep.count; ++i) {
      uint8_t* at = keep.data() + rep.touched_lo + i * rep.per_copy;
      for (size_t x = 0; x < moved.size(); ++x) at[x] |= moved[x];
    }
  }
  new_id_.assign(nfa_.num_states, kNone);
  for (StateId s = 0; s < nfa_.num_states; ++s) {
    if (!keep[s]) continue;
    new_id_[s] = static_cast<StateId>(important_.size());
    important_.push_back(s);
  }
  stamp_.assign(nfa_.num_states, 0);
}

// States in order; the copies of a shifted repetition past its second take the edges of the
// state one copy earlier, shifted (shifted_copies.cc says how far that holds), instead of a
// closure each.
void AutomatonAssembler::EmitStates() {
  plans_ = PlanCopies();
  const auto fsm_state = [&](StateId nfa_state) {
    return static_cast<StateId>(
        std::lower_bound(important_.begin(), important_.end(), nfa_state) - important_.begin());
  };
  StateId f = 0;
  for (CopyPlan& plan : plans_) {
    const StateId copy1 = fsm_state(plan.lo + plan.per_copy);
    const StateId copy2 = copy1 + plan.fsm_per_copy;
    for (; f < copy1; ++f) EmitState<false>(important_[f]);
    watch_ = &plan;
    for (; f < copy2; ++f) EmitState<true>(important_[f]);
    watch_ = nullptr;
    const StateId end = fsm_state(plan.lo + plan.copies * plan.per_copy);
    for (uint32_t copy = 2; copy <= plan.LastShifted(); ++copy) {
      for (StateId k = 0; k < plan.fsm_per_copy; ++k, ++f) {
        EmitShifted(f - plan.fsm_per_copy, copy1, end, plan.fsm_per_copy);
      }
      a_.shifted_states += plan.fsm_per_copy;
    }
  }
  for (; f < important_.size(); ++f) EmitState<false>(important_[f]);
}

// The new state's edges are the consuming edges of every NFA state in its epsilon closure.
template <bool kWatch>
void AutomatonAssembler::EmitState(StateId nfa_state) {
  ++epoch_;
  final_ = false;
  size_t byte_first = a_.bytes.size();
  stack_.assign(1, nfa_state);
  stamp_[nfa_state] = epoch_;
  if (kWatch) watch_->Note(nfa_state, nfa_state, false);
  while (!stack_.empty()) {
    StateId s = stack_.back();
    stack_.pop_back();
    if (nfa_final_[s]) final_ = true;
    ForEachOut(s, [&](const detail::NfaEdge& e) {
      if (kWatch) watch_->Note(s, e.target, e.kind != detail::NfaEdgeKind::kEpsilon);
      switch (e.kind) {
        case detail::NfaEdgeKind::kEpsilon:
          if (stamp_[e.target] != epoch_) {
            stamp_[e.target] = epoch_;
            stack_.push_back(e.target);
          }
          break;
        case detail::NfaEdgeKind::kByte:
          a_.bytes.push_back({e.lo, e.hi, new_id_[e.target]});
          break;
        case detail::NfaEdgeKind::kCall:
          a_.calls.push_back({e.label, new_id_[e.target]});
          break;
        case detail::NfaEdgeKind::kToken:
          a_.tokens.push_back({e.label, new_id_[e.target]});
          break;
      }
    });
  }
  FinishState(byte_first);
}

void AutomatonAssembler::EmitShifted(StateId from, StateId lo, StateId hi, StateId shift) {
  const auto moved = [&](StateId t) { return t >= lo && t < hi ? t + shift : t; };
  for (uint32_t k = a_.byte_begin[from]; k < a_.byte_begin[from + 1]; ++k) {
    ByteEdge e = a_.bytes[k];
    e.target = moved(e.target);
    a_.bytes.push_back(e);
  }
  for (uint32_t k = a_.call_begin[from]; k < a_.call_begin[from + 1]; ++k) {
    CallEdge e = a_.calls[k];
    e.target = moved(e.target);
    a_.calls.push_back(e);
  }
  for (uint32_t k = a_.token_begin[from]; k < a_.token_begin[from + 1]; ++k) {
    TokenEdge e = a_.tokens[k];
    e.target = moved(e.target);
    a_.tokens.push_back(e);
  }
  a_.byte_begin.push_back(static_cast<uint32_t>(a_.bytes.size()));
  a_.call_begin.push_back(static_cast<uint32_t>(a_.calls.size()));
  a_.token_begin.push_back(static_cast<uint32_t>(a_.tokens.size()));
  a_.final.push_back(a_.final[from]);
  CheckSize();
}

// Sorts the state's byte edges by range start (merging adjacent ranges to one target) and
// records the CSR boundaries.
void AutomatonAssembler::FinishState(size_t byte_first) {
  auto first = a_.bytes.begin() + static_cast<std::ptrdiff_t>(byte_first);
  std::sort(first, a_.bytes.end(), [](const ByteEdge& x, const ByteEdge& y) {
    return std::tie(x.target, x.lo) < std::tie(y.target, y.lo);
  });
  size_t w = byte_first;
  for (size_t r = byte_first; r < a_.bytes.size(); ++r) {
    ByteEdge e = a_.bytes[r];
    if (w > byte_first && a_.bytes[w - 1].target == e.target &&
        int{e.lo} <= int{a_.bytes[w - 1].hi} + 1) {
      a_.bytes[w - 1].hi = std::max(a_.bytes[w - 1].hi, e.hi);
    } else {
      a_.bytes[w++] = e;
    }
  }
  a_.bytes.resize(w);
  std::sort(a_.bytes.begin() + static_cast<std::ptrdiff_t>(byte_first), a_.bytes.end(),
            [](const ByteEdge& x, const ByteEdge& y) { return x.lo < y.lo; });
  size_t call_first = a_.call_begin.back();
  std::sort(a_.calls.begin() + call_first, a_.calls.end(),
            [](const CallEdge& x, const CallEdge& y) {
              return std::tie(x.rule, x.target) < std::tie(y.rule, y.target);
            });
  a_.calls.erase(std::unique(a_.calls.begin() + call_first, a_.calls.end(),
                             [](const CallEdge& x, const CallEdge& y) {
                               return x.rule == y.rule && x.target == y.target;
                             }),
                 a_.calls.end());
  a_.byte_begin.push_back(static_cast<uint32_t>(a_.bytes.size()));
  a_.call_begin.push_back(static_cast<uint32_t>(a_.calls.size()));
  a_.token_begin.push_back(static_cast<uint32_t>(a_.tokens.size()));
  a_.final.push_back(final_ ? 1 : 0);
  CheckSize();
}

// Final states without any outgoing edge are "pure": reaching one completes the rule, nothing else.
void AutomatonAssembler::SetFinalKinds() {
  for (StateId s = 0; s < a_.num_states(); ++s) {
    const bool no_edges = a_.byte_begin[s] == a_.byte_begin[s + 1] &&
                          a_.call_begin[s] == a_.call_begin[s + 1] &&
                          a_.token_begin[s] == a_.token_begin[s + 1];
    if (a_.final[s] != 0) a_.final[s] = no_edges ? 2 : 1;
  }
}

void AutomatonAssembler::CheckSize() const {
  if (a_.num_states() + a_.num_edges() > budget_) ThrowTooLarge(limits_);
}


[[noreturn]] void ThrowTooLarge(const AutomatonLimits& limits) {
  throw LimitError("max_automaton_size",
                   "grammar automaton exceeds max_automaton_size (" +
                       std::to_string(limits.max_automaton_size) +
                       " states and edges); reduce repetition bounds or nesting");
}

// Rules are built on first reach, so a rule too deep or too large would otherwise be refused by
// the step that reaches it, in the middle of a generation. The ones whose build is certain to
// fail are refused here, up front: a body nested past the limit, or a lower bound on the rule's
// NFA past the size limit by more than the builder's check interval. Returns the reachable
// rules whose bound is within kEagerShare of the limit: whether they fit is known only once
// built (epsilon elimination grows a rule), so they are built up front too.
namespace {

constexpr uint64_t kEagerShare = 8;

std::vector<RuleId> RefuseRulesThatCannotBuild(const Grammar& g, const detail::RuleFacts& facts,
                                               const AutomatonLimits& limits) {
  std::vector<RuleId> large;
  const uint64_t size_limit =
      uint64_t{limits.max_automaton_size} + 2 * uint64_t{detail::kSizeCheckInterval};
  for (RuleId r = 0; r < g.rules().size(); ++r) {
    if (!facts.reachable[r]) continue;
    if (facts.depth[r] > limits.max_nesting_depth) {
      throw LimitError("max_nesting_depth",
                       "rule '" + g.rule(r).name + "' nests deeper than max_nesting_depth (" +
                           std::to_string(limits.max_nesting_depth) +
                           "); split it into smaller rules");
    }
    if (facts.min_size[r] > size_limit) {
      throw LimitError("max_automaton_size",
                       "rule '" + g.rule(r).name + "' expands to at least " +
                           std::to_string(facts.min_size[r]) +
                           " automaton states and edges, over max_automaton_size (" +
                           std::to_string(limits.max_automaton_size) +
                           "); reduce its repetition bounds or nesting");
    }
    if (facts.min_size[r] >= limits.max_automaton_size / kEagerShare) large.push_back(r);
  }
  return large;
}

}  // namespace

struct Automaton::RuleBlock {
  AssembledRule fsm;  // edges and chains (the rest is in the state records)
  size_t num_states = 0;
};

Automaton::Automaton(std::shared_ptr<const Grammar> grammar, const AutomatonLimits& limits,
                     RuleId root)
    : grammar_(std::move(grammar)), limits_(limits) {
  const Grammar& g = *grammar_;
  root_ = root;
  num_rules_ = g.rules().size();
  plan_ = std::make_unique<detail::RulePlan>();
  detail::RuleFacts facts = detail::AutomatonRuleFacts(g, limits.max_nesting_depth);
  large_rules_ = RefuseRulesThatCannotBuild(g, facts, limits);
  plan_->inlinable = std::move(facts.inlinable);
  plan_->depth = std::move(facts.depth);
  plan_->recursion = std::move(facts.recursion);
  rule_productive_ = std::move(facts.productive);
  rule_nullable_ = std::move(facts.nullable);
  start_ = std::make_unique<std::atomic<StateId>[]>(num_rules_);
  for (size_t r = 0; r < num_rules_; ++r) start_[r].store(kUnbuilt, std::memory_order_relaxed);
  built_once_ = std::make_unique<std::once_flag[]>(num_rules_);
  block_of_rule_.assign(num_rules_, 0);
}

Automaton::~Automaton() = default;

StateId Automaton::BuildRule(RuleId r) const {
  std::call_once(built_once_[r], [&] { BuildRuleOnce(r); });
  return start_[r].load(std::memory_order_acquire);
}

// Builds the rule's FSM without a lock (other rules may be built at the same time), then numbers
// its states after every state published so far and publishes them: records first, then the
// start (release), so a reader that sees the start sees the records.
void Automaton::BuildRuleOnce(RuleId r) const {
  const size_t used = num_states() + num_edges();
  const size_t budget = limits_.max_automaton_size > used ? limits_.max_automaton_size - used : 0;
  detail::Nfa nfa = detail::BuildRuleNfa(*grammar_, limits_, *plan_, r, budget);
  auto block = std::make_unique<RuleBlock>();
  AssembledRule& fsm = block->fsm;
  AutomatonAssembler(nfa, rule_productive_, limits_, budget, &fsm)
      .Run(plan_->recursion, r);
  const size_t n = fsm.num_states();
  block->num_states = n;

  std::lock_guard<std::mutex> lock(publish_mutex_);
  const size_t base = num_states_.load(std::memory_order_relaxed);
  const size_t edges = num_edges_.load(std::memory_order_relaxed);
  if (base + edges + n + fsm.num_edges() > limits_.max_automaton_size ||
      base + n >= kUnbuilt) {
    ThrowTooLarge(limits_);
  }
  const auto offset = static_cast<StateId>(base);
  for (ByteEdge& e : fsm.bytes) e.target += offset;
  for (CallEdge& e : fsm.calls) e.target += offset;
  for (TokenEdge& e : fsm.tokens) e.target += offset;
  if (base + n > records_capacity_) {
    const size_t capacity = std::max({size_t{256}, 2 * records_capacity_, base + n});
    auto grown = std::make_unique<StateRecord[]>(capacity);
    if (base > 0) std::copy_n(record_arrays_.back().get(), base, grown.get());
    record_arrays_.push_back(std::move(grown));
    records_capacity_ = capacity;
  }
  StateRecord* records = record_arrays_.back().get();
  for (size_t i = 0; i < n; ++i) {
    StateRecord& rec = records[base + i];
    rec.bytes = fsm.bytes.data() + fsm.byte_begin[i];
    rec.num_bytes = fsm.byte_begin[i + 1] - fsm.byte_begin[i];
    rec.calls = fsm.calls.data() + fsm.call_begin[i];
    rec.num_calls = fsm.call_begin[i + 1] - fsm.call_begin[i];
    rec.tokens = fsm.tokens.data() + fsm.token_begin[i];
    rec.num_tokens = fsm.token_begin[i + 1] - fsm.token_begin[i];
    rec.rule = r;
    rec.final = fsm.final[i];
    if (!fsm.twin_period.empty()) {
      rec.twin_period = fsm.twin_period[i];
      rec.twin_agree = fsm.twin_agree[i];
    }
  }
  // The CSR boundaries live on in the records; the edges and the chains stay.
  std::vector<uint32_t>().swap(fsm.byte_begin);
  std::vector<uint32_t>().swap(fsm.call_begin);
  std::vector<uint32_t>().swap(fsm.token_begin);
  std::vector<uint8_t>().swap(fsm.final);
  std::vector<uint32_t>().swap(fsm.twin_period);
  std::vector<uint32_t>().swap(fsm.twin_agree);
  block_of_rule_[r] = static_cast<uint32_t>(blocks_.size());
  num_edges_.store(edges + fsm.num_edges(), std::memory_order_release);
  blocks_.push_back(std::move(block));
  records_.store(records, std::memory_order_release);
  num_states_.store(base + n, std::memory_order_release);
  start_[r].store(offset, std::memory_order_release);
}

const std::vector<RuleId>& Automaton::BuildAll() const {
  std::call_once(all_once_, [&] {
    std::vector<uint8_t> seen(num_rules_, 0);
    std::vector<RuleId> work{root_};
    seen[root_] = 1;
    std::vector<RuleId> rules;
    while (!work.empty()) {
      const RuleId r = work.back();
      work.pop_back();
      rules.push_back(r);
      const StateId start = RuleStart(r);
      const size_t end = start + RuleStates(r);
      for (StateId s = start; s < end; ++s) {
        for (const CallEdge& c : CallEdges(s)) {
          if (!seen[c.rule]) {
            seen[c.rule] = 1;
            work.push_back(c.rule);
          }
        }
      }
    }
    std::sort(rules.begin(), rules.end());
    all_rules_ = std::move(rules);
  });
  return all_rules_;
}

size_t Automaton::RuleStates(RuleId r) const {
  RuleStart(r);
  std::lock_guard<std::mutex> lock(publish_mutex_);
  return blocks_[block_of_rule_[r]]->num_states;
}

const std::vector<RuleId>& Automaton::InlinedRules(StateId s) const {
  static const std::vector<RuleId> kNone;
  const RuleId r = Record(s).rule;
  const StateId start = RuleStart(r);
  std::lock_guard<std::mutex> lock(publish_mutex_);
  const AssembledRule& fsm = blocks_[block_of_rule_[r]]->fsm;
  return fsm.chain.empty() ? kNone : fsm.chains[fsm.chain[s - start]];
}

std::shared_ptr<const Automaton> Automaton::Build(std::shared_ptr<const Grammar> grammar,
                                                  const AutomatonLimits& limits) {
  const RuleId root = grammar->root();
  return Build(std::move(grammar), limits, root);
}

std::shared_ptr<const Automaton> Automaton::Build(std::shared_ptr<const Grammar> grammar,
                                                  const AutomatonLimits& limits, RuleId root) {
  if (root >= grammar->rules().size()) throw std::out_of_range("Automaton::Build: no such rule");
  std::shared_ptr<Automaton> automaton(new Automaton(std::move(grammar), limits, root));
  automaton->RuleStart(automaton->root_);
  for (RuleId r : automaton->large_rules_) automaton->BuildLargeRule(r);
  return automaton;
}

void Automaton::BuildLargeRule(RuleId r) const {
  try {
    RuleStart(r);
  } catch (const LimitError& e) {
    if (e.limit_name() != "max_automaton_size") throw;
    throw LimitError(e.limit_name(),
                     "rule '" + grammar_->rule(r).name + "' passes max_automaton_size (" +
                         std::to_string(limits_.max_automaton_size) +
                         " states and edges) once built; reduce its repetition bounds or "
                         "nesting");
  }
}

}  // namespace gbnf
