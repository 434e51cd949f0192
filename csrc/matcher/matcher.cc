// Matcher: the public face of the Earley recognizer, with atomic accepts, a bounded rollback
// history, fork, reset and forced bytes.
#include "gbnf_sampler/matcher.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "matcher/matcher_access.h"
#include "matcher/recognizer.h"

namespace gbnf {

using detail::Gss;
using detail::Item;
using detail::Recognizer;

class Matcher::Impl {
 public:
  Impl(std::shared_ptr<const Automaton> automaton, const MatcherLimits& limits)
      : recognizer_(std::move(automaton), limits.max_state_size),
        limits_(limits),
        ring_(size_t{limits.max_rollback} + 1) {}

  bool AcceptBytes(std::string_view bytes);
  bool AcceptEos();
  bool AcceptTokenRef(uint32_t token_id);
  bool AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes);
  void Rollback(size_t n);
  void Reset();
  std::string ForcedBytes();

  Recognizer recognizer_;
  MatcherLimits limits_;
  bool terminated_ = false;

 private:
  struct Snapshot {
    std::vector<Item> items;
    bool complete = false;
    bool terminated = false;
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

  bool AdvanceBytes(std::string_view bytes);

  std::vector<Snapshot> ring_;  // the last accepted states; capacity max_rollback + 1
  size_t head_ = 0;             // oldest entry
  size_t count_ = 0;
  size_t ring_bytes_ = 0;       // SlotBytes summed over every slot, live or not
  std::vector<Item> token_items_;  // AcceptToken's token-edge result, reused

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
}

void Matcher::Impl::RestoreFrom(const Snapshot& s) {
  recognizer_.SetState(s.items, s.complete);
  terminated_ = s.terminated;
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
  if (terminated_) return false;
  PushHistory();
  try {
    for (char c : bytes) {
      if (!recognizer_.AdvanceByte(static_cast<uint8_t>(c))) {
        AbortAccept();
        return false;
      }
      MaybeCollect();
    }
  } catch (...) {
    AbortAccept();
    throw;
  }
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
  MaybeCollect();
  CommitAccept();
  return true;
}

bool Matcher::Impl::AdvanceBytes(std::string_view bytes) {
  for (char c : bytes) {
    if (!recognizer_.AdvanceByte(static_cast<uint8_t>(c))) return false;
  }
  return true;
}

// The union of the token-edge step and the byte steps, both from the state before the call.
bool Matcher::Impl::AcceptToken(uint32_t token_id, std::string_view bytes, bool match_bytes) {
  if (terminated_) return false;
  PushHistory();
  try {
    bool by_token = recognizer_.HasTokenEdges() && recognizer_.AdvanceToken(token_id);
    bool token_complete = recognizer_.complete();
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
      recognizer_.SetState(token_items_, token_complete);
    } else if (by_token) {
      recognizer_.MergeState(token_items_, token_complete);
    }
  } catch (...) {
    AbortAccept();
    throw;
  }
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
  recognizer_.Reset();
}

// Walks forward while exactly one byte is possible, then restores the state.
std::string Matcher::Impl::ForcedBytes() {
  std::string out;
  if (terminated_) return out;
  PushHistory();
  try {
    while (out.size() < limits_.max_forced_bytes && !recognizer_.complete() &&
           !recognizer_.HasTokenEdges()) {
      int b = recognizer_.SingleNextByte();
      if (b < 0 || !recognizer_.AdvanceByte(static_cast<uint8_t>(b))) break;
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
void Matcher::Reset() { impl_->Reset(); }
std::string Matcher::ForcedBytes() { return impl_->ForcedBytes(); }
size_t Matcher::StateSize() const { return impl_->recognizer_.items().size(); }
const Automaton& Matcher::automaton() const { return impl_->recognizer_.automaton(); }
const MatcherLimits& Matcher::limits() const { return impl_->limits_; }

}  // namespace gbnf
