#include "mask/state_mask.h"

#include <vector>

#include "mask/prefix_walker.h"
#include "mask/trie_bytes.h"

namespace gbnf::detail {
namespace {

void AddRange(std::vector<uint32_t>& out, size_t from, size_t to) {
  for (size_t p = from; p < to; ++p) out.push_back(static_cast<uint32_t>(p));
}

}  // namespace

StateMask ClassifyState(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                        const TrieBytes& tb, StateId state, uint32_t max_state_size) {
  Recognizer recognizer(automaton, max_state_size);
  recognizer.ResetIsolated(state);
  PrefixWalker walker;
  walker.Begin(&recognizer, trie.vocab().max_token_length());
  std::vector<uint32_t> accepted(WordsFor(trie.vocab().size()), 0), dependent;
  size_t num_accepted = 0;
  bool dependent_run = false;
  WalkTrie(
      trie, tb,
      [&](size_t pos, uint32_t keep, std::string_view add) {
        const size_t n = walker.Extend(keep, add);
        if (n == add.size()) {
          SetBit(accepted.data(), static_cast<uint32_t>(trie.token_id(pos)));
          ++num_accepted;
          return n;
        }
        dependent_run =
            walker.limited() || walker.CompleteWithin(static_cast<uint32_t>(keep + n));
        if (dependent_run) dependent.push_back(static_cast<uint32_t>(pos));
        return n;
      },
      // Every skipped token starts with the refused prefix: all of them share its fate.
      [&](size_t from, size_t to) {
        if (dependent_run) AddRange(dependent, from, to);
      });
  walker.End();
  StateMask out;
  out.accepted = TokenSet(std::move(accepted), num_accepted, trie.vocab().size());
  out.dependent = TokenSet(dependent, trie.size());
  return out;
}

}  // namespace gbnf::detail
