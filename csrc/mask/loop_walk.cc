#include "mask/loop_walk.h"

#include <algorithm>
#include <string_view>

#include "mask/background.h"
#include "support/bits.h"
#include "support/utf8.h"

namespace gbnf::detail {
namespace {

// The characters of [p, end) when every byte is taken (and its non-ASCII bytes are valid UTF-8,
// from a boundary), else -1.
inline int64_t TailTaken(const LoopBytes& loops, const char* p, const char* end) {
  Utf8State utf8 = kUtf8Start;
  int64_t chars = 0;
  for (; p != end; ++p) {
    const auto b = static_cast<uint8_t>(*p);
    if (b < 0x80) {
      // (ASCII inside a multi-byte character is invalid UTF-8.)
      if (((loops.ascii[b >> 6] >> (b & 63)) & 1) == 0 || utf8 != kUtf8Start) return -1;
      ++chars;
      continue;
    }
    if (!loops.non_ascii) return -1;
    if (utf8 == kUtf8Start) ++chars;
    utf8 = Utf8Next(utf8, b);
    if (utf8 == kUtf8Invalid) return -1;
  }
  return chars;
}

// The lowest ASCII byte the loop bytes take; requires one.
inline uint8_t LowestByte(const LoopBytes& loops) {
  return loops.ascii[0] != 0 ? static_cast<uint8_t>(CountTrailingZeros(loops.ascii[0]))
                             : static_cast<uint8_t>(64 + CountTrailingZeros(loops.ascii[1]));
}

// Every byte the tokens below `pos` add is one the loop bytes take, whatever the budget.
inline bool BytesBelowTaken(const LoopBytes& loops, const TokenTrie& trie, size_t pos) {
  return trie.BelowOnly(pos, loops.ascii, loops.non_ascii);
}

// Every token below `pos` is taken whole, `used` characters after the loop bytes' start (given
// that the bytes up to pos are).
inline bool BelowTaken(const LoopBytes& loops, const TokenTrie& trie, size_t pos, uint64_t used) {
  return BytesBelowTaken(loops, trie, pos) &&
         (loops.budget == LoopBytes::kUnbounded ||
          used + trie.below_chars()[pos] <= loops.budget);
}

// TokenTrie::chars() and below_chars() stop counting here: a limit this high could let a longer
// token pass.
constexpr uint64_t kSaturatedChars = 255;

}  // namespace

size_t LoopWalk::TryCover(const Cover& cover, size_t pos, size_t to) {
  const std::string_view bytes = trie_.bytes(pos);  // longer than cover.depth: below the root
  const int64_t chars = TailTaken(cover.loops, bytes.data() + cover.depth,
                                  bytes.data() + bytes.size());
  if (chars < 0) return pos;  // a byte the loop bytes do not take: walked
  const size_t end = std::min<size_t>(trie_.subtree_end(pos), to);
  if (static_cast<uint64_t>(chars) > cover.loops.budget) {
    // Too long for the chain: refused inside bytes(pos), with its whole subtree.
    return cover.refuses_longer ? end : pos;
  }
  if (end - pos > 1) {
    if (BelowTaken(cover.loops, trie_, pos, static_cast<uint64_t>(chars))) {
      Accept(pos, end);
      return end;
    }
    if (cover.refuses_longer && cover.char_limit < kSaturatedChars &&
        BytesBelowTaken(cover.loops, trie_, pos)) {
      AcceptShort(pos, end, cover.char_limit);
      return end;
    }
  }
  Accept(pos, pos + 1);
  return pos + 1;
}

LoopWalk::Skip LoopWalk::SkipInside(Cover* cover, size_t pos, size_t to) {
  const TokenTrie::ClassRuns& inside = *cover->inside;
  size_t& r = cover->next_run;
  while (r < inside.runs.size() && inside.runs[r].second <= pos) ++r;
  if (r == inside.runs.size() || inside.runs[r].first > pos) return {pos, 0};
  // A bounded repetition takes the run only when no token of it is too long (else TryCover).
  if (cover->loops.budget != LoopBytes::kUnbounded &&
      (inside.max_chars[r] >= kSaturatedChars || inside.max_chars[r] > cover->char_limit)) {
    return {pos, 0};
  }
  const size_t end = std::min<size_t>({inside.runs[r].second, cover->end, to});
  Accept(pos, end);
  // The positions jumped over lie in the run and in the cover's subtree: their lcps are at
  // least the run's smallest and at least the root's length.
  return {end, std::max(inside.min_lcp[r], cover->depth)};
}

// The loop bytes as the trie's byte class.
TokenTrie::ByteClass LoopWalk::ClassOf(const LoopBytes& loops) {
  TokenTrie::ByteClass cls;
  cls.ascii[0] = loops.ascii[0];
  cls.ascii[1] = loops.ascii[1];
  cls.non_ascii = loops.non_ascii;
  return cls;
}

const TokenTrie::ClassRuns* LoopWalk::InsideOf(const LoopBytes& loops) {
  // Most tokens of a BPE vocabulary begin with a space: without it in the class (an
  // identifier's), the class's tokens come in short runs, and listing them (a pass over every
  // position, 1-3 ms on 128k-262k tokens, where a class with the space skips whole subtrees)
  // would cost more than the walks it spares.
  constexpr uint64_t kSpace = uint64_t{1} << ' ';
  if ((loops.ascii[0] & kSpace) == 0 ||
      PopCount(loops.ascii[0]) + PopCount(loops.ascii[1]) < kMinInsideBytes) {
    return nullptr;
  }
  const TokenTrie::ByteClass cls = ClassOf(loops);
  for (const auto& [seen, runs] : inside_) {
    if (seen == cls) return runs;
  }
  bool first = false;
  const TokenTrie::ClassRuns* runs = trie_.FindRunsInside(cls, &first);
  if (first) {
    // Built by a background worker (0.1-0.5 ms on 128k-262k tokens), never in a caller's
    // fill: this walk and those before the runs are there go without.
    BackgroundPool::Shared().AddTask(
        [vocab = trie_.vocab().shared_from_this(), cls] { vocab->trie().RunsInside(cls); });
  }
  inside_.emplace_back(cls, runs);
  return runs;
}

void LoopWalk::PushCover(Cover cover, size_t pos, bool root_taken) {
  // A root with bytes outside the class (the quote that opens a string body) leaves no token
  // below it in the class: its tails are scanned instead (TryCover).
  if (root_taken || TailTaken(cover.loops, trie_.bytes(pos).data(),
                              trie_.bytes(pos).data() + trie_.bytes(pos).size()) >= 0) {
    cover.inside = InsideOf(cover.loops);
  }
  if (cover.inside != nullptr) {
    const auto& runs = cover.inside->runs;
    // The enclosing cover of the same class has passed the runs before its position already.
    const size_t first = !covers_.empty() && covers_.back().inside == cover.inside
                             ? covers_.back().next_run
                             : 0;
    cover.next_run = static_cast<size_t>(
        std::partition_point(runs.begin() + static_cast<std::ptrdiff_t>(first), runs.end(),
                             [pos](const std::pair<uint32_t, uint32_t>& run) {
                               return run.second <= pos;
                             }) -
        runs.begin());
  }
  covers_.push_back(cover);
}

// Accepts `pos` and the positions in (pos, end) with at most `limit` characters; a longer
// position's subtree is all longer (TokenTrie I3) and is jumped over.
void LoopWalk::AcceptShort(size_t pos, size_t end, uint64_t limit) {
  const uint8_t* chars = trie_.chars();
  const uint8_t* below = trie_.below_chars();
  size_t run = pos;  // positions [run, q) are accepted
  size_t q = pos + 1;
  while (q < end) {
    if (chars[q] + uint64_t{below[q]} <= limit) {  // q's whole subtree is short enough
      q = std::min<size_t>(trie_.subtree_end(q), end);
    } else if (chars[q] <= limit) {
      ++q;
    } else {
      if (q > run) Accept(run, q);
      q = trie_.subtree_end(q);
      run = q;
    }
  }
  if (run < end) Accept(run, end);
}

size_t LoopWalk::AfterTaken(size_t pos, size_t to) {
  const size_t end = std::min<size_t>(trie_.subtree_end(pos), to);
  const auto depth = static_cast<uint32_t>(trie_.bytes(pos).size());
  if (end - pos > kMinJump && walker_.config_at(depth) >= 0 &&
      (trie_.byte_flags()[pos] & TokenTrie::kEndsInsideChar) == 0) {
    const LoopBytes* known = loops_.Known(walker_, depth);
    LoopBytes found;
    if (known == nullptr && end - pos > kMinFind &&
        walker_.WidestByteRange(walker_.config_at(depth)) >= kMinChainBytes) {
      found = loops_.At(walker_, depth);
      known = &found;
    }
    if (known != nullptr && known->any()) {
      if (BelowTaken(*known, trie_, pos, 0)) {
        Accept(pos, end);
        return end;
      }
      // A chain's bytes all the way down, some tokens too long: the others are refused.
      const bool refuses_longer = known->longer_refused && !walker_.CompleteWithin(depth);
      const uint64_t char_limit = trie_.chars()[pos] + uint64_t{known->budget};
      if (refuses_longer && char_limit < kSaturatedChars &&
          BytesBelowTaken(*known, trie_, pos)) {
        AcceptShort(pos, end, char_limit);
        return end;
      }
      PushCover({end, depth, *known, refuses_longer, char_limit}, pos, false);
    }
  }
  Accept(pos, pos + 1);
  return pos + 1;
}

// A state inside a loop (a string body, a comment) takes every token made of its loop bytes:
// with the trie's runs of that class, the walk jumps over them from the start and walks only
// the others (in a JSON string body, the few thousand tokens with a quote, a backslash or a
// control byte of 128k-262k).
bool LoopWalk::CoverTheStart(size_t from, size_t to) {
  // (A class of kMinInsideBytes bytes has a wide edge: narrower ones are not searched.)
  if (to - from <= kMinFind || walker_.config_at(0) < 0 ||
      walker_.WidestByteRange(walker_.config_at(0)) < kMinInsideBytes / 2) {
    return false;
  }
  // Only a class with the space is listed (InsideOf): a state that refuses it needs no search
  // (a step the walk takes anyway, for the tokens that begin with a space).
  const char space = ' ';
  if (walker_.Extend(0, std::string_view(&space, 1)) != 1) return false;
  const LoopBytes loops = loops_.At(walker_, 0);
  const TokenTrie::ClassRuns* inside = loops.any() ? InsideOf(loops) : nullptr;
  if (inside == nullptr) return false;
  // The loop bytes may be a first character's, with more bytes looping after it (an identifier
  // after the letters that start no keyword): the cover would walk every token with those
  // (they are not in the class) where the walk from the first character jumps over them.
  const auto first = static_cast<char>(LowestByte(loops));
  if (walker_.Extend(0, std::string_view(&first, 1)) != 1) return false;
  const LoopBytes after = loops_.At(walker_, 1);
  const bool counted_on = loops.budget != LoopBytes::kUnbounded && after.budget + 1 == loops.budget;
  if (after.ascii[0] != loops.ascii[0] || after.ascii[1] != loops.ascii[1] ||
      after.non_ascii != loops.non_ascii || (after.budget != loops.budget && !counted_on)) {
    return false;
  }
  if (loops.budget == LoopBytes::kUnbounded) {
    if (WalkRunsAndTails(*inside, ClassOf(loops), from, to)) return true;
  }
  // (Refusing the longer strings of a count is left to the walk.)
  PushCover({to, 0, loops, false, loops.budget}, from, true);
  return false;
}

// The walker holds a prefix of the last token it walked; `bound` is the longest common prefix of
// that token and the one at `pos` (TokenTrie I2: the smallest lcp since), so the walk keeps
// min(held, bound) bytes. Positions jumped over, covered or refused, have lcps no smaller;
// a run of a class list lowers `bound` to its smallest lcp (SkipInside).
std::pair<size_t, size_t> LoopWalk::Run(size_t from, size_t to) {
  uint32_t held = 0;
  uint32_t bound = 0;
  if (CoverTheStart(from, to)) return {num_accepted_, num_dependent_};
  for (size_t pos = from; pos < to;) {
    if (pos != from) bound = std::min(bound, trie_.lcp(pos));
    while (!covers_.empty() && pos >= covers_.back().end) covers_.pop_back();
    if (!covers_.empty()) {
      Cover& cover = covers_.back();
      size_t next = pos;
      if (cover.inside != nullptr) {
        const Skip skip = SkipInside(&cover, pos, to);
        next = skip.next;
        if (next != pos) bound = std::min(bound, skip.lcp);
      }
      // (A loop's class list holds every token the cover takes; a count's may leave some.)
      if (next == pos && (cover.inside == nullptr ||
                          cover.loops.budget != LoopBytes::kUnbounded)) {
        next = TryCover(cover, pos, to);
      }
      if (next != pos) {
        pos = next;
        continue;
      }
    }
    const std::string_view bytes = trie_.bytes(pos);
    const uint32_t keep = std::min(held, bound);
    const size_t n = walker_.Extend(keep, bytes.substr(keep));
    held = bound = static_cast<uint32_t>(keep + n);
    if (keep + n == bytes.size()) {
      pos = AfterTaken(pos, to);
      continue;
    }
    const size_t next = std::min(trie_.NextDiverging(pos, held + 1), to);
    if (walker_.limited() || walker_.CompleteWithin(held)) {
      // Every token up to `next` starts with the refused prefix: all of them share its fate.
      AddRun(dependent_, pos, next);
      num_dependent_ += next - pos;
    }
    pos = next;
  }
  return {num_accepted_, num_dependent_};
}

}  // namespace gbnf::detail
