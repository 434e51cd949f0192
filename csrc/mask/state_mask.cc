#include "mask/state_mask.h"

#include <vector>

#include "mask/config_walker.h"
#include "mask/prefix_walker.h"
#include "mask/trie_bytes.h"

namespace gbnf::detail {
namespace {

// The classification walk over [from, to) with either walker (same interface): accepted ids
// into `accepted` (a bitset over the vocabulary), dependent positions appended ascending.
template <typename Walker>
size_t Classify(Walker& walker, const TokenTrie& trie, const TrieBytes& tb, size_t from, size_t to,
                uint32_t* accepted, std::vector<uint32_t>* dependent) {
  size_t num_accepted = 0;
  bool dependent_run = false;
  WalkTrieRange(
      trie, tb, from, to,
      [&](size_t pos, uint32_t keep, std::string_view add) {
        const size_t n = walker.Extend(keep, add);
        if (n == add.size()) {
          SetBit(accepted, static_cast<uint32_t>(trie.token_id(pos)));
          ++num_accepted;
          return n;
        }
        dependent_run =
            walker.limited() || walker.CompleteWithin(static_cast<uint32_t>(keep + n));
        if (dependent_run) dependent->push_back(static_cast<uint32_t>(pos));
        return n;
      },
      // Every skipped token starts with the refused prefix: all of them share its fate.
      [&](size_t skip_from, size_t skip_to) {
        if (!dependent_run) return;
        for (size_t p = skip_from; p < skip_to; ++p) dependent->push_back(static_cast<uint32_t>(p));
      });
  return num_accepted;
}

}  // namespace

StateMask ClassifyState(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                        const TrieBytes& tb, StateId state, uint32_t max_state_size) {
  Recognizer recognizer(automaton, max_state_size);
  recognizer.ResetIsolated(state);
  PrefixWalker walker;
  walker.Begin(&recognizer, trie.vocab().max_token_length());
  std::vector<uint32_t> accepted(WordsFor(trie.vocab().size()), 0), dependent;
  const size_t num_accepted =
      Classify(walker, trie, tb, 0, trie.size(), accepted.data(), &dependent);
  walker.End();
  StateMask out;
  out.accepted = TokenSet(std::move(accepted), num_accepted, trie.vocab().size());
  out.dependent = TokenSet(dependent, trie.size());
  return out;
}

void ClassifyRange(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                   const TrieBytes& tb, StateId state, uint32_t max_state_size, size_t from,
                   size_t to, StateMaskPart* out) {
  Recognizer recognizer(automaton, max_state_size);
  recognizer.ResetIsolated(state);
  ConfigWalker walker;
  walker.Begin(&recognizer, trie.vocab().max_token_length());
  out->accepted.assign(WordsFor(trie.vocab().size()), 0);
  out->dependent.clear();
  out->num_accepted = Classify(walker, trie, tb, from, to, out->accepted.data(), &out->dependent);
  walker.End();
}

StateMask MergeParts(std::vector<StateMaskPart>& parts, const TokenTrie& trie) {
  const size_t v = trie.vocab().size();
  StateMask out;
  if (parts.empty()) {
    out.accepted = TokenSet(std::vector<uint32_t>(WordsFor(v), 0), 0, v);
    out.dependent = TokenSet(std::vector<uint32_t>{}, trie.size());
    return out;
  }
  std::vector<uint32_t> accepted = std::move(parts[0].accepted);
  size_t num_accepted = parts[0].num_accepted;
  std::vector<uint32_t> dependent = std::move(parts[0].dependent);
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::vector<uint32_t>& words = parts[i].accepted;
    for (size_t w = 0; w < words.size(); ++w) accepted[w] |= words[w];
    num_accepted += parts[i].num_accepted;
    dependent.insert(dependent.end(), parts[i].dependent.begin(), parts[i].dependent.end());
  }
  out.accepted = TokenSet(std::move(accepted), num_accepted, v);
  out.dependent = TokenSet(dependent, trie.size());
  return out;
}

StateMask ClassifyStateFast(const std::shared_ptr<const Automaton>& automaton,
                            const TokenTrie& trie, const TrieBytes& tb, StateId state,
                            uint32_t max_state_size) {
  std::vector<StateMaskPart> parts(1);
  ClassifyRange(automaton, trie, tb, state, max_state_size, 0, trie.size(), &parts[0]);
  return MergeParts(parts, trie);
}

}  // namespace gbnf::detail
