#include "mask/trie_bytes.h"

#include <iterator>
#include <mutex>
#include <unordered_map>

namespace gbnf::detail {

TrieBytes::TrieBytes(const TokenTrie& trie, std::weak_ptr<const Vocab> source)
    : source_(std::move(source)) {
  offsets_.reserve(trie.size() + 1);
  offsets_.push_back(0);
  for (size_t p = 0; p < trie.size(); ++p) {
    bytes_.append(trie.bytes(p));
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  }
}

// A registry hit must hold exactly this vocabulary's trie bytes: a fingerprint is a hash, and a
// collision would otherwise make walks read another vocabulary's tokens.
bool TrieBytes::Holds(const Vocab& vocab) const {
  // Built from this very Vocab, still alive (so its address is not a new object's).
  if (source_.lock().get() == &vocab) return true;
  const TokenTrie& trie = vocab.trie();
  if (offsets_.size() != trie.size() + 1) return false;
  for (size_t p = 0; p < trie.size(); ++p) {
    if (at(p) != trie.bytes(p)) return false;
  }
  return true;
}

std::shared_ptr<const TrieBytes> TrieBytes::For(const std::shared_ptr<const Vocab>& source) {
  const Vocab& vocab = *source;
  static std::mutex mutex;
  static std::unordered_map<uint64_t, std::weak_ptr<const TrieBytes>> registry;
  const uint64_t key = vocab.fingerprint() ^ (uint64_t{vocab.size()} * 0x9E3779B97F4A7C15ull);
  const TokenTrie& trie = vocab.trie();
  std::shared_ptr<const TrieBytes> hit;
  {
    std::lock_guard<std::mutex> lock(mutex);
    hit = registry[key].lock();
  }
  if (hit && hit->Holds(vocab)) return hit;
  auto built = std::make_shared<const TrieBytes>(trie, source);
  std::lock_guard<std::mutex> lock(mutex);
  // Entries of vocabularies gone since are dropped, so the registry does not grow forever.
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  hit = registry[key].lock();
  if (hit && hit->Holds(vocab)) return hit;
  if (!hit) registry[key] = built;  // a colliding live entry keeps its slot; `built` is private
  return built;
}

}  // namespace gbnf::detail
