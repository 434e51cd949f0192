#include "matcher/distinct_items.h"

#include <functional>
#include <string_view>

#include "matcher/json_canonical.h"
#include "matcher/json_prefix.h"

namespace gbnf::detail {

DistinctItems::Mark DistinctItems::GetMark() const {
  Mark m;
  m.undo = undo_.size();
  m.text = text_.size();
  m.items = items_.size();
  m.canon = canon_.size();
  m.frames = frames_.size();
  m.mode = mode_;
  m.literal_left = literal_left_;
  m.last_token = last_token_;
  m.scalar_is_item = scalar_is_item_;
  m.string_is_key = string_is_key_;
  m.scalar_start = scalar_start_;
  m.top = top_;
  m.opened = opened_;
  return m;
}

void DistinctItems::UndoTo(const Mark& m) {
  while (undo_.size() > m.undo) {
    const Undo& u = undo_.back();
    if (u.frame < frames_.size()) {
      Frame& f = frames_[u.frame];
      switch (u.field) {
        case kCandidate: f.candidate = u.old_value != 0; break;
        case kLastItem: f.last_item = u.old_value; break;
        case kItemStart: f.item_start = u.old_value; break;
      }
    }
    undo_.pop_back();
  }
  text_.resize(m.text);
  items_.resize(m.items);
  canon_.resize(m.canon);
  frames_.resize(m.frames);
  mode_ = static_cast<Mode>(m.mode);
  literal_left_ = m.literal_left;
  last_token_ = m.last_token;
  scalar_is_item_ = m.scalar_is_item;
  string_is_key_ = m.string_is_key;
  scalar_start_ = m.scalar_start;
  top_ = m.top;
  opened_ = m.opened;
}

void DistinctItems::Clear() { UndoTo(Mark{}); }

void DistinctItems::DecideOpened(bool candidate) {
  if (opened_ == kNone) return;
  const bool outermost = frames_[opened_].parent == kNone;
  if (candidate || !outermost || opened_ + 1 != frames_.size() || top_ != opened_) {
    SetCandidate(opened_, candidate);
    return;
  }
  top_ = kNone;  // not a marked array: asleep again
  frames_.pop_back();
  opened_ = kNone;
}

void DistinctItems::SetCandidate(uint32_t frame, bool candidate) {
  Frame& f = frames_[frame];
  if (f.candidate == candidate) return;
  undo_.push_back({frame, kCandidate, f.candidate ? 1u : 0u});
  f.candidate = candidate;
}

bool DistinctItems::Active() const {
  for (uint32_t f = top_; f != kNone; f = frames_[f].parent) {
    if (frames_[f].candidate) return true;
  }
  return false;
}

bool DistinctItems::InsideCandidateItem(uint32_t f) const {
  if (f == kNone) return false;
  for (uint32_t a = frames_[f].parent; a != kNone; a = frames_[a].parent) {
    if (frames_[a].candidate) return true;
  }
  return false;
}

void DistinctItems::BeginValue(uint32_t offset) {
  if (!IsItemPosition()) return;
  Frame& f = frames_[top_];
  undo_.push_back({top_, kItemStart, f.item_start});
  f.item_start = offset;
}

void DistinctItems::BeginScalar(Mode mode, uint32_t offset) {
  mode_ = mode;
  scalar_start_ = offset;
  scalar_is_item_ = IsItemPosition();
  string_is_key_ = mode == kString && top_ != kNone && !frames_[top_].is_array &&
                   (last_token_ == '{' || last_token_ == ',');
  BeginValue(offset);
}

DistinctItems::Closed DistinctItems::Apply(uint8_t byte, uint64_t items_step,
                                           bool assume_candidate) {
  Closed closed;
  opened_ = kNone;
  const auto offset = static_cast<uint32_t>(text_.size());
  text_.push_back(static_cast<char>(byte));
  if (top_ == kNone) {
    // Outside every array the parse marked, the text need not be JSON (a tool call's wrapper,
    // free text): only a "[" matters, and the parse says whether it opens a marked array.
    if (byte == '[') Outside(byte, offset, items_step, assume_candidate, &closed);
    return closed;
  }
  switch (mode_) {
    case kString:
      if (byte == '\\') {
        mode_ = kEscape;
      } else if (byte == '"') {
        mode_ = kOutside;
        if (scalar_is_item_) CloseItem(top_, ItemText(scalar_start_, offset + 1), &closed);
        closed.settles = !string_is_key_ && InsideCandidateItem(top_);
      }
      return closed;
    case kEscape:
      mode_ = kString;
      return closed;
    case kLiteral:
      if (literal_left_ > 0) --literal_left_;
      if (literal_left_ == 0) {
        mode_ = kOutside;
        if (scalar_is_item_) CloseItem(top_, ItemText(scalar_start_, offset + 1), &closed);
      }
      return closed;
    case kNumber: {
      const bool number_byte = (byte >= '0' && byte <= '9') || byte == '.' || byte == 'e' ||
                               byte == 'E' || byte == '+' || byte == '-';
      if (number_byte) return closed;
      mode_ = kOutside;  // the byte after a number finishes it
      if (scalar_is_item_) CloseItem(top_, ItemText(scalar_start_, offset), &closed);
      closed.settles = InsideCandidateItem(top_);
      break;
    }
    case kOutside:
      break;
  }
  Outside(byte, offset, items_step, assume_candidate, &closed);
  return closed;
}

void DistinctItems::Outside(uint8_t byte, uint32_t offset, uint64_t items_step,
                            bool assume_candidate, Closed* closed) {
  switch (byte) {
    case '"':
      BeginScalar(kString, offset);
      return;
    case 't':
    case 'n':
    case 'f': {
      // A literal's first letter decides the whole value: the matcher then walks the rest of a
      // copy of an earlier item, since a prefix "tr" that can only become one is a dead end.
      const std::string_view word = byte == 't' ? "true" : byte == 'n' ? "null" : "false";
      BeginScalar(kLiteral, offset);
      literal_left_ = static_cast<uint8_t>(word.size() - 1);
      if (scalar_is_item_ && frames_[top_].candidate && HasItem(top_, word)) {
        closed->literal_copy = word.substr(1);
      }
      closed->settles = closed->settles || InsideCandidateItem(top_);
      return;
    }
    case '[':
    case '{': {
      last_token_ = byte;
      BeginValue(offset);
      Frame f;
      f.open_step = items_step;
      f.open_offset = offset;
      f.parent = top_;
      f.is_array = byte == '[';
      f.candidate = f.is_array && assume_candidate;
      top_ = static_cast<uint32_t>(frames_.size());
      frames_.push_back(f);
      if (f.is_array) opened_ = top_;
      return;
    }
    case ']':
    case '}': {
      last_token_ = byte;
      if (top_ == kNone) return;
      const uint32_t done = top_;
      top_ = frames_[done].parent;
      if (IsItemPosition()) {
        CloseItem(top_, ItemText(frames_[done].open_offset, offset + 1), closed);
      }
      closed->settles = closed->settles || InsideCandidateItem(top_);
      return;
    }
    case ',':
      closed->next_item = IsItemPosition() && frames_[top_].candidate;
      last_token_ = byte;
      return;
    case ':':
      last_token_ = byte;
      return;
    default:
      if ((byte >= '0' && byte <= '9') || byte == '-') BeginScalar(kNumber, offset);
      return;
  }
}

bool DistinctItems::HasItem(uint32_t frame, std::string_view item) {
  scratch_.clear();
  AppendCanonicalJson(item, &scratch_);
  const uint64_t hash = std::hash<std::string_view>()(scratch_);
  for (uint32_t k = frames_[frame].last_item; k != kNone; k = items_[k].previous) {
    const ItemRecord& r = items_[k];
    const std::string_view canon = std::string_view(canon_).substr(r.canon_begin, r.canon_size);
    if (r.hash == hash && canon == scratch_) return true;
  }
  return false;
}

void DistinctItems::CloseItem(uint32_t frame, std::string_view item, Closed* closed) {
  Frame& f = frames_[frame];
  if (!f.candidate) return;
  if (HasItem(frame, item)) {
    if (closed->count < 2) {
      closed->steps[closed->count] = f.open_step;
      closed->frames[closed->count] = frame;
      ++closed->count;
    }
    return;
  }
  const uint64_t hash = std::hash<std::string_view>()(scratch_);  // HasItem's canonical form
  ItemRecord r;
  r.hash = hash;
  r.canon_begin = static_cast<uint32_t>(canon_.size());
  r.canon_size = static_cast<uint32_t>(scratch_.size());
  r.previous = f.last_item;
  r.ordinal = f.last_item == kNone ? 0 : items_[f.last_item].ordinal + 1;
  canon_.append(scratch_);
  undo_.push_back({frame, kLastItem, f.last_item});
  f.last_item = static_cast<uint32_t>(items_.size());
  items_.push_back(r);
}

bool DistinctItems::FrameMayCopy(uint32_t f, uint32_t start) const {
  const std::string_view item = ItemText(start, static_cast<uint32_t>(text_.size()));
  for (uint32_t k = frames_[f].last_item; k != kNone; k = items_[k].previous) {
    const ItemRecord& r = items_[k];
    if (AgreeWithValue(item, std::string_view(canon_).substr(r.canon_begin, r.canon_size))
            .possible) {
      return true;
    }
  }
  return false;
}

bool DistinctItems::FrameProspects(uint32_t f, uint32_t start, std::string* remainders,
                                   std::vector<size_t>* ends, bool* all_known) const {
  bool possible = false;
  const std::string_view item = ItemText(start, static_cast<uint32_t>(text_.size()));
  for (uint32_t k = frames_[f].last_item; k != kNone; k = items_[k].previous) {
    const ItemRecord& r = items_[k];
    const PrefixAgreement a =
        AgreeWithValue(item, std::string_view(canon_).substr(r.canon_begin, r.canon_size));
    if (!a.possible) continue;
    possible = true;
    if (a.remainder_known) {
      remainders->append(a.remainder);
      ends->push_back(remainders->size());
    } else {
      *all_known = false;
    }
  }
  return possible;
}

bool DistinctItems::CollectProspects(std::string* remainders, std::vector<size_t>* ends,
                                     bool* all_known) const {
  bool possible = false;
  for (uint32_t f = top_; f != kNone; f = frames_[f].parent) {
    const Frame& frame = frames_[f];
    if (!frame.candidate || frame.item_start == kNone) continue;
    if (f == top_ && mode_ == kOutside) continue;  // between two items of this array
    possible = FrameProspects(f, frame.item_start, remainders, ends, all_known) || possible;
  }
  return possible;
}

bool DistinctItems::TopItemProspects(std::string* remainders, std::vector<size_t>* ends,
                                     bool* all_known) const {
  return FrameProspects(top_, scalar_start_, remainders, ends, all_known);
}

size_t DistinctItems::TopItemCount() const {
  const uint32_t last = frames_[top_].last_item;
  return last == kNone ? 0 : size_t{items_[last].ordinal} + 1;
}

}  // namespace gbnf::detail
