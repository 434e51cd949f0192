#include "mask/state_key.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

namespace gbnf::detail {
namespace {

constexpr uint32_t kUnnumbered = UINT32_MAX;
constexpr size_t kKeptStates = size_t{1} << 20;  // 4 MiB of numbers per thread at most

// Canonical numbers of states and rules during one key computation, indexed by id. Per thread
// and reused: a key touches a few hundred states of an automaton that may have hundreds of
// thousands, so the entries written are reset, not the arrays.
struct KeyNumbers {
  std::vector<uint32_t> state;
  std::vector<uint32_t> rule;
  std::vector<RuleId> rules_met;
  std::vector<uint32_t> distance;  // bytes from the key's state (kUnnumbered: not reached)
  std::vector<StateId> reached;
  std::vector<StateId> queue;  // the states numbered, in order
  std::deque<StateId> work;
  std::vector<uint32_t> code;  // the key being written (copied out at its exact size)
};

class KeyWriter {
 public:
  KeyWriter(const Automaton& a, size_t max_states, size_t max_bytes, StateKey* out)
      : a_(a),
        max_states_(max_states),
        near_(max_bytes >= kUnnumbered - 1 ? kUnnumbered - 1
                                           : static_cast<uint32_t>(max_bytes) + 1),
        out_(out),
        numbers_(ThreadNumbers()) {
    Fit(0);
    if (numbers_.rule.size() < a.num_rules()) numbers_.rule.resize(a.num_rules(), kUnnumbered);
  }
  ~KeyWriter() {
    Clear();
    // A thread keeps the arrays of ordinary automata, not those of a huge one.
    if (numbers_.state.size() > kKeptStates) {
      std::vector<uint32_t>().swap(numbers_.state);
      std::vector<uint32_t>().swap(numbers_.distance);
    }
    if (numbers_.rule.size() > kKeptStates) std::vector<uint32_t>().swap(numbers_.rule);
  }
  KeyWriter(const KeyWriter&) = delete;
  KeyWriter& operator=(const KeyWriter&) = delete;

  bool met_unbuilt_rule() const { return unbuilt_; }

  // Most keys are small and written whole in one pass (form 0); a larger one is written again,
  // cut where the longest token cannot reach (form 1).
  bool Run(StateId start) {
    if (!Write(start, kSmallKey, false)) {
      // Too large, or past a rule not built yet: the cut form reads only what tokens can reach.
      Clear();
      unbuilt_ = false;
      if (!MeasureDistances(start) || !Write(start, max_states_, true)) return false;
    }
    out_->code.assign(numbers_.code.begin(), numbers_.code.end());
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint32_t v : out_->code) h = (h ^ v) * 0x100000001B3ull;
    out_->hash = h ^ (out_->code.size() << 1);
    return true;
  }

 private:
  static constexpr size_t kSmallKey = 512;  // states a key is first tried whole with
  static constexpr uint32_t kFar = 3;       // after the final kinds 0, 1, 2

  bool Write(StateId start, size_t max_states, bool cut) {
    numbers_.code.assign(1, cut ? 1 : 0);
    Number(start);
    for (size_t i = 0; i < queue_.size(); ++i) {
      if (queue_.size() > max_states) return false;
      if (!cut || numbers_.distance[queue_[i]] <= near_) {
        if (!Emit(queue_[i])) return false;
      } else {
        numbers_.code.push_back(kFar);
      }
    }
    return true;
  }

  void Clear() {
    for (StateId s : queue_) numbers_.state[s] = kUnnumbered;
    queue_.clear();
    for (StateId s : numbers_.reached) numbers_.distance[s] = kUnnumbered;
    numbers_.reached.clear();
    for (RuleId r : numbers_.rules_met) numbers_.rule[r] = kUnnumbered;
    numbers_.rules_met.clear();
  }

  // Makes the state arrays hold `s`: the automaton grows while a key is written (a rule met for
  // the first time is built then).
  void Fit(StateId s) {
    if (s < numbers_.state.size() && numbers_.state.size() >= a_.num_states()) return;
    const size_t n = std::max<size_t>(size_t{s} + 1, a_.num_states());
    if (numbers_.state.size() < n) {
      numbers_.state.resize(n, kUnnumbered);
      numbers_.distance.resize(n, kUnnumbered);
    }
  }

  static KeyNumbers& ThreadNumbers() {
    thread_local KeyNumbers numbers;
    return numbers;
  }

  // Shortest distances in bytes from `start` (byte edges cost 1, calls and resumptions 0), up to
  // near_: a state further away is reached but not followed.
  bool MeasureDistances(StateId start) {
    std::deque<StateId>& work = numbers_.work;
    work.clear();
    auto reach = [&](StateId s, uint32_t d, bool front) {
      if (s >= numbers_.distance.size()) Fit(s);
      uint32_t& old = numbers_.distance[s];
      if (old != kUnnumbered && old <= d) return;
      if (old == kUnnumbered) numbers_.reached.push_back(s);
      old = d;
      if (front) {
        work.push_front(s);
      } else {
        work.push_back(s);
      }
    };
    reach(start, 0, true);
    while (!work.empty()) {
      if (numbers_.reached.size() > max_states_) return false;
      const StateId s = work.front();
      work.pop_front();
      const uint32_t d = numbers_.distance[s];
      if (d > near_) continue;  // far: its edges are never read
      for (const ByteEdge& e : a_.ByteEdges(s)) reach(e.target, d + 1, false);
      for (const CallEdge& c : a_.CallEdges(s)) {
        if (!a_.RuleBuilt(c.rule)) {
          unbuilt_ = true;
          return false;
        }
        reach(a_.RuleStart(c.rule), d, true);
        reach(c.target, d, true);
      }
    }
    return true;
  }

  uint32_t Number(StateId s) {
    if (s >= numbers_.state.size()) Fit(s);
    uint32_t& n = numbers_.state[s];
    if (n == kUnnumbered) {
      n = static_cast<uint32_t>(queue_.size());
      queue_.push_back(s);
    }
    return n;
  }

  // A rule's canonical number; its first mention also writes its start and nullability. False
  // when the rule is not built yet.
  bool Rule(RuleId r) {
    uint32_t& n = numbers_.rule[r];
    const bool fresh = n == kUnnumbered;
    if (fresh && !a_.RuleBuilt(r)) {
      unbuilt_ = true;
      return false;
    }
    if (fresh) {
      n = static_cast<uint32_t>(numbers_.rules_met.size());
      numbers_.rules_met.push_back(r);
    }
    numbers_.code.push_back(n);
    if (!fresh) return true;
    numbers_.code.push_back(Number(a_.RuleStart(r)));
    numbers_.code.push_back(a_.RuleNullable(r) ? 1 : 0);
    return true;
  }

  bool Emit(StateId s) {
    std::vector<uint32_t>& code = numbers_.code;
    code.push_back(a_.IsPureFinal(s) ? 2 : a_.IsFinal(s) ? 1 : 0);
    code.push_back(static_cast<uint32_t>(a_.ByteEdges(s).size()));
    for (const ByteEdge& e : a_.ByteEdges(s)) {
      code.push_back((uint32_t{e.lo} << 8) | e.hi);
      code.push_back(Number(e.target));
    }
    code.push_back(static_cast<uint32_t>(a_.CallEdges(s).size()));
    for (const CallEdge& c : a_.CallEdges(s)) {
      if (!Rule(c.rule)) return false;
      code.push_back(Number(c.target));
    }
    return true;
  }

  const Automaton& a_;
  size_t max_states_;
  uint32_t near_;  // states further than this many bytes are written as kFar
  StateKey* out_;
  KeyNumbers& numbers_;
  std::vector<StateId>& queue_ = numbers_.queue;
  bool unbuilt_ = false;  // the last try met a rule not built yet
};

}  // namespace

bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states,
                     size_t max_bytes, StateKey* out, bool* unbuilt) {
  KeyWriter writer(automaton, max_states, max_bytes, out);
  const bool keyed = writer.Run(state);
  if (unbuilt != nullptr) *unbuilt = !keyed && writer.met_unbuilt_rule();
  return keyed;
}

}  // namespace gbnf::detail
