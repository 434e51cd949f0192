// The adaptive token-mask cache of a CompiledGrammar: one StateMask per automaton state (see
// state_mask.h), filled on the first step that needs it, by background workers ahead of time, or
// from the shared cache (see cache_core.h for who fills an entry and how work is shared).
// Thread-safe: a filled entry is read with one acquire load, no lock and no call out of the
// caller's file. Dropping the cache cancels the background work still queued for it.
// Internal: the public CompiledGrammar names this type only as an incomplete one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "gbnf_sampler/compiled_grammar.h"
#include "mask/cache_core.h"
#include "mask/state_mask.h"

namespace gbnf {

class CompiledGrammar::MaskCache {
 public:
  MaskCache(std::shared_ptr<const Automaton> automaton, std::shared_ptr<const Vocab> vocab,
            uint32_t max_state_size, const MaskCacheOptions& options);
  ~MaskCache();
  MaskCache(const MaskCache&) = delete;
  MaskCache& operator=(const MaskCache&) = delete;

  // The entry of `state`, computed on first use.
  const detail::StateMask& StateMaskOf(StateId state) const {
    const detail::StateMask* mask = core_->FilledMaskOf(state);
    return mask != nullptr ? *mask : core_->Fill(state);
  }

  // The entry of `state` if it is filled already, else nullptr (never computes).
  const detail::StateMask* FilledMaskOf(StateId state) const {
    return core_->FilledMaskOf(state);
  }

  // Bytes held by the entries filled so far, and their number.
  size_t bytes() const { return core_->Stats().bytes; }
  size_t states() const { return core_->Stats().filled; }
  MaskCacheStats Stats() const { return core_->Stats(); }
  detail::CacheCore& core() const { return *core_; }

 private:
  std::shared_ptr<detail::CacheCore> core_;
};

}  // namespace gbnf
