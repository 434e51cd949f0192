#include "mask/state_key.h"

#include <cstdint>
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
};

class KeyWriter {
 public:
  KeyWriter(const Automaton& a, size_t max_states, StateKey* out)
      : a_(a), max_states_(max_states), out_(out), numbers_(ThreadNumbers()) {
    if (numbers_.state.size() < a.num_states()) {
      numbers_.state.resize(a.num_states(), kUnnumbered);
    }
    if (numbers_.rule.size() < a.num_rules()) numbers_.rule.resize(a.num_rules(), kUnnumbered);
  }
  ~KeyWriter() {
    for (StateId s : queue_) numbers_.state[s] = kUnnumbered;
    for (RuleId r : numbers_.rules_met) numbers_.rule[r] = kUnnumbered;
    numbers_.rules_met.clear();
    // A thread keeps the arrays of ordinary automata, not those of a huge one.
    if (numbers_.state.size() > kKeptStates) std::vector<uint32_t>().swap(numbers_.state);
    if (numbers_.rule.size() > kKeptStates) std::vector<uint32_t>().swap(numbers_.rule);
  }
  KeyWriter(const KeyWriter&) = delete;
  KeyWriter& operator=(const KeyWriter&) = delete;

  bool Run(StateId start) {
    out_->code.clear();
    Number(start);
    for (size_t i = 0; i < queue_.size(); ++i) {
      if (queue_.size() > max_states_) return false;
      Emit(queue_[i]);
    }
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint32_t v : out_->code) h = (h ^ v) * 0x100000001B3ull;
    out_->hash = h ^ (out_->code.size() << 1);
    return true;
  }

 private:
  static KeyNumbers& ThreadNumbers() {
    thread_local KeyNumbers numbers;
    return numbers;
  }

  uint32_t Number(StateId s) {
    uint32_t& n = numbers_.state[s];
    if (n == kUnnumbered) {
      n = static_cast<uint32_t>(queue_.size());
      queue_.push_back(s);
    }
    return n;
  }

  // A rule's canonical number; its first mention also writes its start and nullability.
  void Rule(RuleId r) {
    uint32_t& n = numbers_.rule[r];
    const bool fresh = n == kUnnumbered;
    if (fresh) {
      n = static_cast<uint32_t>(numbers_.rules_met.size());
      numbers_.rules_met.push_back(r);
    }
    out_->code.push_back(n);
    if (!fresh) return;
    out_->code.push_back(Number(a_.RuleStart(r)));
    out_->code.push_back(a_.RuleNullable(r) ? 1 : 0);
  }

  void Emit(StateId s) {
    std::vector<uint32_t>& code = out_->code;
    code.push_back(a_.IsPureFinal(s) ? 2 : a_.IsFinal(s) ? 1 : 0);
    code.push_back(static_cast<uint32_t>(a_.ByteEdges(s).size()));
    for (const ByteEdge& e : a_.ByteEdges(s)) {
      code.push_back((uint32_t{e.lo} << 8) | e.hi);
      code.push_back(Number(e.target));
    }
    code.push_back(static_cast<uint32_t>(a_.CallEdges(s).size()));
    for (const CallEdge& c : a_.CallEdges(s)) {
      Rule(c.rule);
      code.push_back(Number(c.target));
    }
  }

  const Automaton& a_;
  size_t max_states_;
  StateKey* out_;
  KeyNumbers& numbers_;
  std::vector<StateId> queue_;
};

}  // namespace

bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states, StateKey* out) {
  return KeyWriter(automaton, max_states, out).Run(state);
}

}  // namespace gbnf::detail
