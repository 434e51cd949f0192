// The shared (level-2) mask cache: classifications keyed by StateKey (state_key.h), so that every
// state whose classification would read an equal part of the automaton, in any grammar compiled
// against the same Vocab object with the same max_state_size, uses one classification.
// Process-wide, thread-safe (one mutex, taken on a cache miss of level 1 only), bounded by a byte
// budget with least-recently-used eviction. An evicted entry stays alive as long as a grammar's
// level-1 entry holds it (shared ownership); the budget counts each classification once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "gbnf_sampler/vocab.h"
#include "mask/state_key.h"
#include "mask/state_mask.h"

namespace gbnf::detail {

class SharedMaskCache {
 public:
  static SharedMaskCache& Instance();

  // The classification stored for (vocab, max_state_size, key), or null.
  std::shared_ptr<const StateMask> Find(const Vocab& vocab, uint32_t max_state_size,
                                        const StateKey& key);
  // Stores `mask` unless an equal key is there already; returns the stored one.
  std::shared_ptr<const StateMask> Insert(const std::shared_ptr<const Vocab>& vocab,
                                          uint32_t max_state_size, const StoredKey& key,
                                          std::shared_ptr<const StateMask> mask);
  // The key ladder's levels that hold entries, as bits (a lookup tries only those).
  uint32_t LevelsHeld() const { return levels_held_.load(std::memory_order_relaxed); }
  // Whether an entry of a level above `level` has a key whose hash at `level` is `hash`: when
  // not, no larger key of the state being looked up can match (equal balls of a radius have
  // equal balls of every smaller one).
  bool MayHoldAbove(int level, uint64_t hash) const;

  void SetLimitBytes(size_t limit);
  size_t limit_bytes() const;
  size_t bytes() const;
  size_t entries() const;
  uint64_t hits() const;
  void Clear();

 private:
  struct Entry {
    std::weak_ptr<const Vocab> vocab;
    uint32_t max_state_size = 0;
    StateKey key;
    int level = 0;
    std::vector<uint64_t> lower;  // the key's hashes at the lower levels
    std::shared_ptr<const StateMask> mask;
    size_t bytes = 0;
    uint64_t index_key = 0;
  };
  using Lru = std::list<Entry>;  // most recently used first

  Lru::iterator Lookup(const Vocab& vocab, uint32_t max_state_size, const StateKey& key);
  Lru::iterator EraseLocked(Lru::iterator victim);
  void EvictLocked();
  void UpdateLevelsHeld();

  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_multimap<uint64_t, Lru::iterator> index_;
  std::array<size_t, kKeyLevels> level_entries_{};
  // Per level, the lower hashes of the entries above it, counted.
  std::array<std::unordered_map<uint64_t, uint32_t>, kKeyLevels> lower_;
  std::atomic<uint32_t> levels_held_{0};
  // The vocabularies of the entries (a few): entries are swept only once one of them is gone.
  std::vector<std::weak_ptr<const Vocab>> vocabs_;
  size_t bytes_ = 0;
  size_t limit_ = size_t{256} << 20;
  uint64_t hits_ = 0;
};

}  // namespace gbnf::detail
