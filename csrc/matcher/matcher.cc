// Matcher: the public face of the Earley recognizer, with atomic accepts, a bounded rollback
// history, fork, reset and forced bytes.
#include "gbnf_sampler/matcher.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcher/distinct_items.h"
#include "matcher/matcher_access.h"
#include "matcher/recognizer.h"
#include "support/whitespace.h"

namespace gbnf {

using detail::DistinctItems;
using detail::Gss;
using detail::IsWhitespaceByte;
using detail::Item;
using detail::Recognizer;

namespace {

// The orders in which the distinct-items searches try bytes, built once.
struct SearchOrder {
  uint8_t bytes[256];
  size_t count = 0;
  void Add(int b) { bytes[count++] = static_cast<uint8_t>(b); }
};

bool IsNumberByte(int b) {
  return (b >= '0' && b <= '9') || b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-';
}

// Inside a number item: the bytes that end the number first (one step decides), then digits
// from 9 down (a run of copies such as 1, 10, 100 goes on with 0), then the rest.
const SearchOrder& NumberOrder() {
  static const SearchOrder order = [] {
    SearchOrder o;
    for (int b = 0; b < 256; ++b) {
      if (!IsNumberByte(b)) o.Add(b);
    }
    for (int b = '9'; b >= '0'; --b) o.Add(b);
    for (char c : {'.', 'e', 'E', '+', '-'}) o.Add(c);
    return o;
  }();
  return order;
}

// At an item's start: every byte but whitespace and the containers' brackets (which the caller
// decides without a step).
const SearchOrder& ItemStartOrder() {
  static const SearchOrder order = [] {
    SearchOrder o;
    for (int b = 0; b < 256; ++b) {
      if (!IsWhitespaceByte(static_cast<uint8_t>(b)) && b != '[' && b != '{') o.Add(b);
    }
    return o;
  }();
  return order;
}

}  // namespace

class Matcher::Impl {
 public:
  Impl(std::shared_ptr<const Automaton> automaton, const MatcherLimits& limits)
      : recognizer_(std::move(automaton), limits.max_state_size),
        limits_(limits),
        ring_(size_t{limits.max_rollback} + 1) {
    if (!recognizer_.automaton().grammar().DistinctItemRules().empty()) distinct_.emplace();
    items_step_ = recognizer_.step();
  }
  // The state of `other` without its history (Matcher::ForkState).
  struct StateOnly {};
  Impl(const Impl& other, StateOnly)
      : recognizer_(other.recognizer_),
        limits_(other.limits_),
        terminated_(other.terminated_),
        ws_run_(other.ws_run_),
        distinct_(other.distinct_),
        items_step_(other.items_step_),
        ring_(1) {
    limits_.max_rollback = 0;
  }

  bool AcceptBytes(std::string_view bytes);
  bool AcceptEos();
  bool AcceptTokenRef(uint32_t token_id);
  bool AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes);
  // See MatcherAccess::ProbeTexts.
  void ProbeTexts(const std::vector<std::string_view>& texts, std::vector<size_t>* refused);
  // Whether AcceptToken would take the token; the state stays as it is (the mask filter's
  // exact test).
  bool TryToken(uint32_t token_id, std::string_view bytes) {
    return TokenStep(token_id, bytes, true, false);
  }
  void Rollback(size_t n);
  void Reset();
  std::string ForcedBytes();

  Recognizer recognizer_;
  MatcherLimits limits_;
  bool terminated_ = false;
  uint32_t ws_run_ = 0;  // whitespace bytes at the end of the accepted text
  // "#@ distinct-items" arrays (none: the grammar has no such rule).
  std::optional<DistinctItems> distinct_;
  // The recognizer step that produced the current items (its step() runs ahead after the
  // mask walks and ForcedBytes, which restore the items but not the counter).
  uint64_t items_step_ = 0;

  // The whitespace run after `bytes`, or false when it would exceed max_whitespace.
  bool FitsWhitespace(std::string_view bytes, uint32_t* run) const;

 private:
  struct Snapshot {
    std::vector<Item> items;
    bool complete = false;
    bool terminated = false;
    uint32_t ws_run = 0;
    uint64_t items_step = 0;
    DistinctItems::Mark distinct;
  };
  Snapshot& Slot(size_t i) { return ring_[(head_ + i) % ring_.size()]; }
  static size_t SlotBytes(const Snapshot& s) { return s.items.capacity() * sizeof(Item); }
  // Frees the memory of slot i (not a live snapshot any more).
  void ReleaseSlot(size_t i);
  // Drops the oldest snapshots until the history fits in max_history_bytes.
  void TrimHistory();
  void PushHistory();
  void RestoreFrom(const Snapshot& s);
  // Undoes the accept in progress (the newest snapshot) and forgets it.
  void AbortAccept();
  void CommitAccept();
  void MaybeCollect();

  bool TokenStep(uint32_t token_id, std::string_view bytes, bool match_bytes, bool keep);
  bool AdvanceBytes(std::string_view bytes);
  // One byte through the recognizer, with the distinct-items check; on false the caller
  // restores the snapshot (the scan of the byte is not undone here).
  bool StepByte(uint8_t byte);
  // Some parse holds a distinct-items array predicted at `step`.
  bool HasDistinctNodeAt(uint64_t step) const;
  // See DistinctItems::Closed: literal_copy and settles.
  bool RestCanFinish(std::string_view rest);
  bool walking_ = false;  // RestCanFinish is stepping (no walk inside a walk)
  static constexpr size_t kMaxStringSearch = 4096;
  bool StringItemCanBeNew(size_t* budget);
  bool NumberItemCanBeNew(size_t* budget);
  bool ItemStartCanBeNew(size_t* budget);
  bool SomeByteCanBeNew(const SearchOrder& order, const uint64_t allowed[4], size_t* budget);
  bool NewItemCanFollow(size_t* budget);
  template <typename Body>
  bool Search(const Body& body);
  bool searching_ = false;  // a search (StringItemCanBeNew...) is stepping
  size_t token_bytes_left_ = 0;  // AdvanceBytes: bytes of the token after this one

  std::vector<Snapshot> ring_;  // the last accepted states; capacity max_rollback + 1
  size_t head_ = 0;             // oldest entry
  size_t count_ = 0;
  size_t ring_bytes_ = 0;       // SlotBytes summed over every slot, live or not
  std::vector<Item> token_items_;  // AcceptToken's token-edge result, reused
  std::vector<Item> walk_items_;   // RestCanFinish's saved state, reused
  struct ProbeState {
    std::vector<Item> items;
    bool complete = false;
    uint64_t items_step = 0;
    DistinctItems::Mark distinct;
  };
  std::vector<ProbeState> probe_states_;  // ProbeTexts' states along a path, reused
  // StringItemCanBeNew's (and NewItemCanFollow's) buffers, one per level of the search's
  // recursion, reused: a deque, so a level's buffers stay put while deeper ones are added.
  struct SearchLevel {
    std::vector<Item> saved;
    std::string remainders;
    std::vector<size_t> ends;
  };
  std::deque<SearchLevel> search_levels_;
  size_t search_depth_ = 0;
  SearchLevel& EnterSearchLevel() {
    if (search_levels_.size() <= search_depth_) search_levels_.emplace_back();
    return search_levels_[search_depth_++];
  }

 public:
  size_t history() const { return count_; }
  // A copy's vectors hold only their sizes: recount (Fork).
  void RecountHistoryBytes() {
    ring_bytes_ = 0;
    for (const Snapshot& s : ring_) ring_bytes_ += SlotBytes(s);
  }
};

void Matcher::Impl::PushHistory() {
  if (count_ == ring_.size()) {
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  Snapshot& s = Slot(count_++);
  ring_bytes_ -= SlotBytes(s);
  s.items.assign(recognizer_.items().begin(), recognizer_.items().end());
  ring_bytes_ += SlotBytes(s);
  s.complete = recognizer_.complete();
  s.terminated = terminated_;
  s.ws_run = ws_run_;
  s.items_step = items_step_;
  if (distinct_) s.distinct = distinct_->GetMark();
}

bool Matcher::Impl::FitsWhitespace(std::string_view bytes, uint32_t* run) const {
  if (limits_.max_whitespace == kNoWhitespaceLimit) return true;
  uint32_t r = *run;
  for (char c : bytes) {
    r = IsWhitespaceByte(static_cast<uint8_t>(c)) ? r + 1 : 0;
    if (r > limits_.max_whitespace) return false;
  }
  *run = r;
  return true;
}

void Matcher::Impl::RestoreFrom(const Snapshot& s) {
  recognizer_.SetState(s.items, s.complete);
  terminated_ = s.terminated;
  ws_run_ = s.ws_run;
  items_step_ = s.items_step;
  if (distinct_) distinct_->UndoTo(s.distinct);
}

void Matcher::Impl::AbortAccept() {
  RestoreFrom(Slot(count_ - 1));
  --count_;
}

void Matcher::Impl::CommitAccept() {
  while (count_ > limits_.max_rollback) {
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  if (ring_bytes_ > limits_.max_history_bytes) TrimHistory();
}

void Matcher::Impl::ReleaseSlot(size_t i) {
  Snapshot& s = Slot(i);
  ring_bytes_ -= SlotBytes(s);
  std::vector<Item>().swap(s.items);
}

void Matcher::Impl::TrimHistory() {
  // Slots past the live snapshots (left by rollback, reset or dropped history) go first.
  for (size_t i = count_; i < ring_.size() && ring_bytes_ > limits_.max_history_bytes; ++i) {
    ReleaseSlot(i);
  }
  while (count_ > 0 && ring_bytes_ > limits_.max_history_bytes) {
    ReleaseSlot(0);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
}

// Mark-and-sweep of the stack pools; the roots are the current items and every snapshot.
void Matcher::Impl::MaybeCollect() {
  Gss& gss = recognizer_.gss();
  if (!gss.ShouldCollect()) return;
  for (const Item& it : recognizer_.items()) gss.MarkFrom(it.node);
  for (size_t i = 0; i < count_; ++i) {
    for (const Item& it : Slot(i).items) gss.MarkFrom(it.node);
  }
  gss.Sweep();
}

bool Matcher::Impl::AcceptBytes(std::string_view bytes) {
  uint32_t run = ws_run_;
  if (terminated_ || !FitsWhitespace(bytes, &run)) return false;
  PushHistory();
  try {
    for (char c : bytes) {
      if (!StepByte(static_cast<uint8_t>(c))) {
        AbortAccept();
        return false;
      }
      MaybeCollect();
    }
  } catch (...) {
    AbortAccept();
    throw;
  }
  ws_run_ = run;
  CommitAccept();
  return true;
}

bool Matcher::Impl::AcceptEos() {
  if (terminated_ || !recognizer_.complete()) return false;
  PushHistory();
  terminated_ = true;
  CommitAccept();
  return true;
}

bool Matcher::Impl::AcceptTokenRef(uint32_t token_id) {
  if (terminated_) return false;
  PushHistory();
  bool ok = false;
  try {
    ok = recognizer_.AdvanceToken(token_id);
  } catch (...) {
    AbortAccept();
    throw;
  }
  if (!ok) {
    AbortAccept();
    return false;
  }
  ws_run_ = 0;  // a token crossed by reference counts as text that is not whitespace
  items_step_ = recognizer_.step();
  MaybeCollect();
  CommitAccept();
  return true;
}

bool Matcher::Impl::AdvanceBytes(std::string_view bytes) {
  struct Reset {
    size_t* left;
    ~Reset() { *left = 0; }
  } reset{&token_bytes_left_};
  for (size_t i = 0; i < bytes.size(); ++i) {
    token_bytes_left_ = bytes.size() - 1 - i;
    if (!StepByte(static_cast<uint8_t>(bytes[i]))) return false;
  }
  return true;
}

bool Matcher::Impl::StepByte(uint8_t byte) {
  if (!distinct_) {
    if (!recognizer_.AdvanceByte(byte)) return false;
    items_step_ = recognizer_.step();
    return true;
  }
  const uint64_t before = items_step_;
  const DistinctItems::Closed closed = distinct_->Apply(byte, before, false);
  recognizer_.SetBlocked(closed.steps, closed.count);
  bool ok = false;
  try {
    ok = recognizer_.AdvanceByte(byte);
  } catch (...) {
    recognizer_.SetBlocked(nullptr, 0);
    throw;
  }
  recognizer_.SetBlocked(nullptr, 0);
  // A blocked completion can leave only finished items of the dropped parses: nothing follows.
  if (!ok || (closed.count > 0 && !recognizer_.complete() && !recognizer_.CanTakeInput())) {
    return false;
  }
  items_step_ = recognizer_.step();
  // Another parse took the byte: the arrays whose duplicate it closed hold no distinct parse now.
  for (int i = 0; i < closed.count; ++i) distinct_->SetCandidate(closed.frames[i], false);
  if (byte == '[') distinct_->DecideOpened(HasDistinctNodeAt(before));
  if (!closed.literal_copy.empty() && !RestCanFinish(closed.literal_copy)) return false;
  if (closed.settles && !RestCanFinish({})) return false;
  if (walking_ || searching_) return true;
  if (distinct_->InStringItem()) return Search([this](size_t* budget) {
    return StringItemCanBeNew(budget);
  });
  // A number item is searched where the token ends: a prefix that the rest of the token goes
  // on from is no dead end unless the longer one is.
  if (token_bytes_left_ == 0 && distinct_->InNumberItem()) return Search([this](size_t* budget) {
    return NumberItemCanBeNew(budget);
  });
  if (closed.next_item) return Search([this](size_t* budget) { return NewItemCanFollow(budget); });
  return true;
}

template <typename Body>
bool Matcher::Impl::Search(const Body& body) {
  searching_ = true;
  search_depth_ = 0;  // (a throw may have left it raised)
  size_t budget = kMaxStringSearch;
  bool found = true;
  try {
    found = body(&budget);
  } catch (...) {
    searching_ = false;
    throw;
  }
  searching_ = false;
  return found;
}

// After a ',' between items: whether an item that no earlier item has can still follow (a
// finite set of scalar values can run out). Past the whitespace the layout forces, each byte
// that may begin the item is tried: a string or number goes on with its search, a literal is
// checked at its first letter (StepByte), a container counts as new.
bool Matcher::Impl::NewItemCanFollow(size_t* budget) {
  std::vector<Item>& saved = EnterSearchLevel().saved;
  saved.assign(recognizer_.items().begin(), recognizer_.items().end());
  const bool complete = recognizer_.complete();
  const uint64_t step = items_step_;
  const DistinctItems::Mark mark = distinct_->GetMark();
  bool found = true;
  for (size_t n = 0; n < 256; ++n) {
    if (recognizer_.complete() || recognizer_.HasTokenEdges()) break;
    int b = recognizer_.SingleNextByte();
    if (b < 0) b = recognizer_.SingleNextByteBesidesWhitespace();
    if (b < 0 || !IsWhitespaceByte(static_cast<uint8_t>(b))) {
      found = ItemStartCanBeNew(budget);
      break;
    }
    if (!StepByte(static_cast<uint8_t>(b))) {
      found = false;
      break;
    }
  }
  recognizer_.SetState(saved, complete);
  items_step_ = step;
  distinct_->UndoTo(mark);
  --search_depth_;
  return found;
}

// At the start of an item (past the separator and forced whitespace): some byte the grammar
// allows there begins an item that can still be new (a container always can).
bool Matcher::Impl::ItemStartCanBeNew(size_t* budget) {
  uint64_t allowed[4] = {0, 0, 0, 0};
  recognizer_.NextBytes(allowed);
  for (uint8_t bracket : {uint8_t{'['}, uint8_t{'{'}}) {
    if ((allowed[bracket >> 6] >> (bracket & 63) & 1) != 0) return true;
  }
  return SomeByteCanBeNew(ItemStartOrder(), allowed, budget);
}

// Whether the number item being read can still end as a value no earlier item of its array
// has (an integer "0", or "6553" below a maximum of 65535, has few completions).
bool Matcher::Impl::NumberItemCanBeNew(size_t* budget) {
  if (recognizer_.HasTokenEdges() || !distinct_->TopItemMayCopy()) return true;
  uint64_t allowed[4] = {0, 0, 0, 0};
  recognizer_.NextBytes(allowed);
  return SomeByteCanBeNew(NumberOrder(), allowed, budget);
}

// Tries the bytes of `order` that the grammar allows next (`allowed`), one at a time, each
// followed by the search of the string or number item it leaves the text in, restoring the
// state after each: true at the first that can still be new, or once *budget steps are spent
// (assumed new).
bool Matcher::Impl::SomeByteCanBeNew(const SearchOrder& order, const uint64_t allowed[4],
                                     size_t* budget) {
  std::vector<Item>& saved = EnterSearchLevel().saved;
  struct Leave {
    size_t* depth;
    ~Leave() { --*depth; }
  } leave{&search_depth_};
  saved.assign(recognizer_.items().begin(), recognizer_.items().end());
  const bool complete = recognizer_.complete();
  const uint64_t step = items_step_;
  const DistinctItems::Mark mark = distinct_->GetMark();
  for (size_t k = 0; k < order.count; ++k) {
    const uint8_t b = order.bytes[k];
    if ((allowed[b >> 6] >> (b & 63) & 1) == 0) continue;
    if (*budget == 0) return true;
    --*budget;
    bool found = StepByte(b);
    if (found && distinct_->InStringItem()) found = StringItemCanBeNew(budget);
    if (found && distinct_->InNumberItem()) found = NumberItemCanBeNew(budget);
    recognizer_.SetState(saved, complete);
    items_step_ = step;
    distinct_->UndoTo(mark);
    if (found) return true;
  }
  return false;
}

// Whether the string item being read can still end as a value no earlier item of its array
// has (a string with few completions, such as a uuid, can come down to copies only: a dead
// end). True at once when the grammar allows a next byte that no possible copy, escape or
// closing quote starts with; else a search along the possible copies' texts, one byte at a
// time, at most *budget steps (spent: assumed new).
bool Matcher::Impl::StringItemCanBeNew(size_t* budget) {
  uint64_t allowed[4] = {0, 0, 0, 0};
  recognizer_.NextBytes(allowed);
  size_t count = 0;
  for (uint64_t w : allowed) count += static_cast<size_t>(__builtin_popcountll(w));
  // Each possible copy allows one next byte (two inside a \\u escape: a hex digit in either
  // case), and a '\\' or '"' may serve any of them.
  if (count == 0 || count > 2 * distinct_->TopItemCount() + 2) return true;
  SearchLevel& level = EnterSearchLevel();
  struct Leave {
    size_t* depth;
    ~Leave() { --*depth; }
  } leave{&search_depth_};
  std::string& remainders = level.remainders;
  std::vector<size_t>& ends = level.ends;
  remainders.clear();
  ends.clear();
  bool all_known = true;
  if (!distinct_->TopItemProspects(&remainders, &ends, &all_known)) return true;
  uint64_t toward[4] = {0, 0, 0, 0};  // bytes that keep some copy possible
  if (all_known) {
    auto mark = [&](uint8_t b) { toward[b >> 6] |= uint64_t{1} << (b & 63); };
    mark('\\');
    for (size_t k = 0, begin = 0; k < ends.size(); begin = ends[k++]) {
      mark(ends[k] == begin ? '"' : static_cast<uint8_t>(remainders[begin]));
    }
    for (int i = 0; i < 4; ++i) {
      if ((allowed[i] & ~toward[i]) != 0) return true;
    }
  } else {
    std::copy(allowed, allowed + 4, toward);
  }
  std::vector<Item>& saved = level.saved;
  saved.assign(recognizer_.items().begin(), recognizer_.items().end());
  const bool complete = recognizer_.complete();
  const uint64_t step = items_step_;
  const DistinctItems::Mark mark = distinct_->GetMark();
  for (int b = 0; b < 256; ++b) {
    if (((allowed[b >> 6] & toward[b >> 6]) >> (b & 63) & 1) == 0) continue;
    if (*budget == 0) return true;
    --*budget;
    bool found = StepByte(static_cast<uint8_t>(b));
    if (found && distinct_->InStringItem()) found = StringItemCanBeNew(budget);
    recognizer_.SetState(saved, complete);
    items_step_ = step;
    distinct_->UndoTo(mark);
    if (found) return true;
  }
  return false;
}

// Walks on from the byte just read while the rest is certain, then restores the state: `rest`
// when given (the letters of a literal that copies an earlier item), else each byte the grammar
// forces (outside strings, the one byte besides optional whitespace, which changes no value),
// up to kMaxSettleWalk bytes. False when the walk reaches a refusal: the byte leads only to a
// copy of an earlier item, a dead end.
bool Matcher::Impl::RestCanFinish(std::string_view rest) {
  constexpr size_t kMaxSettleWalk = 1024;
  if (walking_) return true;  // the walk in progress reads the same bytes
  walk_items_.assign(recognizer_.items().begin(), recognizer_.items().end());
  const bool complete = recognizer_.complete();
  const uint64_t step = items_step_;
  const DistinctItems::Mark mark = distinct_->GetMark();
  walking_ = true;
  auto restore = [&] {
    walking_ = false;
    recognizer_.SetState(walk_items_, complete);
    items_step_ = step;
    distinct_->UndoTo(mark);
  };
  bool ok = true;
  try {
    for (size_t n = 0; n < (rest.empty() ? kMaxSettleWalk : rest.size()); ++n) {
      int b = 0;
      if (!rest.empty()) {
        b = static_cast<uint8_t>(rest[n]);
      } else {
        if (recognizer_.complete() || recognizer_.HasTokenEdges()) break;
        b = recognizer_.SingleNextByte();  // (forced whitespace too, as an indented layout's)
        if (b < 0 && !distinct_->InString()) b = recognizer_.SingleNextByteBesidesWhitespace();
        if (b < 0) break;
      }
      if (!StepByte(static_cast<uint8_t>(b))) {
        ok = false;
        break;
      }
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return ok;
}

void Matcher::Impl::ProbeTexts(const std::vector<std::string_view>& texts,
                               std::vector<size_t>* refused) {
  refused->assign(texts.size(), std::string_view::npos);
  if (texts.empty()) return;
  // probe_states_[j]: the state before byte j of the path stepped so far (depth bytes long).
  auto save = [&](size_t j) {
    if (probe_states_.size() <= j) probe_states_.resize(j + 1);
    ProbeState& p = probe_states_[j];
    p.items.assign(recognizer_.items().begin(), recognizer_.items().end());
    p.complete = recognizer_.complete();
    p.items_step = items_step_;
    p.distinct = distinct_->GetMark();
  };
  auto restore = [&](size_t j) {
    const ProbeState& p = probe_states_[j];
    recognizer_.SetState(p.items, p.complete);
    items_step_ = p.items_step;
    distinct_->UndoTo(p.distinct);
  };
  save(0);
  std::string_view path;  // the bytes stepped, a prefix of the previous text
  try {
    for (size_t k = 0; k < texts.size(); ++k) {
      const std::string_view text = texts[k];
      size_t common = 0;
      while (common < path.size() && common < text.size() && path[common] == text[common]) {
        ++common;
      }
      restore(common);
      path = text.substr(0, common);
      for (size_t j = common; j < text.size(); ++j) {
        save(j);
        bool ok = false;
        try {
          ok = StepByte(static_cast<uint8_t>(text[j]));
        } catch (const LimitError&) {
          // Refused, as the masks refuse a step too large.
        }
        if (!ok) {
          (*refused)[k] = j;
          restore(j);
          break;
        }
        path = text.substr(0, j + 1);
      }
    }
  } catch (...) {
    restore(0);
    throw;
  }
  restore(0);
}

bool Matcher::Impl::HasDistinctNodeAt(uint64_t step) const {
  const std::vector<uint8_t>& distinct = recognizer_.automaton().grammar().DistinctItemRules();
  const Gss& gss = recognizer_.gss();
  for (const Item& it : recognizer_.items()) {
    const detail::GssNode& n = gss.node(it.node);
    if (n.step == step && distinct[n.rule] != 0) return true;
  }
  return false;
}

// The union of the token-edge step and the byte steps, both from the state before the call.
// Every token's bytes count against max_whitespace, however the grammar matched it (the mask
// filter, csrc/mask/whitespace_filter.h, applies the same rule).
bool Matcher::Impl::AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes) {
  return TokenStep(token_id, bytes, match_bytes, true);
}

bool Matcher::Impl::TokenStep(uint32_t token_id, std::string_view bytes, bool match_bytes,
                              bool keep) {
  uint32_t run = ws_run_;
  if (terminated_ || !FitsWhitespace(bytes, &run)) return false;
  PushHistory();
  try {
    bool by_token = recognizer_.HasTokenEdges() && recognizer_.AdvanceToken(token_id);
    bool token_complete = recognizer_.complete();
    const uint64_t token_step = recognizer_.step();
    if (by_token) {
      token_items_.assign(recognizer_.items().begin(), recognizer_.items().end());
      RestoreFrom(Slot(count_ - 1));
    }
    bool by_bytes = match_bytes && !bytes.empty() && AdvanceBytes(bytes);
    if (!by_bytes && !by_token) {
      AbortAccept();
      return false;
    }
    if (!by_bytes) {
      RestoreFrom(Slot(count_ - 1));  // the bytes' partial scan
      recognizer_.SetState(token_items_, token_complete);
      items_step_ = token_step;
    } else if (by_token) {
      recognizer_.MergeState(token_items_, token_complete);
    }
  } catch (...) {
    AbortAccept();
    throw;
  }
  if (!keep) {
    AbortAccept();
    return true;
  }
  ws_run_ = run;
  MaybeCollect();
  CommitAccept();
  return true;
}

void Matcher::Impl::Rollback(size_t n) {
  if (n > count_) {
    throw std::invalid_argument("rollback(" + std::to_string(n) + ") exceeds the available history of " +
                                std::to_string(count_) + " accept calls");
  }
  if (n == 0) return;
  RestoreFrom(Slot(count_ - n));
  count_ -= n;
}

void Matcher::Impl::Reset() {
  count_ = 0;
  head_ = 0;
  terminated_ = false;
  ws_run_ = 0;
  recognizer_.Reset();
  items_step_ = recognizer_.step();
  if (distinct_) distinct_->Clear();
}

// Walks forward while exactly one byte is possible, then restores the state. Stops before a
// whitespace byte the run bound refuses.
std::string Matcher::Impl::ForcedBytes() {
  std::string out;
  if (terminated_) return out;
  PushHistory();
  uint32_t run = ws_run_;
  try {
    while (out.size() < limits_.max_forced_bytes && !recognizer_.complete() &&
           !recognizer_.HasTokenEdges()) {
      int b = recognizer_.SingleNextByte();
      const char c = static_cast<char>(b);
      if (b < 0 || !FitsWhitespace(std::string_view(&c, 1), &run)) break;
      if (!StepByte(static_cast<uint8_t>(b))) break;
      out.push_back(static_cast<char>(b));
      MaybeCollect();
    }
  } catch (const LimitError&) {
    // A state too large to walk: report the bytes forced so far.
  }
  AbortAccept();
  return out;
}

namespace detail {

Recognizer& MatcherAccess::recognizer(Matcher& m) { return m.impl().recognizer_; }
const Recognizer& MatcherAccess::recognizer(const Matcher& m) { return m.impl().recognizer_; }
bool MatcherAccess::terminated(const Matcher& m) { return m.impl().terminated_; }
bool MatcherAccess::TryToken(Matcher& m, uint32_t token_id, std::string_view bytes) {
  return m.impl().TryToken(token_id, bytes);
}
void MatcherAccess::ProbeTexts(Matcher& m, const std::vector<std::string_view>& texts,
                               std::vector<size_t>* refused) {
  m.impl().ProbeTexts(texts, refused);
}
DistinctItems* MatcherAccess::distinct_items(Matcher& m) {
  return m.impl().distinct_ ? &*m.impl().distinct_ : nullptr;
}
const DistinctItems* MatcherAccess::distinct_items(const Matcher& m) {
  return m.impl().distinct_ ? &*m.impl().distinct_ : nullptr;
}

}  // namespace detail

Matcher::Matcher(std::shared_ptr<const Automaton> automaton, const MatcherLimits& limits)
    : impl_(std::make_unique<Impl>(std::move(automaton), limits)) {}
Matcher::Matcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

bool Matcher::AcceptBytes(std::string_view bytes) { return impl_->AcceptBytes(bytes); }
bool Matcher::AcceptEos() { return impl_->AcceptEos(); }
bool Matcher::AcceptTokenRef(uint32_t token_id) { return impl_->AcceptTokenRef(token_id); }
bool Matcher::AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes) {
  return impl_->AcceptToken(token_id, bytes, match_bytes);
}
void Matcher::SetTokenIds(std::shared_ptr<const std::vector<int64_t>> token_ids) {
  impl_->recognizer_.SetTokenIds(std::move(token_ids));
}
bool Matcher::CanTerminate() const { return !impl_->terminated_ && impl_->recognizer_.complete(); }
bool Matcher::IsTerminated() const { return impl_->terminated_; }
void Matcher::Rollback(size_t n) { impl_->Rollback(n); }
size_t Matcher::RollbackAvailable() const { return impl_->history(); }
Matcher Matcher::Fork() const {
  auto copy = std::make_unique<Impl>(*impl_);
  copy->RecountHistoryBytes();
  return Matcher(std::move(copy));
}
Matcher Matcher::ForkState() const {
  return Matcher(std::make_unique<Impl>(*impl_, Impl::StateOnly{}));
}
void Matcher::Reset() { impl_->Reset(); }
std::string Matcher::ForcedBytes() { return impl_->ForcedBytes(); }
size_t Matcher::StateSize() const { return impl_->recognizer_.items().size(); }
uint32_t Matcher::WhitespaceRun() const { return impl_->ws_run_; }
std::vector<std::vector<std::string>> Matcher::RuleStacks(size_t limit) const {
  const Grammar& grammar = impl_->recognizer_.automaton().grammar();
  std::vector<std::vector<std::string>> out;
  for (const std::vector<RuleId>& stack : impl_->recognizer_.RuleStacks(limit)) {
    std::vector<std::string> names;
    names.reserve(stack.size());
    for (RuleId r : stack) names.push_back(grammar.rule(r).name);
    out.push_back(std::move(names));
  }
  return out;
}
const Automaton& Matcher::automaton() const { return impl_->recognizer_.automaton(); }
const MatcherLimits& Matcher::limits() const { return impl_->limits_; }

}  // namespace gbnf
