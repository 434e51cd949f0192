#include "mask/trie_bytes.h"

#include <mutex>
#include <unordered_map>

namespace gbnf::detail {

TrieBytes::TrieBytes(const TokenTrie& trie) {
  offsets_.reserve(trie.size() + 1);
  offsets_.push_back(0);
  for (size_t p = 0; p < trie.size(); ++p) {
    bytes_.append(trie.bytes(p));
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }
}

std::shared_ptr<const TrieBytes> TrieBytes::For(const Vocab& vocab) {
  static std::mutex mutex;
  static std::unordered_map<uint64_t, std::weak_ptr<const TrieBytes>> registry;
  const uint64_t key = vocab.fingerprint() ^ (uint64_t{vocab.size()} * 0x9E3779B97F4A7C15ull);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto hit = registry[key].lock()) return hit;
  }
  auto built = std::make_shared<const TrieBytes>(vocab.trie());
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = registry[key].lock()) return hit;
  registry[key] = built;
  return built;
}

}  // namespace gbnf::detail
