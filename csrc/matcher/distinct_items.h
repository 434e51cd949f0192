// The runtime half of "#@ distinct-items RULE" (JSON Schema uniqueItems over items no grammar
// can keep apart, such as free strings): pairwise distinct items are not context-free, so the
// grammar only says which rules are such arrays, and the matcher refuses the byte that closes
// an item equal to an earlier item of the same array.
//
// This class scans the accepted text as JSON structure from the "[" of a marked array to its
// "]" (it never decides what is valid; the grammar does; outside such arrays it only watches
// for "[") and keeps, per open array that the parse marked as a candidate, the canonical
// forms of its finished items (json_canonical.h). It also tells the matcher where an item's
// value may be settled before its last byte (Closed::literal_copy, Closed::settles): there the
// matcher walks the rest the grammar forces and refuses the byte if that rest is a copy; and
// where string items may have run out (Closed::next_item). An array is known by the step of
// the parser items it was predicted in, the `step` of its rule's stack node, so the recognizer
// can drop exactly the parses inside that array (Recognizer::SetBlocked). Every change is
// undoable to a Mark (the matcher's rollback history and the mask filter's trial runs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gbnf::detail {

class DistinctItems {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Arrays whose item the last byte closed as a duplicate (at most two: a number item closed by
  // the "]" that closes its array, and that array as an item of its parent).
  struct Closed {
    uint64_t steps[2] = {0, 0};
    uint32_t frames[2] = {kNone, kNone};
    int count = 0;
    // The byte began true/false/null as an item equal to an earlier one: the letters still to
    // come (the item closes as a duplicate on the last one, unless another parse reads them).
    std::string_view literal_copy;
    // The byte finished a value inside an item of a candidate array (a string, number or
    // container, or began a literal, below the item's top level): if the grammar forces the
    // rest of the item from here, the matcher walks it (a forced copy is a dead end).
    bool settles = false;
    // The byte was a ',' between two items of a candidate array: the matcher checks that a
    // new item can still follow (a small set of string values can run out).
    bool next_item = false;
  };

  struct Mark {
    size_t undo = 0, text = 0, items = 0, canon = 0, frames = 0;
    uint8_t mode = 0, literal_left = 0, last_token = 0;
    bool scalar_is_item = false, string_is_key = false;
    uint32_t scalar_start = 0, top = kNone, opened = kNone;
  };

  Mark GetMark() const;
  void UndoTo(const Mark& mark);
  void Clear();

  // Scans `byte`. `items_step`: the step of the parser items before the byte (an array opened
  // by it is known by that step). `assume_candidate`: arrays opened now count as candidates
  // (the mask filter's trial runs, where no parse tells).
  Closed Apply(uint8_t byte, uint64_t items_step, bool assume_candidate);
  // After the parse step of a byte that opened an array: whether some parse holds it in a
  // marked rule. An outermost array that is not one is forgotten (the scan sleeps again).
  void DecideOpened(bool candidate);
  // Marks `frame` (a Closed::frames entry) as holding no distinct parse any more.
  void SetCandidate(uint32_t frame, bool candidate);

  // Some open array is a candidate: a token may close a duplicate item.
  bool Active() const;
  // Inside a string: only a token holding '"' can close an item.
  bool InString() const { return mode_ == kString || mode_ == kEscape; }
  // Inside a number or a literal.
  bool InScalar() const { return mode_ == kNumber || mode_ == kLiteral; }
  // The scan is at the level of a candidate array's items (between them, or inside a scalar
  // item). Elsewhere the text is inside an item that a container closes.
  bool AtItemLevel() const {
    return top_ != kNone && frames_[top_].candidate && (mode_ == kOutside || scalar_is_item_);
  }
  // Below an item's top level: whether the unfinished items of the candidate arrays around the
  // text can still become copies of earlier items (json_prefix.h). When the text is inside a
  // string value and every such copy is known, *remainders gets what that string still needs
  // for each, back to back, each ending at an entry of *ends (else *all_known is false).
  bool CollectProspects(std::string* remainders, std::vector<size_t>* ends,
                        bool* all_known) const;
  // Inside a string that is an item of a candidate array (the top frame).
  bool InStringItem() const {
    return top_ != kNone && frames_[top_].candidate && scalar_is_item_ && InString();
  }
  // Inside a number that is an item of a candidate array (the top frame).
  bool InNumberItem() const {
    return top_ != kNone && frames_[top_].candidate && scalar_is_item_ && mode_ == kNumber;
  }
  // The top frame's unfinished item can still become one of its earlier items.
  bool TopItemMayCopy() const { return FrameMayCopy(top_, scalar_start_); }
  // The finished items of the top frame's array.
  size_t TopItemCount() const;
  // CollectProspects for the top frame's unfinished item alone.
  bool TopItemProspects(std::string* remainders, std::vector<size_t>* ends,
                        bool* all_known) const;

 private:
  enum Mode : uint8_t { kOutside, kString, kEscape, kNumber, kLiteral };
  struct Frame {
    uint64_t open_step = 0;
    uint32_t open_offset = 0;
    uint32_t parent = kNone;
    uint32_t last_item = kNone;   // newest entry of items_ in this array (a chain)
    uint32_t item_start = kNone;  // where the array's newest item begins in text_
    bool is_array = false;
    bool candidate = false;
  };
  struct ItemRecord {
    uint64_t hash = 0;
    uint32_t canon_begin = 0, canon_size = 0;
    uint32_t previous = kNone;  // the array's item before this one
    uint32_t ordinal = 0;       // items of the array before this one
  };
  enum Field : uint8_t { kLastItem, kCandidate, kItemStart };
  struct Undo {
    uint32_t frame = 0;
    Field field = kLastItem;
    uint32_t old_value = 0;
  };

  void Outside(uint8_t byte, uint32_t offset, uint64_t items_step, bool assume_candidate,
               Closed* closed);
  void BeginScalar(Mode mode, uint32_t offset);
  // The JSON text `item` of an item of array `frame` is finished: records it, or reports a
  // duplicate.
  void CloseItem(uint32_t frame, std::string_view item, Closed* closed);
  // Array `frame` has an item whose canonical form is that of `item` (left in scratch_).
  bool HasItem(uint32_t frame, std::string_view item);
  std::string_view ItemText(uint32_t begin, uint32_t end) const {
    return std::string_view(text_).substr(begin, end - begin);
  }
  bool IsItemPosition() const { return top_ != kNone && frames_[top_].is_array; }
  // Frame `f`'s unfinished item (from offset `start`) can still become an earlier item.
  bool FrameMayCopy(uint32_t f, uint32_t start) const;
  // Adds the prospects of frame `f`'s unfinished item (from offset `start`).
  bool FrameProspects(uint32_t f, uint32_t start, std::string* remainders,
                      std::vector<size_t>* ends, bool* all_known) const;
  // Some candidate array encloses frame `f` (not counting `f`): a value in `f` is inside an
  // item of it.
  bool InsideCandidateItem(uint32_t f) const;
  // A value begins at `offset` directly in the top frame (an item when that is an array).
  void BeginValue(uint32_t offset);

  std::string text_;
  std::vector<Frame> frames_;  // every container opened (popped ones stay, for undo)
  std::vector<ItemRecord> items_;
  std::string canon_;  // the items' canonical forms, back to back
  std::vector<Undo> undo_;
  std::string scratch_;
  Mode mode_ = kOutside;
  uint8_t literal_left_ = 0;
  uint8_t last_token_ = 0;  // the last structural byte outside strings
  bool scalar_is_item_ = false;
  bool string_is_key_ = false;
  uint32_t scalar_start_ = 0;
  uint32_t top_ = kNone;
  uint32_t opened_ = kNone;
};

}  // namespace gbnf::detail
