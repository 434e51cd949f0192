#include "matcher/step_table.h"

namespace gbnf::detail {

void StepTable::Clear() {
  size_ = 0;
  if (++gen_ == 0) {  // wrapped: forget every stamp
    for (Slot& s : slots_) s.gen = 0;
    gen_ = 1;
  }
}

uint32_t StepTable::Hash(uint32_t a, uint32_t b, uint32_t c) {
  uint64_t h = (uint64_t{a} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{b} * 0xC2B2AE3D27D4EB4Full) ^
               (uint64_t{c} * 0x165667B19E3779F9ull);
  h ^= h >> 29;
  return static_cast<uint32_t>(h);
}

uint32_t* StepTable::FindOrInsert(uint32_t a, uint32_t b, uint32_t c, uint32_t value,
                                  bool* inserted) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  size_t mask = slots_.size() - 1;
  for (size_t i = Hash(a, b, c) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.gen != gen_) {
      s = {a, b, c, value, gen_};
      ++size_;
      *inserted = true;
      return &s.value;
    }
    if (s.a == a && s.b == b && s.c == c) {
      *inserted = false;
      return &s.value;
    }
  }
}

void StepTable::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{0, 0, 0, 0, 0});
  uint32_t live_gen = gen_;
  gen_ = 1;
  size_ = 0;
  for (const Slot& s : old) {
    if (s.gen != live_gen) continue;
    bool inserted = false;
    FindOrInsert(s.a, s.b, s.c, s.value, &inserted);
  }
}

}  // namespace gbnf::detail
