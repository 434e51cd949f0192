#include "mask/state_key.h"

#include <unordered_map>

namespace gbnf::detail {
namespace {

class KeyWriter {
 public:
  KeyWriter(const Automaton& a, size_t max_states, StateKey* out)
      : a_(a), max_states_(max_states), out_(out) {}

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
  uint32_t Number(StateId s) {
    auto [it, fresh] = states_.emplace(s, static_cast<uint32_t>(queue_.size()));
    if (fresh) queue_.push_back(s);
    return it->second;
  }

  // A rule's canonical number; its first mention also writes its start and nullability.
  void Rule(RuleId r) {
    auto [it, fresh] = rules_.emplace(r, static_cast<uint32_t>(rules_.size()));
    out_->code.push_back(it->second);
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
  std::unordered_map<StateId, uint32_t> states_;
  std::unordered_map<RuleId, uint32_t> rules_;
  std::vector<StateId> queue_;
};

}  // namespace

bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states, StateKey* out) {
  return KeyWriter(automaton, max_states, out).Run(state);
}

}  // namespace gbnf::detail
