// The adaptive token-mask cache of a CompiledGrammar: one StateMask per automaton state (see
// state_mask.h), filled on the first step that needs it, and the trie bytes its walks read.
// Thread-safe: one thread fills an entry (std::call_once) and publishes it; a filled entry is
// then read with one acquire load, no lock and no call out of the caller's file.
// Internal: the public CompiledGrammar names this type only as an incomplete one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "gbnf_sampler/compiled_grammar.h"
#include "mask/state_mask.h"
#include "mask/trie_bytes.h"

namespace gbnf {

class CompiledGrammar::MaskCache {
 public:
  MaskCache(std::shared_ptr<const Automaton> automaton, std::shared_ptr<const Vocab> vocab,
            uint32_t max_state_size);
  ~MaskCache();
  MaskCache(const MaskCache&) = delete;
  MaskCache& operator=(const MaskCache&) = delete;

  // The trie's token bytes in trie order (shared by the compiled grammars of a vocabulary).
  const detail::TrieBytes& trie_bytes() const { return *trie_bytes_; }

  // The entry of `state`, computed on first use.
  const detail::StateMask& StateMaskOf(StateId state) const {
    const detail::StateMask* mask = published_[state].load(std::memory_order_acquire);
    return mask != nullptr ? *mask : Fill(state);
  }

  // Bytes held by the entries filled so far, and their number.
  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  size_t states() const { return states_.load(std::memory_order_relaxed); }

 private:
  const detail::StateMask& Fill(StateId state) const;

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const Vocab> vocab_;
  uint32_t max_state_size_;
  std::shared_ptr<const detail::TrieBytes> trie_bytes_;
  std::unique_ptr<std::once_flag[]> once_;
  // Owned entries, written once per state inside call_once.
  std::unique_ptr<std::unique_ptr<const detail::StateMask>[]> masks_;
  // masks_[state].get() once filled, else null: what the lock-free read path loads.
  std::unique_ptr<std::atomic<const detail::StateMask*>[]> published_;
  mutable std::atomic<size_t> bytes_{0};
  mutable std::atomic<size_t> states_{0};
};

}  // namespace gbnf
