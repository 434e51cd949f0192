// ConfigWalker: the PrefixWalker's job (the recognizer run over the bytes of a token trie walk,
// one saved state per byte of the held prefix) with a memo of the recognizer's byte steps, so
// that the walk steps a lazily built DFA wherever it can.
//
// While the walker runs, the graph-structured stack is append-only (speculative), and the
// recognizer's step over a byte is a deterministic function of its items and of the stack below
// them. The walker makes the stack canonical: every step starts from the stack of a "scope",
// a chain of stack segments: the nodes that existed at Begin (the base scope), then the segment
// each memoized step created, saved and put back at the same node ids when the walk returns to
// it. A scope is interned by its parent and its segment's content; a configuration (a scope and
// the item set over its stack, in canonical order) is interned too, and its transitions are kept
// in a table: one row of 256 entries per configuration, filled on first use with the next
// configuration or "refused". A step over a known byte is one table lookup: no recognizer work,
// no copy of items. A step's answer is written for the whole range of bytes that every item's
// byte edges treat alike (the recognizer reads a byte only through edge membership), so a
// string body's row costs a handful of recognizer steps, not one per byte value.
//
// So in an isolated walk from one automaton state (Recognizer::ResetIsolated), a walk inside a
// regular part of the grammar (string bodies, numbers, identifiers, whitespace, and the
// completions they trigger) steps the table, and the recognizer runs once per distinct
// (configuration, byte). The result of every step is the recognizer's own: the table only
// remembers it. Past kMaxConfigs or kMaxScopes, or after a step that hit max_state_size, levels
// are "transient" (items saved per level, as in PrefixWalker) until the walk pops below them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "matcher/recognizer.h"

namespace gbnf::detail {

class ConfigWalker {
 public:
  // Interned configurations and scopes per Begin (a row of the table is 1 KiB).
  static constexpr uint32_t kMaxConfigs = 8192;
  static constexpr uint32_t kMaxScopes = 4096;

  // Level 0 is the recognizer's current state; its stack is the base scope.
  void Begin(Recognizer* recognizer, size_t max_token_length);
  // Puts the recognizer back in its state at Begin.
  void End();

  uint32_t held() const { return held_; }
  // The deepest level an Extend may reach (Begin's max_token_length).
  size_t max_level() const { return max_level_; }
  // Pops back to `keep` bytes (keep <= held()), then advances over `add` byte by byte while the
  // grammar allows; returns how many bytes of `add` were taken (held() == keep + that).
  size_t Extend(uint32_t keep, std::string_view add) {
    // Levels above `keep` are about to be rewritten: the recognizer's copy of one is stale.
    if (keep < recognizer_level_) recognizer_level_ = kNil;
    limited_ = false;
    const auto* first = reinterpret_cast<const uint8_t*>(add.data());
    const uint8_t* last = first + add.size();
    const uint8_t* p = first;
    held_ = keep;
    for (;;) {
      // The table loop, on locals (the level arrays would otherwise alias every member).
      const int32_t* rows = rows_.data();
      int32_t* configs = level_config_.data();
      uint8_t* complete = complete_upto_.data();
      uint32_t held = held_;
      int32_t config = configs[held];
      uint8_t done = complete[held];
      int32_t entry = kUnknown;
      for (; p != last; ++p) {
        entry = config >= 0 ? rows[static_cast<size_t>(config) * 256 + *p] : kUnknown;
        if (entry < 0) break;
        config = entry >> 1;  // the next configuration; its complete() in the low bit
        done = static_cast<uint8_t>(done | (entry & 1));
        ++held;
        configs[held] = config;
        complete[held] = done;
      }
      held_ = held;
      if (p == last || entry == kRefused || !Step(*p)) break;
      ++p;
    }
    return static_cast<size_t>(p - first);
  }
  // The last Extend stopped on a byte whose step exceeded max_state_size.
  bool limited() const { return limited_; }
  // complete() was true at some level in [1, level] (see PrefixWalker::CompleteWithin).
  bool CompleteWithin(uint32_t level) const { return complete_upto_[level] != 0; }

  // The configuration held at `level` (<= held()), or a negative value for a transient level.
  // Equal ids at two levels mean equal recognizer states (items and the stack they read).
  int32_t config_at(uint32_t level) const { return level_config_[level]; }
  // Whether the configuration's rule invocation may end there (config >= 0).
  bool IsComplete(int32_t config) const { return configs_[static_cast<size_t>(config)].complete; }
  // The memoized step of `config` (>= 0) over `byte`: the next configuration (>= 0), kRefused,
  // or kNotStepped (no step over a byte the items treat alike yet, or it left the memo).
  static constexpr int32_t kNotStepped = -1;
  static constexpr int32_t kRefused = -2;
  int32_t Peek(int32_t config, uint8_t byte) const {
    const int32_t entry = rows_[static_cast<size_t>(config) * 256 + byte];
    return entry < 0 ? entry : entry >> 1;
  }

  // Configurations whose byte steps the recognizer cannot tell apart share a shape id. A byte
  // step reads the states of the items that have byte edges and the stack nodes those reach
  // (accepts flags, continuations), never node ids, so two configurations whose movable items
  // and reachable stacks are equal up to renaming the nodes take the same bytes, to
  // configurations of equal shape again (a loop through a rule call makes a new configuration
  // per byte, all of one shape). Their complete() may differ. A configuration whose movable
  // items share a state, or that reaches more than kMaxShapeNodes nodes, keeps a shape of its
  // own. Requires config >= 0.
  static constexpr size_t kMaxShapeNodes = 32;
  uint32_t ShapeOf(int32_t config);
  // The widest byte range one edge of the configuration's items takes (a loop or a count over
  // a class needs a wide one; a literal has edges of one byte).
  uint32_t WidestByteRange(int32_t config) const;
  // A hash of the states of the movable items alone: configurations of equal shape have equal
  // keys, so unequal keys rule a shape comparison out without reading the stack.
  uint64_t StatesKey(int32_t config);

  // When every item of `to` is an item of `from` moved `shift` > 0 states up (the same nodes
  // and stack scope), `shift`; else 0. Requires from, to >= 0.
  StateId ItemsShift(int32_t from, int32_t to) const;
  // The automaton states of the items of `config` (>= 0), into `out`.
  void ItemStates(int32_t config, std::vector<StateId>* out) const;
  // Notes states as held by the walk (states_met), for configurations a caller knows the walk
  // would have held without stepping into them.
  void NoteStatesMet(const std::vector<StateId>& states);
  const Automaton& automaton() const { return recognizer_->automaton(); }

  // The automaton states of the items of every configuration the walk held since Begin (interned
  // or transient), each once. A recognizer step reads only the states of its items and, in its
  // closure, states no further than one byte edge from them: what the walk read of the automaton
  // lies within one byte of these (the shared cache's key radius, state_key.h).
  const std::vector<StateId>& states_met() const { return states_met_; }

  // Work counters (tests and benchmarks): steps run by the recognizer, configurations and
  // scopes interned.
  uint64_t recognizer_steps() const { return recognizer_steps_; }
  size_t configs() const { return configs_.size(); }
  size_t scopes() const { return scopes_.size(); }

 private:
  static constexpr int32_t kUnknown = kNotStepped;
  static constexpr int32_t kTransient = -1;  // level_config_ of a level outside the memo

  struct Scope {
    uint32_t parent = kNil;
    uint32_t depth = 0;
    Gss::MarkPoint mark;  // the stack at the end of this scope's segment
    uint32_t nodes_begin = 0;  // the segment's copy in saved_nodes_ / saved_conts_
    uint32_t conts_begin = 0;
    uint64_t hash = 0;
  };
  struct Config {
    uint32_t scope = 0;
    uint32_t items_begin = 0;  // in item_pool_, sorted by (node, state)
    uint32_t items_size = 0;
    uint64_t hash = 0;
    bool complete = false;
    uint32_t shape = kNil;  // kNil: not computed yet
    uint64_t states_key = 0;  // 0: not computed yet
  };
  struct Shape {
    uint32_t code_begin = 0;  // in shape_code_
    uint32_t code_size = 0;
    uint64_t hash = 0;
  };
  // What a transient level holds (the others are a configuration id).
  struct Transient {
    bool complete = false;
    Gss::MarkPoint mark;
    std::vector<Item> items;
  };

  bool Step(uint8_t byte);
  void NoteStates(const Item* first, const Item* last);
  // The widest byte range around `byte` in which every byte edge of the recognizer's items is
  // either taken by all bytes or by none: a step gives the same result for each of them.
  void SameStepRange(uint8_t byte, uint32_t* lo, uint32_t* hi) const;
  void Memoize(int32_t source, int32_t entry, uint32_t lo, uint32_t hi);  // bytes [lo, hi]
  void SyncRecognizer();
  void Materialize(uint32_t scope);
  int32_t InternResult(uint32_t scope, const Gss::MarkPoint& before);
  uint32_t InternScope(uint32_t parent, const Gss::MarkPoint& before);
  int32_t InternConfig(uint32_t scope, const std::vector<Item>& items, bool complete);
  // A node or continuation of `scope`'s stack, read from the saved segments (or the base).
  const GssNode& NodeAt(uint32_t scope, uint32_t id) const;
  const GssCont& ContAt(uint32_t scope, uint32_t id) const;
  bool WriteShape(const Config& c, std::vector<uint32_t>* code);
  uint32_t InternShape(const std::vector<uint32_t>& code);
  int32_t* RowOf(int32_t config) { return rows_.data() + static_cast<size_t>(config) * 256; }
  const Item* ItemsOf(const Config& c) const { return item_pool_.data() + c.items_begin; }

  Recognizer* recognizer_ = nullptr;
  uint32_t recognizer_level_ = 0;
  // The scope whose stack is a prefix of the recognizer's stack (kNil: unknown).
  uint32_t materialized_ = 0;
  std::vector<int32_t> level_config_;  // per level: a configuration, or kTransient
  std::vector<Transient> transient_;   // per level, when transient
  std::vector<uint8_t> complete_upto_;
  uint32_t held_ = 0;
  size_t max_level_ = 0;
  bool limited_ = false;

  std::vector<Scope> scopes_;
  std::vector<GssNode> saved_nodes_;
  std::vector<GssCont> saved_conts_;
  std::vector<uint32_t> scope_slots_;  // open addressing, scope ids (kNil: empty)
  std::vector<Config> configs_;
  std::vector<Item> item_pool_;
  std::vector<int32_t> config_slots_;  // open addressing, config ids (-1: empty)
  // The table: 256 entries per configuration, (next << 1 | next's complete()), kUnknown or
  // kRefused.
  std::vector<int32_t> rows_;
  std::vector<Shape> shapes_;
  std::vector<uint32_t> shape_code_;
  std::vector<uint32_t> shape_slots_;  // open addressing, shape ids (kNil: empty)
  std::vector<uint32_t> code_;         // scratch of ShapeOf
  std::vector<uint32_t> shape_nodes_;  // scratch of WriteShape: node ids in canonical order
  std::vector<Item> sorted_;  // scratch
  std::vector<uint32_t> path_;  // scratch of Materialize

  std::vector<StateId> states_met_;
  uint32_t met_epoch_ = 0;  // this walk's mark in the thread's table of states met

  uint64_t recognizer_steps_ = 0;
};

}  // namespace gbnf::detail
