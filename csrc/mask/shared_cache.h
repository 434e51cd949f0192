// The shared (level-2) mask cache: classifications keyed by StateKey (state_key.h), so that every
// state that reaches the same place of the same sub-automaton, in any grammar compiled against
// the same Vocab object with the same max_state_size, uses one classification. Process-wide,
// thread-safe (one mutex, taken on a cache miss of level 1 only), bounded by a byte budget with
// least-recently-used eviction. An evicted entry stays alive as long as a grammar's level-1
// entry holds it (shared ownership); the budget counts each classification once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

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
                                          uint32_t max_state_size, const StateKey& key,
                                          std::shared_ptr<const StateMask> mask);

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
    std::shared_ptr<const StateMask> mask;
    size_t bytes = 0;
    uint64_t index_key = 0;
  };
  using Lru = std::list<Entry>;  // most recently used first

  Lru::iterator Lookup(const Vocab& vocab, uint32_t max_state_size, const StateKey& key);
  Lru::iterator EraseLocked(Lru::iterator victim);
  void EvictLocked();

  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_multimap<uint64_t, Lru::iterator> index_;
  size_t bytes_ = 0;
  size_t limit_ = size_t{256} << 20;
  uint64_t hits_ = 0;
};

}  // namespace gbnf::detail
