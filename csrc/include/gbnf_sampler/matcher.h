// The byte-level Matcher: one per generated sequence. It tracks every way the bytes accepted so
// far can be parsed by the grammar (an Earley-style set of items over a graph-structured stack),
// so ambiguity and left recursion cost polynomial time, and a configurable cap on the state size
// turns a pathological grammar into a LimitError instead of a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gbnf_sampler/automaton.h"

namespace gbnf {

// MatcherLimits::max_whitespace when whitespace runs are not bounded.
inline constexpr uint32_t kNoWhitespaceLimit = UINT32_MAX;

// Resource limits of one Matcher, with their defaults.
struct MatcherLimits {
  // Cap on the work of one byte step: parser items created plus stack entries created or visited
  // (limit name "max_state_size"). Unambiguous grammars stay in the tens; reaching the cap
  // throws LimitError and leaves the matcher as it was before the call.
  uint32_t max_state_size = 100000;
  // Accept calls that rollback() can undo (older history is dropped).
  uint32_t max_rollback = 256;
  // Memory of the rollback history (the parser items of the kept snapshots). Past it the oldest
  // snapshots are dropped, so a pathological grammar shortens the rollback depth instead of
  // holding max_rollback x max_state_size items.
  size_t max_history_bytes = size_t{16} << 20;
  // ForcedBytes() stops after this many bytes.
  uint32_t max_forced_bytes = 65536;
  // Longest run of consecutive whitespace bytes (space, tab, LF, CR) the text may hold; a byte
  // or token that would make a run longer is refused, and token masks leave such tokens out
  // (exact: the language loses only the texts with a longer run). kNoWhitespaceLimit: no bound.
  uint32_t max_whitespace = kNoWhitespaceLimit;
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Automaton> automaton, const MatcherLimits& limits = {});
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Advances over `bytes`. Atomic: on false (a byte the grammar does not allow here, or the
  // sequence already terminated) the state is exactly as before. Throws LimitError (state also
  // unchanged) when a step exceeds max_state_size.
  bool AcceptBytes(std::string_view bytes);
  // Ends the sequence; refused (false) unless CanTerminate().
  bool AcceptEos();
  // Crosses token-reference edges <[id]> / !<[id]> with `token_id` (text references need a
  // vocabulary and never match here). Atomic like AcceptBytes.
  bool AcceptTokenRef(uint32_t token_id);

  // Token level: advances over one vocabulary token, through the token-reference edges that
  // `token_id` matches and, when `match_bytes`, in parallel over the token's `bytes`; the new
  // state is the union. One history entry; atomic like AcceptBytes.
  bool AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes);
  // Token references resolved against a vocabulary: token_ids[node] for every kTokenRef node of
  // the grammar (-1: matches nothing). Kept by Fork().
  void SetTokenIds(std::shared_ptr<const std::vector<int64_t>> token_ids);

  // The bytes accepted so far are a complete sentence of the root rule.
  bool CanTerminate() const;
  bool IsTerminated() const;

  // Undoes the last n accept calls (AcceptBytes, AcceptEos, AcceptTokenRef). Throws
  // std::invalid_argument if n > RollbackAvailable().
  void Rollback(size_t n);
  size_t RollbackAvailable() const;

  // An independent copy sharing the immutable automaton.
  Matcher Fork() const;
  // A copy of the current state alone: no rollback history (max_rollback 0), so much cheaper
  // than Fork() when the history is long (a mask filled ahead on a worker).
  Matcher ForkState() const;
  // Back to the start of a sentence; history cleared.
  void Reset();
  // The longest byte string every continuation must start with (empty when there is a choice,
  // a token reference, or the sentence may end here). The state is unchanged.
  std::string ForcedBytes();
  // Live parser items (deterministic; for tests of pathological grammars).
  size_t StateSize() const;
  // Whitespace bytes at the end of the text so far (what max_whitespace counts).
  uint32_t WhitespaceRun() const;
  // The rule stacks active now, root first, one per live parse position that can take input
  // (distinct, at most `limit`; see detail::Recognizer::RuleStacks). For explanations.
  std::vector<std::vector<std::string>> RuleStacks(size_t limit) const;

  const Automaton& automaton() const;
  const MatcherLimits& limits() const;

 
  // The library's internal state (the recognizer and the history): an incomplete type outside
  // csrc/matcher/, reached by the token-level matcher through matcher/matcher_access.h.
  class Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  explicit Matcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gbnf
