#include "mask/mask_cache.h"

#include <utility>

namespace gbnf {

CompiledGrammar::MaskCache::MaskCache(std::shared_ptr<const Automaton> automaton,
                                      std::shared_ptr<const Vocab> vocab, uint32_t max_state_size)
    : automaton_(std::move(automaton)),
      vocab_(std::move(vocab)),
      max_state_size_(max_state_size),
      trie_bytes_(detail::TrieBytes::For(vocab_)) {
  const size_t n = automaton_->num_states();
  once_ = std::make_unique<std::once_flag[]>(n);
  masks_ = std::make_unique<std::unique_ptr<const detail::StateMask>[]>(n);
  published_ = std::make_unique<std::atomic<const detail::StateMask*>[]>(n);  // all null
}

CompiledGrammar::MaskCache::~MaskCache() = default;

const detail::StateMask& CompiledGrammar::MaskCache::Fill(StateId state) const {
  std::call_once(once_[state], [&] {
    auto mask = std::make_unique<const detail::StateMask>(detail::ClassifyState(
        automaton_, vocab_->trie(), *trie_bytes_, state, max_state_size_));
    bytes_.fetch_add(mask->MemoryBytes(), std::memory_order_relaxed);
    states_.fetch_add(1, std::memory_order_relaxed);
    masks_[state] = std::move(mask);
    published_[state].store(masks_[state].get(), std::memory_order_release);
  });
  // call_once orders the winner's writes before every caller's return from it.
  return *masks_[state];
}

}  // namespace gbnf
