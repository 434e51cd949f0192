// Rule ids by name: open addressing over (hash, id) pairs, the names themselves kept by the
// caller (`name_of(id)`), so that a copy of the owner can use a copy of the index as is. One
// allocation for the whole table, where a node-based map made one per rule (a tenth of a large
// grammar's parse).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

class RuleNameIndex {
 public:
  // Sizes the table for `rules` names without growing.
  void Reserve(size_t rules) {
    if (2 * rules > slots_.size()) Rebuild(2 * rules);
  }

  template <typename NameOf>
  int64_t Find(std::string_view name, NameOf name_of) const {
    if (slots_.empty()) return -1;
    const uint64_t hash = Hash(name);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.id == kEmpty) return -1;
      if (slot.hash == hash && name_of(slot.id) == name) return slot.id;
    }
  }

  // Adds `name` (not in the index yet) as rule `id`.
  void Insert(std::string_view name, RuleId id) {
    if (2 * (used_ + 1) > slots_.size()) Rebuild(2 * (used_ + 1));
    Place({Hash(name), id});
    ++used_;
  }

 private:
  static constexpr RuleId kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    RuleId id = kEmpty;
  };

  static uint64_t Hash(std::string_view name) { return std::hash<std::string_view>()(name); }

  void Place(const Slot& entry) {
    const size_t mask = slots_.size() - 1;
    size_t i = entry.hash & mask;
    while (slots_[i].id != kEmpty) i = (i + 1) & mask;
    slots_[i] = entry;
  }

  // A table of at least `wanted` slots (a power of two), holding the entries again.
  void Rebuild(size_t wanted) {
    size_t size = 16;
    while (size < wanted) size *= 2;
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(size, Slot{});
    for (const Slot& slot : old) {
      if (slot.id != kEmpty) Place(slot);
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
};

}  // namespace gbnf::detail
