#include "mask/state_key.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

namespace gbnf::detail {
namespace {
constexpr uint32_t kUnnumbered = UINT32_MAX;
}  // namespace

// Distances and canonical numbers of one writer, indexed by state and rule id. Per thread and
// reused: a key touches a few states of an automaton that may have hundreds of thousands, so
// the entries written are reset, not the arrays.
struct KeyScratch {
  std::vector<uint32_t> distance;  // bytes from the key's state (kUnnumbered: not reached)
  std::vector<StateId> reached;    // the states whose distance is set
  std::deque<StateId> work;        // the distance search's frontier (0-1 breadth-first)
  std::vector<uint32_t> state;     // canonical numbers of the key being written
  std::vector<uint32_t> rule;
  std::vector<RuleId> rules_met;
  std::vector<StateId> numbered;  // the states numbered, in order
  std::vector<StateId> layer;      // the layer being written, in number order (grows meanwhile)
  std::vector<StateId> after;      // the states numbered so far one byte further
  StateKey key;  // the key being written
};

namespace {

constexpr size_t kKeptStates = size_t{1} << 20;  // 4 MiB of numbers per thread at most
constexpr uint32_t kLayerEnd = UINT32_MAX;       // never a state's number

KeyScratch& ThreadScratch() {
  thread_local KeyScratch scratch;
  return scratch;
}

uint32_t RadiusCap(size_t max_token_bytes) {
  return max_token_bytes >= kUnnumbered - 2 ? kUnnumbered - 1
                                            : static_cast<uint32_t>(max_token_bytes) + 1;
}

}  // namespace

int TopKeyLevel(size_t max_token_bytes) {
  const uint32_t cap = RadiusCap(max_token_bytes);
  int level = 0;
  while (level < kKeyLevels - 1 && (uint32_t{1} << level) < cap) ++level;
  return level;
}

uint32_t KeyRadius(int level, size_t max_token_bytes) {
  return level >= TopKeyLevel(max_token_bytes) ? RadiusCap(max_token_bytes)
                                               : uint32_t{1} << level;
}

StateKeyWriter::StateKeyWriter(const Automaton& automaton, StateId state, size_t max_states,
                               size_t max_token_bytes)
    : a_(automaton),
      max_states_(max_states),
      max_token_bytes_(max_token_bytes),
      scratch_(ThreadScratch()) {
  if (scratch_.rule.size() < a_.num_rules()) scratch_.rule.resize(a_.num_rules(), kUnnumbered);
  Fit(state);
  scratch_.work.clear();
  scratch_.distance[state] = 0;
  scratch_.reached.push_back(state);
  scratch_.work.push_back(state);
  scratch_.layer.clear();
  scratch_.after.clear();
  scratch_.key.code.clear();
  scratch_.key.hash = 0;
  Number(state);
}

StateKeyWriter::~StateKeyWriter() {
  for (StateId s : scratch_.numbered) scratch_.state[s] = kUnnumbered;
  scratch_.numbered.clear();
  for (RuleId r : scratch_.rules_met) scratch_.rule[r] = kUnnumbered;
  scratch_.rules_met.clear();
  for (StateId s : scratch_.reached) scratch_.distance[s] = kUnnumbered;
  scratch_.reached.clear();
  scratch_.work.clear();
  // A thread keeps the arrays of ordinary automata, not those of a huge one.
  if (scratch_.state.size() > kKeptStates) {
    std::vector<uint32_t>().swap(scratch_.state);
    std::vector<uint32_t>().swap(scratch_.distance);
  }
  if (scratch_.rule.size() > kKeptStates) std::vector<uint32_t>().swap(scratch_.rule);
}

const StateKey& StateKeyWriter::key() const { return scratch_.key; }

// Makes the state arrays hold `s` (the automaton grows while others build rules on first reach).
void StateKeyWriter::Fit(StateId s) {
  const size_t n = std::max<size_t>(size_t{s} + 1, a_.num_states());
  if (scratch_.state.size() < n) scratch_.state.resize(n, kUnnumbered);
  if (scratch_.distance.size() < n) scratch_.distance.resize(n, kUnnumbered);
}

// Settles every distance up to `radius` (0-1 breadth-first: byte edges cost 1, calls and the
// call's target 0); the states just outside get their distance without being followed.
bool StateKeyWriter::MeasureUpTo(uint32_t radius) {
  if (failed_) return false;
  std::deque<StateId>& work = scratch_.work;
  std::vector<uint32_t>& distance = scratch_.distance;
  auto reach = [&](StateId s, uint32_t d, bool front) {
    if (s >= distance.size()) Fit(s);
    uint32_t& old = distance[s];
    if (old != kUnnumbered && old <= d) return;
    if (old == kUnnumbered) scratch_.reached.push_back(s);
    old = d;
    if (front) {
      work.push_front(s);
    } else {
      work.push_back(s);
    }
  };
  while (!work.empty() && distance[work.front()] <= radius) {
    if (scratch_.reached.size() > max_states_) {
      failed_ = true;
      return false;
    }
    const StateId s = work.front();
    work.pop_front();
    const uint32_t d = distance[s];
    for (const ByteEdge& e : a_.ByteEdges(s)) reach(e.target, d + 1, false);
    for (const CallEdge& c : a_.CallEdges(s)) {
      if (!a_.RuleBuilt(c.rule)) {
        unbuilt_ = failed_ = true;
        return false;
      }
      reach(a_.RuleStart(c.rule), d, true);
      reach(c.target, d, true);
    }
  }
  failed_ = scratch_.reached.size() > max_states_;
  return !failed_;
}

bool StateKeyWriter::LevelOf(const std::vector<StateId>& states, int* level) {
  const int top = TopKeyLevel(max_token_bytes_);
  int l = 0;
  uint32_t radius = KeyRadius(0, max_token_bytes_);
  if (!MeasureUpTo(radius - 1)) return false;
  for (StateId s : states) {
    // Distances up to the radius measured are final: one that is larger stays larger.
    while (s >= scratch_.distance.size() || scratch_.distance[s] > radius - 1) {
      if (l == top) return false;  // never reached within a token's length: not shared
      radius = KeyRadius(++l, max_token_bytes_);
      if (!MeasureUpTo(radius - 1)) return false;
    }
  }
  *level = l;
  return true;
}

bool StateKeyWriter::WriteTo(int level, std::vector<uint64_t>* crossed) {
  for (int l = level_ + 1; l <= level; ++l) {
    const uint32_t radius = KeyRadius(l, max_token_bytes_);
    while (layer_ <= radius) {
      if (!EmitLayer()) return false;
    }
    const std::vector<uint32_t>& code = scratch_.key.code;
    for (; hashed_ < code.size(); ++hashed_) fnv_ = (fnv_ ^ code[hashed_]) * 0x100000001B3ull;
    scratch_.key.hash = fnv_ ^ (code.size() << 1);
    level_ = l;
    if (l < level && crossed != nullptr) crossed->push_back(scratch_.key.hash);
  }
  return !failed_;
}

// Writes the states at distance layer_, in number order: those numbered before, then those
// numbered meanwhile at the same distance (through calls); the ones numbered one byte further
// wait for the next layer.
bool StateKeyWriter::EmitLayer() {
  if (!MeasureUpTo(layer_)) return false;
  for (size_t i = 0; i < scratch_.layer.size(); ++i) {
    if (scratch_.numbered.size() > max_states_) {
      failed_ = true;
      return false;
    }
    if (!Emit(scratch_.layer[i])) return false;
  }
  scratch_.key.code.push_back(kLayerEnd);
  scratch_.layer.swap(scratch_.after);
  scratch_.after.clear();
  ++layer_;
  return true;
}

uint32_t StateKeyWriter::Number(StateId s) {
  if (s >= scratch_.state.size() || s >= scratch_.distance.size()) Fit(s);
  if (scratch_.state[s] == kUnnumbered) {
    scratch_.state[s] = static_cast<uint32_t>(scratch_.numbered.size());
    scratch_.numbered.push_back(s);
    // A state first met while writing layer d is d bytes away (a call) or d + 1 (a byte edge):
    // a nearer one was met from its nearest predecessor, in an earlier layer.
    (scratch_.distance[s] <= layer_ ? scratch_.layer : scratch_.after).push_back(s);
  }
  return scratch_.state[s];
}

// A rule's canonical number; its first mention also writes its start and nullability. False
// when the rule is not built yet.
bool StateKeyWriter::Rule(RuleId r) {
  if (r >= scratch_.rule.size()) scratch_.rule.resize(size_t{r} + 1, kUnnumbered);
  uint32_t& n = scratch_.rule[r];
  const bool fresh = n == kUnnumbered;
  if (fresh && !a_.RuleBuilt(r)) {
    unbuilt_ = true;
    return false;
  }
  if (fresh) {
    n = static_cast<uint32_t>(scratch_.rules_met.size());
    scratch_.rules_met.push_back(r);
  }
  scratch_.key.code.push_back(n);
  if (!fresh) return true;
  const uint32_t start = Number(a_.RuleStart(r));
  scratch_.key.code.push_back(start);
  scratch_.key.code.push_back(a_.RuleNullable(r) ? 1 : 0);
  return true;
}

// A state's record: its number, final kind, byte edges and call edges.
bool StateKeyWriter::Emit(StateId s) {
  std::vector<uint32_t>& code = scratch_.key.code;
  code.push_back(scratch_.state[s]);
  code.push_back(a_.IsPureFinal(s) ? 2 : a_.IsFinal(s) ? 1 : 0);
  code.push_back(static_cast<uint32_t>(a_.ByteEdges(s).size()));
  for (const ByteEdge& e : a_.ByteEdges(s)) {
    code.push_back((uint32_t{e.lo} << 8) | e.hi);
    const uint32_t target = Number(e.target);
    code.push_back(target);
  }
  code.push_back(static_cast<uint32_t>(a_.CallEdges(s).size()));
  for (const CallEdge& c : a_.CallEdges(s)) {
    if (!Rule(c.rule)) return false;
    const uint32_t target = Number(c.target);
    code.push_back(target);
  }
  return true;
}

bool ComputeStoredKey(const Automaton& automaton, StateId state, size_t max_states,
                      size_t max_token_bytes, const std::vector<StateId>& met, StoredKey* out) {
  StateKeyWriter writer(automaton, state, max_states, max_token_bytes);
  out->lower.clear();
  if (!writer.LevelOf(met, &out->level) || !writer.WriteTo(out->level, &out->lower)) return false;
  out->key = writer.key();
  return true;
}

bool ComputeStateKey(const Automaton& automaton, StateId state, size_t max_states,
                     size_t max_token_bytes, int level, StateKey* out, bool* unbuilt) {
  StateKeyWriter writer(automaton, state, max_states, max_token_bytes);
  const bool keyed = writer.WriteTo(level);
  if (keyed) *out = writer.key();
  if (unbuilt != nullptr) *unbuilt = !keyed && writer.met_unbuilt_rule();
  return keyed;
}

}  // namespace gbnf::detail
