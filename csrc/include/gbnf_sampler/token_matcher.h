// TokenMatcher: the token-level matcher of one generated sequence over a CompiledGrammar.
//
// Token semantics (the same in AcceptToken and in every mask):
//   * EOS ids: accepted exactly when CanTerminate(); the matcher is then terminated and accepts
//     nothing more.
//   * Empty tokens: never accepted (llama.cpp refuses them too).
//   * Special (control) ids: only through a grammar token reference that names them (<[id]>,
//     <text>) or a negated one (!<x> matches any non-EOS, non-empty token but x, special ones
//     included, as in llama.cpp); never as text.
//   * Normal tokens: through matching token references and, in parallel, as their bytes; the
//     new state is the union. Bytes are matched exactly (a token holding 0xF5-0xFF or starting
//     with NUL is matched like any other bytes, where llama.cpp refuses it by quirk).
// A token whose step exceeds max_state_size is refused by the masks (AcceptToken throws
// LimitError for it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gbnf_sampler/compiled_grammar.h"
#include "gbnf_sampler/matcher.h"

namespace gbnf {

namespace detail {
class FillAhead;  // csrc/mask/fill_ahead.h
}

class TokenMatcher {
 public:
  explicit TokenMatcher(std::shared_ptr<const CompiledGrammar> compiled);
  ~TokenMatcher();
  TokenMatcher(TokenMatcher&&) noexcept;
  TokenMatcher& operator=(TokenMatcher&&) noexcept;

  // Atomic: false leaves the state unchanged. Throws VocabError for an id outside the vocabulary.
  bool AcceptToken(TokenId token_id);
  bool AcceptBytes(std::string_view bytes);
  bool CanTerminate() const { return matcher_.CanTerminate(); }
  bool IsTerminated() const { return matcher_.IsTerminated(); }
  // Undoes the last n accept calls (one per AcceptToken / AcceptBytes).
  void Rollback(size_t n);
  size_t RollbackAvailable() const { return matcher_.RollbackAvailable(); }
  // A copy that does not prefetch (forks are mostly probes: a draft's check, a brute-force test).
  TokenMatcher Fork() const;
  // The same without the rollback history (Matcher::ForkState).
  TokenMatcher ForkState() const;
  // Whether an accept hands the next fill's work to a background worker (on by default, when the
  // grammar was compiled with MaskCacheOptions::prefetch): the mask-cache entries it lacks, and
  // the whole mask when it is not a copy of cached entries (PrefetchNext).
  void set_prefetch(bool on) { prefetch_ = on; }
  bool prefetch() const { return prefetch_; }
  void Reset();
  std::string ForcedBytes() { return matcher_.ForcedBytes(); }

  // Writes the allowed-token bitmask into words[0, num_words) (the layout of bitmask.h; bits of
  // ids >= vocab size are 0). num_words must be >= MaskWords(). Uses the mask cache;
  // allocates nothing and takes no lock once every state it meets has been cached.
  void FillMask(uint32_t* words, size_t num_words);
  // The same mask computed by a walk over the whole token trie (the reference of FillMask).
  void FillMaskReference(uint32_t* words, size_t num_words);
  std::vector<TokenId> AllowedTokens();
  size_t MaskWords() const;
  // FillMask will only copy cached entries: every live state's entry is filled and at most a
  // few tokens depend on the context (the bindings keep the GIL for such a fill).
  bool FillIsCached() const;

  const CompiledGrammar& compiled() const { return *compiled_; }
  const std::shared_ptr<const CompiledGrammar>& compiled_ptr() const { return compiled_; }
  const Matcher& byte_matcher() const { return matcher_; }
  // Live parser items (Matcher::StateSize).
  size_t StateSize() const { return matcher_.StateSize(); }
  // The automaton states of the live parser items (diagnostics, tests and benchmarks).
  std::vector<StateId> ItemStates() const;
  // Matcher::RuleStacks of the byte-level state.
  std::vector<std::vector<std::string>> RuleStacks(size_t limit) const {
    return matcher_.RuleStacks(limit);
  }

 private:
  struct Scratch;  // per-matcher buffers of the mask fill (token_matcher.cc)

  TokenMatcher(std::shared_ptr<const CompiledGrammar> compiled, Matcher matcher);
  void CheckRow(size_t num_words) const;
  void BeginMask(uint32_t* words, size_t num_words);
  void AddEosBits(uint32_t* words);
  // Clears the tokens the max_whitespace bound refuses after the current run.
  void ApplyWhitespaceBound(uint32_t* words) const;
  // Clears the tokens the matcher refuses in a "#@ distinct-items" array (closing a copy of an
  // earlier item, or settling one): a trial scan of each token that could, then the exact
  // accept test (the state left as it was) for those that may.
  void ApplyDistinctItems(uint32_t* words);
  template <typename Check>
  void ApplyToStringItem(uint32_t* words, const Check& check);
  void AddTokenRefBits(uint32_t* words);
  // Writes all of words[0, num_words): the cached entries' bits (the first bitset entry copied,
  // the others OR-ed in) and the context-dependent tokens that pass a walk.
  void WriteCachedBits(uint32_t* words, size_t num_words);
  // After an accept: hands the mask-cache entries the next fill needs and lacks to a background
  // worker (CacheCore::Prefetch) and, unless the fill will only copy cached entries, the whole
  // next mask, filled on a fork (FillAhead). Reads only the filled entries' pointers when the
  // next fill is cheap.
  void PrefetchNext();
  // Context-dependent tokens (walked from the full state) a fill from cached entries may have
  // and still count as cheap: the GIL kept (FillIsCached).
  static constexpr size_t kMaxCheapDependent = 32;
  // ... and still be filled by the matcher itself, not ahead on a worker (a walk of 256 tokens
  // costs a few microseconds, about what the copy of the state and the hand-off cost).
  static constexpr size_t kFillAheadDependent = 256;
  // The mask filled ahead for this state, if a worker has it (or soon will): written to words.
  bool TakeMaskFilledAhead(uint32_t* words, size_t num_words);

  std::shared_ptr<const CompiledGrammar> compiled_;
  Matcher matcher_;
  std::unique_ptr<Scratch> scratch_;
  bool prefetch_ = true;
  uint64_t generation_ = 0;  // counts the calls that may change the state
  std::shared_ptr<detail::FillAhead> ahead_;  // the next mask, filled on a worker
};

}  // namespace gbnf
