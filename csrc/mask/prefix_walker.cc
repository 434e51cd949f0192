#include "mask/prefix_walker.h"

namespace gbnf::detail {

void PrefixWalker::Begin(Recognizer* recognizer, size_t max_token_length) {
  recognizer_ = recognizer;
  if (levels_.size() < max_token_length + 1) {
    levels_.resize(max_token_length + 1);
    complete_upto_.resize(max_token_length + 1);
  }
  recognizer_->gss().SetSpeculative(true);
  held_ = 0;
  recognizer_level_ = 0;
  Save(0);
}

void PrefixWalker::End() {
  held_ = 0;
  recognizer_level_ = kNil;
  SyncRecognizer();
  recognizer_->gss().SetSpeculative(false);
  recognizer_ = nullptr;
}

bool PrefixWalker::IsPure(const std::vector<Item>& items) const {
  const Automaton& a = recognizer_->automaton();
  for (const Item& it : items) {
    if (it.node != items.front().node || !a.CallEdges(it.state).empty()) return false;
  }
  return !items.empty();
}

void PrefixWalker::Save(uint32_t level) {
  Level& l = levels_[level];
  l.items.assign(recognizer_->items().begin(), recognizer_->items().end());
  l.mark = recognizer_->gss().Mark();
  l.complete = recognizer_->complete();
  l.pure = IsPure(l.items);
  complete_upto_[level] = level > 0 && (l.complete || complete_upto_[level - 1]);
}

// Puts the recognizer at level held_ (a copy, and the stack trimmed to that level's mark).
void PrefixWalker::SyncRecognizer() {
  if (recognizer_level_ == held_) return;
  const Level& l = levels_[held_];
  recognizer_->gss().RestoreMark(l.mark);
  recognizer_->SetState(l.items, l.complete);
  recognizer_level_ = held_;
}

int PrefixWalker::PureStep(uint8_t byte) {
  const Automaton& a = recognizer_->automaton();
  const Level& cur = levels_[held_];
  Level& next = levels_[held_ + 1];
  const uint32_t node = cur.items.front().node;
  const GssNode& n = recognizer_->gss().node(node);
  next.items.clear();
  bool complete = false;
  for (const Item& it : cur.items) {
    for (const ByteEdge& e : a.ByteEdges(it.state)) {
      if (byte < e.lo) break;  // edges are sorted by lo
      if (byte > e.hi) continue;
      if (!a.CallEdges(e.target).empty()) return -1;
      if (a.IsFinal(e.target)) {
        if (n.cont_count > 0) return -1;  // completing would resume a caller
        complete = complete || n.accepts;
      }
      bool seen = false;
      for (const Item& x : next.items) seen = seen || x.state == e.target;
      if (!seen) next.items.push_back({e.target, node});
    }
  }
  if (next.items.empty()) return 0;
  next.mark = cur.mark;
  next.complete = complete;
  next.pure = true;
  ++held_;
  complete_upto_[held_] = complete || complete_upto_[held_ - 1];
  return 1;
}

bool PrefixWalker::RecognizerStep(uint8_t byte) {
  SyncRecognizer();
  bool ok = false;
  try {
    ok = recognizer_->AdvanceByte(byte);
  } catch (const LimitError&) {
    limited_ = true;  // the recognizer's items are unchanged; drop what the step created
    recognizer_->gss().RestoreMark(levels_[held_].mark);
  }
  if (!ok) return false;
  recognizer_level_ = ++held_;
  Save(held_);
  return true;
}

size_t PrefixWalker::Extend(uint32_t keep, std::string_view add) {
  // Levels above `keep` are about to be rewritten: the recognizer's copy of one is stale.
  if (keep < recognizer_level_) recognizer_level_ = kNil;
  held_ = keep;
  limited_ = false;
  size_t n = 0;
  for (; n < add.size(); ++n) {
    const uint8_t byte = static_cast<uint8_t>(add[n]);
    int pure = levels_[held_].pure ? PureStep(byte) : -1;
    if (pure == 0) break;
    if (pure < 0 && !RecognizerStep(byte)) break;
  }
  return n;
}

}  // namespace gbnf::detail
