#include "mask/state_mask.h"

#include <algorithm>
#include <vector>

#include "mask/prefix_walker.h"

namespace gbnf::detail {
namespace {

void AddRange(std::vector<uint32_t>& out, size_t from, size_t to) {
  for (size_t p = from; p < to; ++p) out.push_back(static_cast<uint32_t>(p));
}

}  // namespace

StateMask ClassifyState(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                        StateId state, uint32_t max_state_size) {
  Parser parser(automaton, max_state_size);
  parser.ResetIsolated(state);
  PrefixWalker walker;
  walker.Begin(&parser, trie.vocab().max_token_length());
  std::vector<uint32_t> accepted, dependent;
  TrieWalk w(trie);
  while (!w.Done()) {
    std::string_view add = w.push();
    const size_t pos = w.position();
    size_t n = walker.Extend(w.keep(), add);
    if (n == add.size()) {
      accepted.push_back(static_cast<uint32_t>(w.token_id()));
      w.Next();
      continue;
    }
    const uint32_t taken = static_cast<uint32_t>(w.keep() + n);
    const bool dependent_run = walker.limited() || walker.CompleteWithin(taken);
    w.Reject(taken);
    // Every skipped token starts with the refused prefix: all of them share this one's fate.
    if (dependent_run) AddRange(dependent, pos, w.Done() ? trie.size() : w.position());
  }
  walker.End();
  std::sort(accepted.begin(), accepted.end());
  StateMask out;
  out.accepted = TokenSet(accepted, trie.vocab().size());
  out.dependent = TokenSet(dependent, trie.size());
  return out;
}

}  // namespace gbnf::detail
