// Dead-state pruning: a state is live when some path from it reaches a final state of its rule,
// crossing byte edges, token edges and calls of productive rules (a rule is productive when its
// start is live). Edges into dead states and calls of unproductive rules are removed, so every
// item the matcher keeps can still complete, and "the item set is non-empty" means "the input is
// a viable prefix".
#include <vector>

#include "automaton/assembler.h"

namespace gbnf {
namespace {

constexpr uint32_t kNoRule = UINT32_MAX;

struct ReverseEdge {
  StateId source = 0;
  uint32_t rule = kNoRule;  // a call edge needs its rule to be productive
};

// Keeps the edges `keep` accepts, compacting the CSR arrays in place (each state's slice is
// read before an earlier state's writes can reach it).
template <typename T, typename Keep>
void FilterEdges(std::vector<T>* edges, std::vector<uint32_t>* begin, Keep keep) {
  uint32_t kept = 0;
  for (size_t s = 0; s + 1 < begin->size(); ++s) {
    const uint32_t first = (*begin)[s];
    const uint32_t last = (*begin)[s + 1];
    (*begin)[s] = kept;
    for (uint32_t i = first; i < last; ++i) {
      if (keep(static_cast<StateId>(s), (*edges)[i])) (*edges)[kept++] = (*edges)[i];
    }
  }
  begin->back() = kept;
  edges->resize(kept);
}

}  // namespace

std::vector<uint8_t> AutomatonAssembler::LiveStates() const {
  size_t n = a_.num_states();
  std::vector<uint32_t> rev_begin(n + 1, 0);
  std::vector<ReverseEdge> rev;
  auto for_each_edge = [&](auto&& fn) {
    for (StateId s = 0; s < n; ++s) {
      for (const ByteEdge& e : a_.ByteEdges(s)) fn(e.target, ReverseEdge{s, kNoRule});
      for (const TokenEdge& e : a_.TokenEdges(s)) fn(e.target, ReverseEdge{s, kNoRule});
      for (const CallEdge& e : a_.CallEdges(s)) fn(e.target, ReverseEdge{s, e.rule});
    }
  };
  for_each_edge([&](StateId t, ReverseEdge) { ++rev_begin[t + 1]; });
  for (size_t i = 0; i < n; ++i) rev_begin[i + 1] += rev_begin[i];
  rev.resize(rev_begin[n]);
  std::vector<uint32_t> fill(rev_begin.begin(), rev_begin.end() - 1);
  for_each_edge([&](StateId t, ReverseEdge r) { rev[fill[t]++] = r; });

  std::vector<uint32_t> start_rule(n, kNoRule);
  for (RuleId r = 0; r < a_.rule_start_.size(); ++r) start_rule[a_.rule_start_[r]] = r;
  std::vector<uint8_t> live(n, 0);
  std::vector<uint8_t> productive(a_.rule_start_.size(), 0);
  std::vector<std::vector<StateId>> pending(a_.rule_start_.size());
  std::vector<StateId> work;
  auto mark = [&](StateId s) {
    if (!live[s]) {
      live[s] = 1;
      work.push_back(s);
    }
  };
  for (StateId s = 0; s < n; ++s) {
    if (a_.final_[s]) mark(s);
  }
  while (!work.empty()) {
    StateId t = work.back();
    work.pop_back();
    if (start_rule[t] != kNoRule) {
      RuleId r = start_rule[t];
      productive[r] = 1;
      for (StateId s : pending[r]) mark(s);
      std::vector<StateId>().swap(pending[r]);
    }
    for (uint32_t i = rev_begin[t]; i < rev_begin[t + 1]; ++i) {
      const ReverseEdge& e = rev[i];
      if (e.rule == kNoRule || productive[e.rule]) {
        mark(e.source);
      } else {
        pending[e.rule].push_back(e.source);
      }
    }
  }
  return live;
}

void AutomatonAssembler::PruneDeadStates() {
  std::vector<uint8_t> live = LiveStates();
  FilterEdges(&a_.bytes_, &a_.byte_begin_,
              [&](StateId s, const ByteEdge& e) { return live[s] && live[e.target]; });
  FilterEdges(&a_.tokens_, &a_.token_begin_,
              [&](StateId s, const TokenEdge& e) { return live[s] && live[e.target]; });
  FilterEdges(&a_.calls_, &a_.call_begin_, [&](StateId s, const CallEdge& e) {
    return live[s] && live[e.target] && live[a_.rule_start_[e.rule]];
  });
}

}  // namespace gbnf
