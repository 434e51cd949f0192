// CompiledGrammar: a grammar's automaton bound to a tokenizer vocabulary. Token references of the
// grammar are resolved against the vocabulary, and the adaptive token-mask cache (one entry per
// automaton state, see csrc/mask/mask_cache.h) is filled lazily, on the first step that needs a
// state, so compiling costs milliseconds. Immutable to its users and thread-safe: any number of
// TokenMatchers on any threads share one CompiledGrammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/matcher.h"
#include "gbnf_sampler/vocab.h"

namespace gbnf {

class CompiledGrammar {
 public:
  // Resolves token references: <[id]> must be < vocab.size(); <text> must be the text of exactly
  // one token (GrammarError "unknown_token" / "ambiguous_token" / "token_id_out_of_range" at the
  // reference otherwise). `limits.max_state_size` also bounds the cache's walks.
  static std::shared_ptr<const CompiledGrammar> Compile(std::shared_ptr<const Automaton> automaton,
                                                        std::shared_ptr<const Vocab> vocab,
                                                        const MatcherLimits& limits = {});
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
  const std::vector<uint32_t>& any_token_words() const { return any_token_; }

  // Bytes held by the mask-cache entries filled so far, and their number.
  size_t CacheBytes() const;
  size_t CachedStates() const;

  // The token-mask cache: an incomplete type outside the library (csrc/mask/mask_cache.h), where
  // the token-level matcher reads it.
  class MaskCache;
  const MaskCache& mask_cache() const { return *mask_cache_; }

 private:
  CompiledGrammar() = default;
  void ResolveTokenRefs();
  void BuildAnyToken();

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const Vocab> vocab_;
  MatcherLimits limits_;
  std::shared_ptr<const std::vector<int64_t>> token_ids_;
  std::vector<uint32_t> any_token_;
  std::unique_ptr<const MaskCache> mask_cache_;
};

}  // namespace gbnf
