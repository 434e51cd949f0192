// CompiledGrammar: a grammar's automaton bound to a tokenizer vocabulary. Token references of the
// grammar are resolved against the vocabulary, and the adaptive token-mask cache (one entry per
// automaton state, see csrc/mask/mask_cache.h) is filled lazily, on the first step that needs a
// state, so compiling costs milliseconds. Immutable to its users and thread-safe: any number of
// TokenMatchers on any threads share one CompiledGrammar.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/matcher.h"
#include "gbnf_sampler/vocab.h"

namespace gbnf {

namespace detail {
class WhitespaceFilter;  // csrc/mask/whitespace_filter.h
}

// How the token-mask cache is filled (see csrc/mask/mask_cache.h).
struct MaskCacheOptions {
  // Classify the states reachable from the start on background workers after compile, nearest
  // first, within the process-wide memory budget (SetMaskMemoryBudget).
  bool precompute = true;
  // After each accept, classify on a background worker the entries the next fill needs and does
  // not have yet, and fill the next mask there when it is more than a copy of cached entries,
  // so that the model's step between accept and fill hides the work.
  bool prefetch = true;
};

// What the token-mask cache of one compiled grammar holds (CompiledGrammar::CacheStats).
struct MaskCacheStats {
  size_t states = 0;         // automaton states (possible entries)
  size_t filled = 0;         // entries filled
  size_t classified = 0;     // entries this grammar classified itself (a trie walk)
  size_t background = 0;     //   of which by the precompute plan (workers, Precompute)
  size_t prefetched = 0;     //   of which by a worker after an accept (prefetch)
  size_t masks_filled_ahead = 0;  // fills that took a whole mask a worker filled (prefetch)
  size_t shared = 0;         // entries taken from the shared cache (another state's walk)
  size_t loaded = 0;         // entries loaded from a cache file
  size_t twins = 0;          // entries taken from a twin in an earlier copy of a repetition
  size_t bytes = 0;          // memory of the filled entries
  size_t shared_bytes = 0;   //   of which also held by the shared cache
  size_t mapped_bytes = 0;   //   of which in a memory-mapped cache file
  bool precompute_running = false;  // the background plan has states left
};

// The process-wide shared (level-2) cache: classifications keyed by the part of the automaton a
// state's walk reads, shared by every grammar compiled against the same Vocab object.
struct SharedMaskCacheStats {
  size_t entries = 0;
  size_t bytes = 0;
  size_t limit_bytes = 0;
  uint64_t hits = 0;
};

// Memory budget of the mask caches (the shared cache's limit, and the point where background
// precompute stops: entries of every live grammar plus the shared cache).
void SetMaskMemoryBudget(size_t bytes);
size_t MaskMemoryBudget();
SharedMaskCacheStats GetSharedMaskCacheStats();
void ClearSharedMaskCache();

class CompiledGrammar {
 public:
  // Resolves token references: <[id]> must be < vocab.size(); <text> must be the text of exactly
  // one token (GrammarError "unknown_token" / "ambiguous_token" / "token_id_out_of_range" at the
  // reference otherwise). `limits.max_state_size` also bounds the cache's walks.
  static std::shared_ptr<const CompiledGrammar> Compile(std::shared_ptr<const Automaton> automaton,
                                                        std::shared_ptr<const Vocab> vocab,
                                                        const MatcherLimits& limits = {},
                                                        const MaskCacheOptions& options = {});
  ~CompiledGrammar();
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;

  const Automaton& automaton() const { return *automaton_; }
  const std::shared_ptr<const Automaton>& automaton_ptr() const { return automaton_; }
  const Vocab& vocab() const { return *vocab_; }
  const std::shared_ptr<const Vocab>& vocab_ptr() const { return vocab_; }
  const MatcherLimits& limits() const { return limits_; }
  // token_ids()[node]: the token a kTokenRef node names (-1 for other nodes).
  const std::shared_ptr<const std::vector<int64_t>>& token_ids() const { return token_ids_; }
  // Bitset over token ids (ceil(V/32) words): every non-EOS, non-empty token (what a negated
  // reference !<x> may match, x aside).
  const std::vector<uint32_t>& any_token_words() const {
    return vocab_->trie().any_token_words();
  }

  // Classifies the states reachable from the start on the calling thread, nearest first (the
  // background workers' plan, which they go on with), until `budget` has passed (at least one
  // state; a classification is not cut short) or the plan is over; true when it is (every
  // reachable state filled or being filled by a worker, or the memory budget reached). For
  // callers that compile off the decoding path (a serving engine's compile threads) and would
  // rather pay the first masks there.
  bool Precompute(std::chrono::nanoseconds budget) const;

  // Bytes held by the mask-cache entries filled so far, and their number.
  size_t CacheBytes() const;
  size_t CachedStates() const;
  MaskCacheStats CacheStats() const;

  // The token-mask cache: an incomplete type outside the library (csrc/mask/mask_cache.h), where
  // the token-level matcher reads it.
  class MaskCache;
  const MaskCache& mask_cache() const { return *mask_cache_; }
  // The token filter of limits().max_whitespace (null when runs are not bounded).
  const detail::WhitespaceFilter* whitespace_filter() const { return whitespace_.get(); }

 private:
  CompiledGrammar() = default;
  void ResolveTokenRefs();

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const Vocab> vocab_;
  MatcherLimits limits_;
  std::shared_ptr<const std::vector<int64_t>> token_ids_;
  std::unique_ptr<const MaskCache> mask_cache_;
  std::shared_ptr<const detail::WhitespaceFilter> whitespace_;  // shared per (vocab, bound)
};

}  // namespace gbnf
