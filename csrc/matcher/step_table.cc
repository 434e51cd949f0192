#include "matcher/step_table.h"

namespace gbnf::detail {

// The generation counter wrapped: forget every stamp.
void StepTable::Rewind() {
  for (Slot& s : slots_) s.gen = 0;
  gen_ = 1;
}

void StepTable::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{0, 0, 0, 0, 0});
  uint32_t live_gen = gen_;
  gen_ = 1;
  size_ = 0;
  for (const Slot& s : old) {
    if (s.gen == live_gen) Put(s.a, s.b, s.c, s.value);
  }
}

}  // namespace gbnf::detail
