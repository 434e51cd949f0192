// A hash table of 96-bit keys with a 32-bit value, cleared in O(1) by bumping a generation
// counter, so that the per-byte deduplication of parser items and stack entries allocates
// nothing once warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gbnf::detail {

class StepTable {
 public:
  // Empties the table (O(1) amortized).
  void Clear();
  // Finds (a, b, c) or inserts it with `value`. Returns the stored value slot and whether it was
  // inserted.
  uint32_t* FindOrInsert(uint32_t a, uint32_t b, uint32_t c, uint32_t value, bool* inserted);
  // Inserts (a, b, c); false if it was already there.
  bool Insert(uint32_t a, uint32_t b, uint32_t c) {
    bool inserted = false;
    FindOrInsert(a, b, c, 0, &inserted);
    return inserted;
  }

 private:
  struct Slot {
    uint32_t a, b, c, value, gen;
  };
  void Grow();
  static uint32_t Hash(uint32_t a, uint32_t b, uint32_t c);

  std::vector<Slot> slots_;
  uint32_t gen_ = 1;
  uint32_t size_ = 0;
};

}  // namespace gbnf::detail
