#include "mask/state_mask.h"

#include <utility>
#include <vector>

#include "mask/config_walker.h"
#include "mask/prefix_walker.h"
#include "mask/trie_range.h"

namespace gbnf::detail {
namespace {

// Sets bits [from, to).
void SetRange(uint32_t* words, size_t from, size_t to) {
  for (size_t p = from; p < to && BitInWord(p) != 0; ++p) SetBit(words, p);
  from = (from + kWordBits - 1) / kWordBits * kWordBits;
  for (; from + kWordBits <= to; from += kWordBits) words[WordOf(from)] = ~uint32_t{0};
  for (size_t p = from; p < to; ++p) SetBit(words, p);
}

// The classification walk over [from, to) with either walker (same interface): accepted ids into
// `accepted` (a bitset over the vocabulary), dependent positions into `dependent` (a bitset over
// the trie); returns the two counts.
template <typename Walker>
std::pair<size_t, size_t> Classify(Walker& walker, const TokenTrie& trie, size_t from, size_t to,
                                   uint32_t* accepted,
                                   uint32_t* dependent) {
  size_t num_accepted = 0;
  size_t num_dependent = 0;
  bool dependent_run = false;
  WalkTrieRange(
      trie, from, to,
      [&](size_t pos, uint32_t keep, std::string_view add) {
        const size_t n = walker.Extend(keep, add);
        if (n == add.size()) {
          SetBit(accepted, static_cast<uint32_t>(trie.token_id(pos)));
          ++num_accepted;
          return n;
        }
        dependent_run =
            walker.limited() || walker.CompleteWithin(static_cast<uint32_t>(keep + n));
        if (dependent_run) {
          SetBit(dependent, pos);
          ++num_dependent;
        }
        return n;
      },
      // Every skipped token starts with the refused prefix: all of them share its fate.
      [&](size_t skip_from, size_t skip_to) {
        if (!dependent_run) return;
        SetRange(dependent, skip_from, skip_to);
        num_dependent += skip_to - skip_from;
      });
  return {num_accepted, num_dependent};
}

}  // namespace

StateMask ClassifyState(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                        StateId state, uint32_t max_state_size) {
  Recognizer recognizer(automaton, max_state_size);
  recognizer.ResetIsolated(state);
  PrefixWalker walker;
  walker.Begin(&recognizer, trie.vocab().max_token_length());
  std::vector<uint32_t> accepted(WordsFor(trie.vocab().size()), 0);
  std::vector<uint32_t> dependent(WordsFor(trie.size()), 0);
  const auto [num_accepted, num_dependent] =
      Classify(walker, trie, 0, trie.size(), accepted.data(), dependent.data());
  walker.End();
  StateMask out;
  out.accepted = TokenSet(std::move(accepted), num_accepted, trie.vocab().size());
  out.dependent = TokenSet(std::move(dependent), num_dependent, trie.size());
  return out;
}

void ClassifyRange(const std::shared_ptr<const Automaton>& automaton, const TokenTrie& trie,
                   StateId state, uint32_t max_state_size, size_t from, size_t to,
                   StateMaskPart* out) {
  Recognizer recognizer(automaton, max_state_size);
  recognizer.ResetIsolated(state);
  ConfigWalker walker;
  walker.Begin(&recognizer, trie.vocab().max_token_length());
  out->accepted.assign(WordsFor(trie.vocab().size()), 0);
  out->dependent.assign(WordsFor(trie.size()), 0);
  const auto [num_accepted, num_dependent] =
      Classify(walker, trie, from, to, out->accepted.data(), out->dependent.data());
  out->num_accepted = num_accepted;
  out->num_dependent = num_dependent;
  walker.End();
}

StateMask MergeParts(std::vector<StateMaskPart>& parts, const TokenTrie& trie) {
  const size_t v = trie.vocab().size();
  StateMask out;
  std::vector<uint32_t> accepted, dependent;
  size_t num_accepted = 0;
  size_t num_dependent = 0;
  for (StateMaskPart& part : parts) {
    if (accepted.empty()) {
      accepted = std::move(part.accepted);
      dependent = std::move(part.dependent);
    } else {
      for (size_t w = 0; w < accepted.size(); ++w) accepted[w] |= part.accepted[w];
      for (size_t w = 0; w < dependent.size(); ++w) dependent[w] |= part.dependent[w];
    }
    num_accepted += part.num_accepted;
    num_dependent += part.num_dependent;
  }
  accepted.resize(WordsFor(v), 0);
  dependent.resize(WordsFor(trie.size()), 0);
  out.accepted = TokenSet(std::move(accepted), num_accepted, v);
  out.dependent = TokenSet(std::move(dependent), num_dependent, trie.size());
  return out;
}

StateMask ClassifyStateFast(const std::shared_ptr<const Automaton>& automaton,
                            const TokenTrie& trie, StateId state, uint32_t max_state_size) {
  std::vector<StateMaskPart> parts(1);
  ClassifyRange(automaton, trie, state, max_state_size, 0, trie.size(), &parts[0]);
  return MergeParts(parts, trie);
}

}  // namespace gbnf::detail
