#include "mask/state_mask.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "mask/config_walker.h"
#include "mask/loop_walk.h"
#include "mask/prefix_walker.h"
#include "mask/trie_range.h"

namespace gbnf::detail {
namespace {

// The reference classification walk over [from, to) (the fast path is LoopWalk's): accepted ids
// into `accepted` (a bitset over the vocabulary), dependent positions into `dependent` (a bitset
// over the trie); returns the two counts.
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
        SetBitRange(dependent, skip_from, skip_to);
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
  out->accepted.clear();
  out->dependent.clear();
  const auto [num_accepted, num_dependent] =
      LoopWalk(walker, trie, &out->accepted, &out->dependent).Run(from, to);
  out->num_accepted = num_accepted;
  out->num_dependent = num_dependent;
  out->states_met = walker.states_met();
  walker.End();
}

namespace {

// The positions of `runs` (`count` of them) as a set over the trie.
TokenSet PositionSet(const PositionRuns& runs, size_t count, size_t universe) {
  if (count * kWordBits < universe) {
    std::vector<uint32_t> list;
    list.reserve(count);
    for (const auto& [first, last] : runs) {
      for (uint32_t p = first; p < last; ++p) list.push_back(p);
    }
    return TokenSet(list, universe);
  }
  std::vector<uint32_t> bits(WordsFor(universe), 0);
  for (const auto& [first, last] : runs) SetBitRange(bits.data(), first, last);
  return TokenSet(std::move(bits), count, universe);
}

// Up to this many ids are sorted into a list; more are set in a bitset (that TokenSet may still
// turn into a list: a sort costs more than a scan of the words then).
constexpr size_t kMaxSortedIds = 256;

// The token ids at the positions of `runs` (`count` of them) as a set over the vocabulary: a
// sorted list when very few, else a bitset written from the positions or, when most positions
// are in, from the trie's tokens minus those of the positions left out (the fewer scattered
// writes).
TokenSet TokenIdSet(const PositionRuns& runs, size_t count, const TokenTrie& trie) {
  const size_t v = trie.vocab().size();
  if (count <= kMaxSortedIds && count * kWordBits < v) {
    std::vector<uint32_t> ids;
    ids.reserve(count);
    for (const auto& [first, last] : runs) {
      for (uint32_t p = first; p < last; ++p) {
        ids.push_back(static_cast<uint32_t>(trie.token_id(p)));
      }
    }
    std::sort(ids.begin(), ids.end());
    return TokenSet(ids, v);
  }
  if (count * 2 <= trie.size()) {
    std::vector<uint32_t> bits(WordsFor(v), 0);
    for (const auto& [first, last] : runs) {
      for (uint32_t p = first; p < last; ++p) SetBit(bits.data(), trie.token_id(p));
    }
    return TokenSet(std::move(bits), count, v);
  }
  std::vector<uint32_t> bits = trie.trie_token_words();
  uint32_t next = 0;  // positions before `next` are done
  auto clear_upto = [&](uint32_t end) {
    for (; next < end; ++next) ClearBit(bits.data(), trie.token_id(next));
  };
  for (const auto& [first, last] : runs) {
    clear_upto(first);
    next = last;
  }
  clear_upto(static_cast<uint32_t>(trie.size()));
  return TokenSet(std::move(bits), count, v);
}

}  // namespace

StateMask MergeParts(std::vector<StateMaskPart>& parts, const TokenTrie& trie) {
  PositionRuns accepted;
  PositionRuns dependent;
  size_t num_accepted = 0;
  size_t num_dependent = 0;
  for (StateMaskPart& part : parts) {
    accepted.insert(accepted.end(), part.accepted.begin(), part.accepted.end());
    dependent.insert(dependent.end(), part.dependent.begin(), part.dependent.end());
    num_accepted += part.num_accepted;
    num_dependent += part.num_dependent;
  }
  StateMask out;
  out.accepted = TokenIdSet(accepted, num_accepted, trie);
  out.dependent = PositionSet(dependent, num_dependent, trie.size());
  return out;
}

StateMask ClassifyStateFast(const std::shared_ptr<const Automaton>& automaton,
                            const TokenTrie& trie, StateId state, uint32_t max_state_size) {
  std::vector<StateMaskPart> parts(1);
  ClassifyRange(automaton, trie, state, max_state_size, 0, trie.size(), &parts[0]);
  return MergeParts(parts, trie);
}

}  // namespace gbnf::detail
