#include "mask/loop_bytes.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "support/utf8.h"

namespace gbnf::detail {

bool LoopFinder::SameShape(ConfigWalker& walker, int32_t a, int32_t b) {
  if (a == b) return true;
  if (a < 0 || b < 0 || walker.StatesKey(a) != walker.StatesKey(b)) return false;
  return walker.ShapeOf(a) == walker.ShapeOf(b);
}

int32_t& LoopFinder::SlotOf(std::vector<int32_t>* slots, uint32_t id) {
  if (id >= slots->size()) slots->resize(id + 1, -1);
  return (*slots)[id];
}

const LoopBytes* LoopFinder::Known(ConfigWalker& walker, uint32_t level) {
  const int32_t config = walker.config_at(level);
  int32_t& slot = SlotOf(&by_config_, static_cast<uint32_t>(config));
  // A shape is only worth computing when some loop bytes were found: else none can be known.
  if (slot < 0 && num_looping_ > 0) slot = SlotOf(&by_shape_, walker.ShapeOf(config));
  return slot < 0 ? nullptr : &found_[static_cast<size_t>(slot)];
}

void LoopFinder::Remember(ConfigWalker& walker, int32_t config, const LoopBytes& loops) {
  const auto slot = static_cast<int32_t>(found_.size());
  found_.push_back(loops);
  if (loops.any()) ++num_looping_;
  SlotOf(&by_config_, static_cast<uint32_t>(config)) = slot;
  SlotOf(&by_shape_, walker.ShapeOf(config)) = slot;
}

LoopBytes LoopFinder::At(ConfigWalker& walker, uint32_t level) {
  if (const LoopBytes* known = Known(walker, level)) return *known;
  const int32_t config = walker.config_at(level);
  const LoopBytes loops = Find(walker, level);
  Remember(walker, config, loops);
  return loops;
}

// The configuration `config` steps to over `byte`, where `path` leads from `level` to `config`:
// from the memo, or by a step of the walker along the path (which fills the memo); a negative
// value when refused (kRefused), or when outside the memo, past max_state_size or deeper than the
// walker's levels (another negative value).
int32_t LoopFinder::StepFrom(ConfigWalker& walker, uint32_t level, int32_t config,
                             std::string_view path, uint8_t byte) {
  int32_t next = walker.Peek(config, byte);
  if (next != ConfigWalker::kNotStepped) return next;
  if (level + path.size() + 1 > walker.max_level()) return ConfigWalker::kNotStepped;  // no room
  step_.assign(path.begin(), path.end());
  step_.push_back(static_cast<char>(byte));
  if (walker.Extend(level, step_) != step_.size()) {
    // A step past max_state_size is no refusal: the per-step walk decides those tokens.
    return walker.limited() ? ConfigWalker::kNotStepped : ConfigWalker::kRefused;
  }
  return walker.config_at(level + static_cast<uint32_t>(step_.size()));
}

template <typename Ends>
bool LoopFinder::MultiByteTaken(ConfigWalker& walker, uint32_t level, std::string_view path,
                                int32_t from, Ends&& ends) {
  struct Frame {
    int32_t config;
    Utf8State state;
    uint32_t next;  // the next byte to try, up to `last`
    uint32_t last;
    char path[4];  // the bytes from `from` to `config`
    uint32_t path_size;
  };
  seen_.clear();
  std::vector<Frame> stack;
  std::string full;
  const ByteRange leads = Utf8NextBytes(kUtf8Start);
  stack.push_back({from, kUtf8Start, leads.lo, leads.hi, {}, 0});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next > top.last) {
      stack.pop_back();
      continue;
    }
    const auto byte = static_cast<uint8_t>(top.next++);
    const Utf8State next = Utf8Next(top.state, byte);
    int32_t config = walker.Peek(top.config, byte);
    if (config == ConfigWalker::kNotStepped) {  // the walker steps along the whole path
      full.assign(path.begin(), path.end());
      full.append(top.path, top.path_size);
      config = StepFrom(walker, level, top.config, full, byte);
    }
    if (config < 0) return false;
    if (next == kUtf8Start) {
      if (!ends(config)) return false;
      continue;
    }
    if (walker.IsComplete(config)) completes_inside_ = true;
    const std::pair<int32_t, uint8_t> pair(config, next);
    if (std::find(seen_.begin(), seen_.end(), pair) != seen_.end()) continue;
    if (seen_.size() >= kMaxLoopPairs) return false;
    seen_.push_back(pair);
    const ByteRange range = Utf8NextBytes(next);
    Frame deeper{config, next, range.lo, range.hi, {}, top.path_size + 1};
    std::copy(top.path, top.path + top.path_size, deeper.path);
    deeper.path[top.path_size] = static_cast<char>(byte);
    stack.push_back(deeper);
  }
  return true;
}

// Whether `last` (reached from `level` over chain_path_) refuses every byte the chain takes
// (the lead bytes of multi-byte characters too, when it takes those).
bool LoopFinder::EndRefuses(ConfigWalker& walker, uint32_t level, const LoopBytes& chain,
                            int32_t last) {
  for (uint32_t b = 0; b < 256; ++b) {
    const bool taken = b < 128 ? ((chain.ascii[b >> 6] >> (b & 63)) & 1) != 0
                               : chain.non_ascii && b >= 0xC2 && b <= 0xF4;
    if (!taken) continue;
    const int32_t next = StepFrom(walker, level, last, chain_path_, static_cast<uint8_t>(b));
    if (next != ConfigWalker::kRefused) return false;  // taken, or not known
  }
  return true;
}

// Follows the chain link by link: from each configuration, every byte of the class must step to
// one next configuration (the same for all), and the multi-byte characters there too while they
// keep doing so (else non_ascii is dropped for the whole chain).
LoopBytes LoopFinder::FindChain(ConfigWalker& walker, uint32_t level, const int32_t* next) {
  LoopBytes out;
  int32_t sorted[128];
  std::copy(next, next + 128, sorted);
  std::sort(sorted, sorted + 128);
  int32_t first = -1;  // the configuration most ASCII bytes step to
  size_t best = 0;
  for (size_t i = 0, j = 0; i < 128; i = j) {
    for (j = i; j < 128 && sorted[j] == sorted[i]; ++j) {
    }
    if (sorted[i] >= 0 && j - i > best) {
      best = j - i;
      first = sorted[i];
    }
  }
  // A literal (one byte, or a few) is no repetition worth following.
  if (first < 0 || best < kMinChainBytes) return out;
  uint8_t rep = 0;
  for (uint32_t b = 128; b-- > 0;) {
    if (next[b] != first) continue;
    out.ascii[b >> 6] |= uint64_t{1} << (b & 63);
    rep = static_cast<uint8_t>(b);  // the lowest byte of the class steps the chain along
  }
  const int32_t start = walker.config_at(level);
  chain_.assign(1, start);
  chain_path_.clear();
  completes_inside_ = false;
  int32_t link = first;  // where every byte of the class steps the chain's last configuration
  out.non_ascii = MultiByteTaken(walker, level, chain_path_, start,
                                 [&](int32_t c) { return c == link; });
  // No token is longer than the walker's levels: the chain is followed while a character of
  // up to 4 bytes still fits after it.
  const uint32_t room = static_cast<uint32_t>(walker.max_level()) - level;
  while (chain_.size() + 4 <= std::min(kMaxChain, room)) {
    const int32_t from = link;
    chain_.push_back(from);
    chain_path_.push_back(static_cast<char>(rep));
    const int32_t to = StepFrom(walker, level, from, chain_path_, rep);
    bool same = to >= 0;
    for (uint32_t b = 0; b < 128 && same; ++b) {
      if (((out.ascii[b >> 6] >> (b & 63)) & 1) == 0) continue;
      int32_t step = walker.Peek(from, static_cast<uint8_t>(b));
      if (step == ConfigWalker::kNotStepped) {
        step = StepFrom(walker, level, from, chain_path_, static_cast<uint8_t>(b));
      }
      same = step == to;
    }
    if (!same) break;
    if (out.non_ascii) {
      out.non_ascii = MultiByteTaken(walker, level, chain_path_, from,
                                     [&](int32_t c) { return c == to; });
    }
    if (SameShape(walker, to, from)) {
      // The count is over and the bytes loop from here on: no budget (any longer string of
      // them is taken too).
      out.budget = LoopBytes::kUnbounded;
      out.longer_refused = false;
      return out;
    }
    const uint32_t held = static_cast<uint32_t>(chain_.size());  // `to` is held[-th] character
    const uint32_t more = room > held ? TwinLinks(walker, from, to, room - held) : 0;
    if (more > 0) {
      // Where the chain stops is not known: a longer string is walked, not refused.
      out.budget = held + more;
      out.longer_refused = false;
      for (size_t i = 1; i < chain_.size(); ++i) {
        LoopBytes rest = out;
        rest.budget = out.budget - static_cast<uint32_t>(i);
        if (SlotOf(&by_config_, static_cast<uint32_t>(chain_[i])) < 0) {
          Remember(walker, chain_[i], rest);
        }
      }
      return out;
    }
    link = to;
  }
  // chain_ holds the configurations from the start on; all but the last step to the next.
  out.budget = static_cast<uint32_t>(chain_.size() - 1);
  const bool end_refuses = EndRefuses(walker, level, out, chain_.back());
  // completes_after[i]: a configuration after chain_[i] may end the invocation.
  std::vector<uint8_t> completes_after(chain_.size(), 0);
  for (size_t i = chain_.size() - 1; i-- > 0;) {
    completes_after[i] = static_cast<uint8_t>(completes_after[i + 1] |
                                              (walker.IsComplete(chain_[i + 1]) ? 1 : 0));
  }
  out.longer_refused = end_refuses && !completes_inside_ && completes_after[0] == 0;
  for (size_t i = 1; i + 1 < chain_.size(); ++i) {
    LoopBytes rest = out;
    rest.budget = out.budget - static_cast<uint32_t>(i);
    rest.longer_refused = end_refuses && !completes_inside_ && completes_after[i] == 0;
    if (SlotOf(&by_config_, static_cast<uint32_t>(chain_[i])) < 0) {
      Remember(walker, chain_[i], rest);
    }
  }
  return out;
}

// A count's next copies: when `to` is `from` moved up by P states (its items the same but one
// copy further inside a count), the step from to + (j - 1)P over a character is the step from
// to + (j - 2)P moved up, as long as the states of to + (j - 1)P are the twins of those P lower
// within kTwinStepRadius bytes (period_twins.cc: the automaton around the two is the same
// shifted, and a character's step reads no further than its bytes). The links so vouched for,
// at most `limit`; the walk would have held their configurations, so their states count as met
// (the shared cache's key covers them).
uint32_t LoopFinder::TwinLinks(ConfigWalker& walker, int32_t from, int32_t to, uint32_t limit) {
  const StateId shift = walker.ItemsShift(from, to);
  if (shift == 0) return 0;
  walker.ItemStates(to, &twin_states_);
  const Automaton& automaton = walker.automaton();
  uint32_t links = 0;
  while (links < limit) {
    for (StateId s : twin_states_) {
      if (automaton.TwinOf(s, kTwinStepRadius) != s - shift) return links;
    }
    ++links;
    for (StateId& s : twin_states_) s += shift;
    walker.NoteStatesMet(twin_states_);
  }
  return links;
}

LoopBytes LoopFinder::Find(ConfigWalker& walker, uint32_t level) {
  LoopBytes out;
  const int32_t start = walker.config_at(level);
  int32_t next[128];
  for (uint32_t b = 0; b < 128; ++b) {
    next[b] = StepFrom(walker, level, start, std::string_view(), static_cast<uint8_t>(b));
    if (next[b] >= 0 && SameShape(walker, next[b], start)) {
      out.ascii[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  out.non_ascii = MultiByteTaken(walker, level, std::string_view(), start,
                                 [&](int32_t c) { return SameShape(walker, c, start); });
  if (!out.any()) out = FindChain(walker, level, next);
  walker.Extend(level, std::string_view());
  return out;
}

}  // namespace gbnf::detail
