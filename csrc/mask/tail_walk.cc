// LoopWalk's classification of a state that loops on a class of characters by the tails of the
// tokens outside the class (loop_walk.h, TokenTrie::TailList). In a JSON string body the ~5,000
// tokens of Llama-3 that hold a quote, a backslash or a control byte have a few thousand
// distinct tails, most refused at their first byte or two after the closing quote: the tries of
// tails are stepped a few hundred times where the token trie's walk read each of those tokens.
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "mask/loop_walk.h"
#include "support/utf8.h"

namespace gbnf::detail {

// The configuration `config` (held by the walker at `level`) steps over `byte` to: the memo's
// answer, or a step taken now (the memo then answers for every byte the items treat alike).
int32_t LoopWalk::StepOf(int32_t config, uint32_t level, uint8_t byte) {
  const int32_t known = walker_.Peek(config, byte);
  if (known != ConfigWalker::kNotStepped) return known;
  const char c = static_cast<char>(byte);
  if (walker_.Extend(level, std::string_view(&c, 1)) != 1) return ConfigWalker::kRefused;
  return walker_.config_at(level + 1);
}

bool LoopWalk::CharactersReturn(uint32_t level, uint8_t utf8, int32_t target,
                                std::vector<std::pair<uint8_t, int32_t>>* seen) {
  const int32_t from = walker_.config_at(level);
  const auto state = static_cast<Utf8State>(utf8);
  const ByteRange next_bytes = Utf8NextBytes(state);
  // Inside a character every valid next byte leads to one UTF-8 state; from the start, the lead
  // byte says how many follow.
  const Utf8State inside = state == kUtf8Start ? kUtf8Invalid : Utf8Next(state, next_bytes.lo);
  for (uint32_t b = next_bytes.lo; b <= next_bytes.hi; ++b) {
    const Utf8State next =
        state == kUtf8Start ? Utf8Next(state, static_cast<uint8_t>(b)) : inside;
    if (next == kUtf8Invalid) continue;
    const int32_t config = StepOf(from, level, static_cast<uint8_t>(b));
    if (next == kUtf8Start) {
      if (config != target) return false;
      continue;
    }
    if (config < 0 || walker_.IsComplete(config)) return false;
    const std::pair<uint8_t, int32_t> node(static_cast<uint8_t>(next), config);
    if (std::find(seen->begin(), seen->end(), node) != seen->end()) continue;
    seen->push_back(node);
    const char c = static_cast<char>(b);
    if (walker_.Extend(level, std::string_view(&c, 1)) != 1) return false;  // hold it
    if (!CharactersReturn(level + 1, next, target, seen)) return false;
  }
  return true;
}

bool LoopWalk::CharactersLead(uint32_t level, int32_t target, const TokenTrie::ByteClass& cls,
                              std::vector<std::pair<uint8_t, int32_t>>* seen) {
  const int32_t from = walker_.config_at(level);
  if (from < 0) return false;
  for (uint32_t b = 0; b < 128; ++b) {
    if (((cls.ascii[b >> 6] >> (b & 63)) & 1) == 0) continue;
    if (StepOf(from, level, static_cast<uint8_t>(b)) != target) return false;
  }
  return !cls.non_ascii || CharactersReturn(level, kUtf8Start, target, seen);
}

// The runs inside [from, to) and the `taken` tails' positions (none in a run) as accepted runs,
// in position order.
void LoopWalk::AcceptRunsAndTails(const TokenTrie::ClassRuns& inside, size_t from, size_t to,
                                  std::vector<uint32_t>* taken) {
  std::sort(taken->begin(), taken->end());
  auto next_taken = taken->begin();
  const auto& runs = inside.runs;
  auto run = std::partition_point(runs.begin(), runs.end(),
                                  [from](const auto& r) { return r.second <= from; });
  for (; run != runs.end() && run->first < to; ++run) {
    const size_t first = std::max<size_t>(run->first, from);
    for (; next_taken != taken->end() && *next_taken < first; ++next_taken) {
      Accept(*next_taken, *next_taken + 1);
    }
    Accept(first, std::min<size_t>(run->second, to));
  }
  for (; next_taken != taken->end(); ++next_taken) Accept(*next_taken, *next_taken + 1);
}

// Walks the tails of `list` from the configuration the walker holds at `base`, keeping the
// results of the positions in [from, to) (every chunk walks the whole list: a few hundred steps,
// where filtering it would cut the trie of tails apart).
void LoopWalk::WalkTails(const TokenTrie::TailList& list, size_t from, size_t to, uint32_t base,
                         TailResults* out) {
  const std::vector<TokenTrie::ClassTail>& tails = list.tails;
  auto mine = [&](const TokenTrie::ClassTail& t) { return t.pos >= from && t.pos < to; };
  // As the token trie's walk (Run): the walker holds a prefix of the last tail it walked, and
  // `bound` is the smallest tail lcp since, so the walk keeps min(held, bound) bytes of it.
  uint32_t bound = 0;
  for (size_t i = 0; i < tails.size();) {
    if (i != 0) bound = std::min(bound, list.lcp[i]);
    const TokenTrie::ClassTail& t = tails[i];
    const std::string_view tail = trie_.bytes(t.pos).substr(t.start);
    const uint32_t keep = std::min(walker_.held() - base, bound);
    const size_t n = walker_.Extend(base + keep, tail.substr(keep));
    const uint32_t held = walker_.held() - base;
    bound = held;
    if (keep + n == tail.size()) {
      if (mine(t)) out->taken.push_back(t.pos);
      ++i;
      continue;
    }
    // The tails after this one that share its refused prefix (held + 1 bytes) share its fate.
    size_t j = i + 1;
    if (walker_.limited() || walker_.CompleteWithin(base + held)) {
      if (mine(t)) out->dependent.push_back(t.pos);
      for (; j < tails.size() && list.lcp[j] > held; ++j) {
        if (mine(tails[j])) out->dependent.push_back(tails[j].pos);
      }
    } else {
      while (j < tails.size() && list.lcp[j] > held) j = list.next_lower[j];
    }
    i = j;
  }
}

bool LoopWalk::WalkRunsAndTails(const TokenTrie::ClassRuns& inside,
                                const TokenTrie::ByteClass& cls, size_t from, size_t to) {
  // The configuration after one character of the class (the space, always in a listed class)
  // must be where every character leads, from the start and from itself, and may not complete.
  const char space = ' ';
  if (walker_.config_at(0) < 0 || walker_.IsComplete(walker_.config_at(0)) ||
      walker_.Extend(0, std::string_view(&space, 1)) != 1) {
    return false;
  }
  const int32_t loop = walker_.config_at(1);
  // (A configuration inside a character that leads to `loop` from one start does from both.)
  std::vector<std::pair<uint8_t, int32_t>> seen;
  if (loop < 0 || walker_.IsComplete(loop) || !CharactersLead(0, loop, cls, &seen)) return false;
  if (walker_.Extend(0, std::string_view(&space, 1)) != 1 ||
      !CharactersLead(1, loop, cls, &seen)) {
    return false;
  }
  TailResults results;
  WalkTails(inside.bare_tails, from, to, 0, &results);
  walker_.Extend(0, std::string_view(&space, 1));  // the loop's configuration at level 1
  WalkTails(inside.prefixed_tails, from, to, 1, &results);
  AcceptRunsAndTails(inside, from, to, &results.taken);
  std::sort(results.dependent.begin(), results.dependent.end());
  for (uint32_t pos : results.dependent) AddRun(dependent_, pos, pos + 1);
  num_dependent_ += results.dependent.size();
  return true;
}

}  // namespace gbnf::detail
