// Dead-state pruning of one rule's FSM: a state is live when some path from it reaches a final
// state of the rule, crossing byte edges, token edges and calls of productive rules (rules that
// derive some string; Automaton computes them on the grammar). Edges into dead states and calls
// of unproductive rules are removed, so every item the matcher keeps can still complete, and
// "the item set is non-empty" means "the input is a viable prefix".
#include <algorithm>
#include <vector>

#include "automaton/assembler.h"

namespace gbnf {
namespace {

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

// Most edges lead to later states (the NFA builds forward), so sweeps from the last state to the
// first settle most rules in one sweep and see no change in the next; a rule still changing
// after kSweeps sweeps is finished by a search over its reversed edges. Each state made live has
// an edge to a live state (or is final), and a sweep that changes nothing leaves no state that
// could be added: the live set is then exactly the states that reach a final one.
std::vector<uint8_t> AutomatonAssembler::LiveStates() const {
  constexpr int kSweeps = 3;
  const size_t n = a_.num_states();
  std::vector<uint8_t> live(n, 0);
  const auto reaches_live = [&](StateId s) {
    if (a_.final[s]) return true;
    for (uint32_t i = a_.byte_begin[s]; i < a_.byte_begin[s + 1]; ++i) {
      if (live[a_.bytes[i].target]) return true;
    }
    for (uint32_t i = a_.token_begin[s]; i < a_.token_begin[s + 1]; ++i) {
      if (live[a_.tokens[i].target]) return true;
    }
    for (uint32_t i = a_.call_begin[s]; i < a_.call_begin[s + 1]; ++i) {
      if (productive_[a_.calls[i].rule] && live[a_.calls[i].target]) return true;
    }
    return false;
  };
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    bool changed = false;
    for (size_t s = n; s-- > 0;) {
      if (!live[s] && reaches_live(static_cast<StateId>(s))) {
        live[s] = 1;
        changed = true;
      }
    }
    if (!changed) return live;
  }
  FinishLiveStates(&live);
  return live;
}

// The search over reversed edges, from the states known to be live.
void AutomatonAssembler::FinishLiveStates(std::vector<uint8_t>* live_states) const {
  std::vector<uint8_t>& live = *live_states;
  const size_t n = a_.num_states();
  std::vector<uint32_t> rev_begin(n + 1, 0);
  std::vector<StateId> rev;
  auto for_each_edge = [&](auto&& fn) {
    for (StateId s = 0; s < n; ++s) {
      for (uint32_t i = a_.byte_begin[s]; i < a_.byte_begin[s + 1]; ++i) fn(a_.bytes[i].target, s);
      for (uint32_t i = a_.token_begin[s]; i < a_.token_begin[s + 1]; ++i) {
        fn(a_.tokens[i].target, s);
      }
      for (uint32_t i = a_.call_begin[s]; i < a_.call_begin[s + 1]; ++i) {
        if (productive_[a_.calls[i].rule]) fn(a_.calls[i].target, s);
      }
    }
  };
  for_each_edge([&](StateId t, StateId) { ++rev_begin[t + 1]; });
  for (size_t i = 0; i < n; ++i) rev_begin[i + 1] += rev_begin[i];
  rev.resize(rev_begin[n]);
  std::vector<uint32_t> fill(rev_begin.begin(), rev_begin.end() - 1);
  for_each_edge([&](StateId t, StateId s) { rev[fill[t]++] = s; });

  std::vector<StateId> work;
  for (StateId s = 0; s < n; ++s) {
    if (live[s]) work.push_back(s);
  }
  while (!work.empty()) {
    const StateId t = work.back();
    work.pop_back();
    for (uint32_t i = rev_begin[t]; i < rev_begin[t + 1]; ++i) {
      if (!live[rev[i]]) {
        live[rev[i]] = 1;
        work.push_back(rev[i]);
      }
    }
  }
}

void AutomatonAssembler::PruneDeadStates() {
  std::vector<uint8_t> live = LiveStates();
  if (std::find(live.begin(), live.end(), 0) != live.end()) {
    FilterEdges(&a_.bytes, &a_.byte_begin,
                [&](StateId s, const ByteEdge& e) { return live[s] && live[e.target]; });
    FilterEdges(&a_.tokens, &a_.token_begin,
                [&](StateId s, const TokenEdge& e) { return live[s] && live[e.target]; });
  }
  FilterEdges(&a_.calls, &a_.call_begin, [&](StateId s, const CallEdge& e) {
    return live[s] && live[e.target] && productive_[e.rule];
  });
}

}  // namespace gbnf
