// An append-only table indexed by dense ids (automaton states) whose entries never move: segments
// that double in size (256, 512, 1024, ... entries), each allocated on first use and found
// through a fixed array of 25 segment pointers. So a table grows while other threads read it,
// without a lock and without copying, and a table that stays small costs one small segment.
// Entries are value-initialized (zero for atomics and plain structs).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gbnf::detail {

template <typename T>
class SegmentedTable {
 public:
  SegmentedTable() = default;
  ~SegmentedTable() {
    for (auto& s : segments_) delete[] s.load(std::memory_order_relaxed);
  }
  SegmentedTable(const SegmentedTable&) = delete;
  SegmentedTable& operator=(const SegmentedTable&) = delete;

  // The entry `id`, or nullptr when its segment was never allocated.
  T* Find(uint32_t id) const {
    const Place p = PlaceOf(id);
    T* segment = segments_[p.segment].load(std::memory_order_acquire);
    return segment == nullptr ? nullptr : segment + p.offset;
  }

  // The entry `id`, allocating its segment first if needed (threads racing keep one).
  T& Ensure(uint32_t id) {
    const Place p = PlaceOf(id);
    T* segment = segments_[p.segment].load(std::memory_order_acquire);
    if (segment == nullptr) {
      T* fresh = new T[SegmentSize(p.segment)]();
      if (segments_[p.segment].compare_exchange_strong(segment, fresh, std::memory_order_acq_rel)) {
        segment = fresh;
      } else {
        delete[] fresh;  // another thread won; `segment` now holds its allocation
      }
    }
    return segment[p.offset];
  }

  // Bytes of the segments allocated so far.
  size_t MemoryBytes() const {
    size_t bytes = 0;
    for (uint32_t k = 0; k < kSegments; ++k) {
      if (segments_[k].load(std::memory_order_relaxed) != nullptr) {
        bytes += SegmentSize(k) * sizeof(T);
      }
    }
    return bytes;
  }

 private:
  static constexpr uint32_t kFirstBits = 8;  // the first segment holds 2^8 entries
  static constexpr uint32_t kSegments = 33 - kFirstBits;  // enough for every uint32_t id

  struct Place {
    uint32_t segment;
    size_t offset;
  };

  static size_t SegmentSize(uint32_t k) { return size_t{1} << (kFirstBits + k); }

  // Segment k holds ids [2^(8+k) - 2^8, 2^(9+k) - 2^8): shifting ids by 2^8 makes the segment the
  // position of the highest bit, with no branch (the hot path of every automaton lookup).
  static Place PlaceOf(uint32_t id) {
    const uint64_t shifted = uint64_t{id} + (uint64_t{1} << kFirstBits);
    const uint32_t top = HighestBit(shifted);  // >= kFirstBits
    return {top - kFirstBits, static_cast<size_t>(shifted - (uint64_t{1} << top))};
  }

  static uint32_t HighestBit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return 63u - static_cast<uint32_t>(__builtin_clzll(x));
#else
    uint32_t n = 0;
    while (x >>= 1) ++n;
    return n;
#endif
  }

  mutable std::atomic<T*> segments_[kSegments] = {};
};

}  // namespace gbnf::detail
