// A hash set of 96-bit keys with a 32-bit value, cleared in O(1) by bumping a generation
// counter, so that per-step deduplication allocates nothing once warm. Open addressing, linear
// probing, load factor at most 1/2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gbnf::detail {

class StepTable {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  void Clear() {
    size_ = 0;
    if (++gen_ == 0) Rewind();
  }
  // Inserts (a, b, c); false if it was already there.
  bool Insert(uint32_t a, uint32_t b, uint32_t c) { return Put(a, b, c, 0); }
  // Inserts (a, b, c) -> value unless present; true if inserted.
  bool Put(uint32_t a, uint32_t b, uint32_t c, uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(a, b, c) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.gen != gen_) {
        s = {a, b, c, value, gen_};
        ++size_;
        return true;
      }
      if (s.a == a && s.b == b && s.c == c) return false;
    }
  }
  // The value stored for (a, b, c), or kMissing.
  uint32_t Find(uint32_t a, uint32_t b, uint32_t c) const {
    if (slots_.empty()) return kMissing;
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(a, b, c) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.gen != gen_) return kMissing;
      if (s.a == a && s.b == b && s.c == c) return s.value;
    }
  }

 private:
  struct Slot {
    uint32_t a, b, c, value, gen;
  };
  static size_t Hash(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t h = (uint64_t{a} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{b} * 0xC2B2AE3D27D4EB4Full) ^
                 (uint64_t{c} * 0x165667B19E3779F9ull);
    return static_cast<size_t>(h ^ (h >> 32));
  }
  void Grow();
  void Rewind();

  std::vector<Slot> slots_;
  uint32_t gen_ = 1;
  uint32_t size_ = 0;
};

}  // namespace gbnf::detail
