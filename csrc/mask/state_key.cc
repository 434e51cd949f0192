#include "mask/state_key.h"

#include <algorithm>
#include <cstdint>
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
  // The distance search's frontier (0-1 breadth-first): the states at distance `level` not
  // followed yet, and those found one byte further.
  std::vector<StateId> now;
  std::vector<StateId> next;
  uint32_t level = 0;
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

// The key's hash: four independent lanes over blocks of 8 words (a serial hash over a long
// key's tens of thousands of words was half its cost), the words after the last whole block
// folded in when a level ends (a later level's blocks take them again).
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

void HashBlock(uint64_t* lanes, const uint32_t* w) {
  for (int i = 0; i < 4; ++i) {
    const uint64_t v = uint64_t{w[2 * i]} | (uint64_t{w[2 * i + 1]} << 32);
    lanes[i] = Rotl(lanes[i] + v * kP2, 31) * kP1;
  }
}

uint64_t FinishHash(const uint64_t* lanes, const uint32_t* tail, size_t n, size_t size) {
  uint64_t h = Rotl(lanes[0], 1) + Rotl(lanes[1], 7) + Rotl(lanes[2], 12) + Rotl(lanes[3], 18);
  for (size_t i = 0; i < n; ++i) h = Rotl(h ^ (tail[i] * kP1), 23) * kP2 + kP3;
  h ^= size * kP3;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
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
  scratch_.now.assign(1, state);
  scratch_.next.clear();
  scratch_.level = 0;
  scratch_.distance[state] = 0;
  scratch_.reached.push_back(state);
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
  scratch_.now.clear();
  scratch_.next.clear();
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
  std::vector<uint32_t>& distance = scratch_.distance;
  auto reach = [&](StateId s, uint32_t d) {
    if (s >= distance.size()) Fit(s);
    uint32_t& old = distance[s];
    if (old <= d) return;  // kUnnumbered (not reached) is larger than any distance
    if (old == kUnnumbered) scratch_.reached.push_back(s);
    old = d;
    (d == scratch_.level ? scratch_.now : scratch_.next).push_back(s);
  };
  while (scratch_.level <= radius) {
    if (scratch_.now.empty()) {
      if (scratch_.next.empty()) break;
      scratch_.now.swap(scratch_.next);
      scratch_.next.clear();
      ++scratch_.level;
      continue;
    }
    if (scratch_.reached.size() > max_states_) {
      failed_ = true;
      return false;
    }
    const StateId s = scratch_.now.back();
    scratch_.now.pop_back();
    const uint32_t d = distance[s];
    if (d != scratch_.level) continue;  // met again nearer, and followed from there
    for (const ByteEdge& e : a_.ByteEdges(s)) reach(e.target, d + 1);
    for (const CallEdge& c : a_.CallEdges(s)) {
      if (!a_.RuleBuilt(c.rule)) {
        unbuilt_ = failed_ = true;
        return false;
      }
      reach(a_.RuleStart(c.rule), d);
      reach(c.target, d);
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
    for (; hashed_ + kBlockWords <= code.size(); hashed_ += kBlockWords) {
      HashBlock(lanes_, code.data() + hashed_);
    }
    scratch_.key.hash = FinishHash(lanes_, code.data() + hashed_, code.size() - hashed_,
                                   code.size());
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

// A state's record: its number, final kind, byte edges (range, target) and call edges (rule,
// then the rule's start and nullability at its first mention, target). Written through a
// pointer into room made for the longest record (the number of writes is half of a key's cost).
bool StateKeyWriter::Emit(StateId s) {
  const auto bytes = a_.ByteEdges(s);
  const auto calls = a_.CallEdges(s);
  std::vector<uint32_t>& code = scratch_.key.code;
  const size_t at = code.size();
  code.resize(at + 4 + 2 * bytes.size() + 4 * calls.size());
  uint32_t* out = code.data() + at;  // Number() and the rule table never touch `code`
  *out++ = scratch_.state[s];
  *out++ = a_.IsPureFinal(s) ? 2 : a_.IsFinal(s) ? 1 : 0;
  *out++ = static_cast<uint32_t>(bytes.size());
  for (const ByteEdge& e : bytes) {
    *out++ = (uint32_t{e.lo} << 8) | e.hi;
    *out++ = Number(e.target);
  }
  *out++ = static_cast<uint32_t>(calls.size());
  for (const CallEdge& c : calls) {
    if (c.rule >= scratch_.rule.size()) scratch_.rule.resize(size_t{c.rule} + 1, kUnnumbered);
    uint32_t& n = scratch_.rule[c.rule];
    if (n != kUnnumbered) {
      *out++ = n;
    } else {
      if (!a_.RuleBuilt(c.rule)) {
        unbuilt_ = failed_ = true;
        return false;
      }
      n = static_cast<uint32_t>(scratch_.rules_met.size());
      scratch_.rules_met.push_back(c.rule);
      *out++ = n;
      *out++ = Number(a_.RuleStart(c.rule));
      *out++ = a_.RuleNullable(c.rule) ? 1 : 0;
    }
    *out++ = Number(c.target);
  }
  code.resize(static_cast<size_t>(out - code.data()));
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
