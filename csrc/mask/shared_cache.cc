#include "mask/shared_cache.h"

#include <algorithm>
#include <iterator>

namespace gbnf::detail {
namespace {

uint64_t IndexKey(const Vocab& vocab, uint32_t max_state_size, const StateKey& key) {
  return key.hash ^ (vocab.fingerprint() * 0x9E3779B97F4A7C15ull) ^
         (uint64_t{max_state_size} << 17);
}

}  // namespace

SharedMaskCache& SharedMaskCache::Instance() {
  // Never destroyed: grammars released during interpreter shutdown may still reach it.
  static SharedMaskCache* cache = new SharedMaskCache();
  return *cache;
}

SharedMaskCache::Lru::iterator SharedMaskCache::Lookup(const Vocab& vocab,
                                                       uint32_t max_state_size,
                                                       const StateKey& key) {
  auto [first, last] = index_.equal_range(IndexKey(vocab, max_state_size, key));
  for (auto it = first; it != last; ++it) {
    Entry& e = *it->second;
    // The very Vocab object: token ids and trie positions are that vocabulary's.
    if (e.max_state_size == max_state_size && e.vocab.lock().get() == &vocab && e.key == key) {
      return it->second;
    }
  }
  return lru_.end();
}

std::shared_ptr<const StateMask> SharedMaskCache::Find(const Vocab& vocab,
                                                       uint32_t max_state_size,
                                                       const StateKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = Lookup(vocab, max_state_size, key);
  if (it == lru_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it);
  ++hits_;
  return it->mask;
}

std::shared_ptr<const StateMask> SharedMaskCache::Insert(const std::shared_ptr<const Vocab>& vocab,
                                                         uint32_t max_state_size,
                                                         const StoredKey& key,
                                                         std::shared_ptr<const StateMask> mask) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = Lookup(*vocab, max_state_size, key.key);
  if (it != lru_.end()) return it->mask;
  if (limit_ == 0) return mask;
  Entry e;
  e.vocab = vocab;
  e.max_state_size = max_state_size;
  e.key = key.key;
  e.level = key.level;
  e.lower = key.lower;
  e.mask = std::move(mask);
  e.bytes = e.mask->MemoryBytes() + e.key.code.capacity() * sizeof(uint32_t) +
            e.lower.capacity() * sizeof(uint64_t) + sizeof(Entry);
  e.index_key = IndexKey(*vocab, max_state_size, key.key);
  bytes_ += e.bytes;
  ++level_entries_[static_cast<size_t>(e.level)];
  for (size_t l = 0; l < e.lower.size(); ++l) ++lower_[l][e.lower[l]];
  lru_.push_front(std::move(e));
  index_.emplace(lru_.front().index_key, lru_.begin());
  const bool known = std::any_of(vocabs_.begin(), vocabs_.end(), [&](const auto& v) {
    return !v.owner_before(vocab) && !vocab.owner_before(v);
  });
  if (!known) vocabs_.push_back(vocab);
  std::shared_ptr<const StateMask> stored = lru_.front().mask;
  EvictLocked();
  return stored;
}

SharedMaskCache::Lru::iterator SharedMaskCache::EraseLocked(Lru::iterator victim) {
  auto [first, last] = index_.equal_range(victim->index_key);
  for (auto it = first; it != last; ++it) {
    if (it->second == victim) {
      index_.erase(it);
      break;
    }
  }
  bytes_ -= victim->bytes;
  --level_entries_[static_cast<size_t>(victim->level)];
  for (size_t l = 0; l < victim->lower.size(); ++l) {
    auto count = lower_[l].find(victim->lower[l]);
    if (--count->second == 0) lower_[l].erase(count);
  }
  return lru_.erase(victim);
}

void SharedMaskCache::UpdateLevelsHeld() {
  uint32_t bits = 0;
  for (size_t l = 0; l < level_entries_.size(); ++l) {
    if (level_entries_[l] != 0) bits |= uint32_t{1} << l;
  }
  levels_held_.store(bits, std::memory_order_relaxed);
}

bool SharedMaskCache::MayHoldAbove(int level, uint64_t hash) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lower_[static_cast<size_t>(level)].count(hash) != 0;
}

// Drops the entries of vocabularies gone, then least recently used entries past the budget.
void SharedMaskCache::EvictLocked() {
  const auto gone = [](const std::weak_ptr<const Vocab>& v) { return v.expired(); };
  if (std::any_of(vocabs_.begin(), vocabs_.end(), gone)) {
    for (auto it = lru_.begin(); it != lru_.end();) {
      it = it->vocab.expired() ? EraseLocked(it) : std::next(it);
    }
    vocabs_.erase(std::remove_if(vocabs_.begin(), vocabs_.end(), gone), vocabs_.end());
  }
  while (bytes_ > limit_ && !lru_.empty()) EraseLocked(std::prev(lru_.end()));
  UpdateLevelsHeld();
}

void SharedMaskCache::SetLimitBytes(size_t limit) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = limit;
  EvictLocked();
}

size_t SharedMaskCache::limit_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_;
}

size_t SharedMaskCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t SharedMaskCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

uint64_t SharedMaskCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

void SharedMaskCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  lru_.clear();
  level_entries_.fill(0);
  vocabs_.clear();
  for (auto& counts : lower_) counts.clear();
  UpdateLevelsHeld();
  bytes_ = 0;
  hits_ = 0;
}

}  // namespace gbnf::detail

