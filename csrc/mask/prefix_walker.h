// PrefixWalker: runs the Earley recognizer over the bytes of a token trie walk, keeping one saved
// recognizer state per byte of the prefix it holds, so that going back to a shorter prefix costs
// one copy and a common prefix is parsed once. The recognizer's graph-structured stack is put in
// speculative mode (append only) between Begin and End, and everything created since Begin is
// dropped by End.
// Allocates only while its buffers grow (the first walks).
//
// Fast path: a level whose items all sit in one stack node at states without rule calls is
// "pure": its next level is the plain NFA step over byte edges, computed without the recognizer
// (no stack work) as long as the targets are pure too and completing the node cannot resume a
// caller (the node has no continuations, or no target is final). The recognizer is brought to
// a level only when a step needs it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "matcher/recognizer.h"

namespace gbnf::detail {

class PrefixWalker {
 public:
  // Level 0 is the recognizer's current state.
  void Begin(Recognizer* recognizer, size_t max_token_length);
  // Puts the recognizer back in its state at Begin.
  void End();

  uint32_t held() const { return held_; }
  // Pops back to `keep` bytes (keep <= held()), then advances over `add` byte by byte while the
  // grammar allows; returns how many bytes of `add` were taken (held() == keep + that).
  size_t Extend(uint32_t keep, std::string_view add);
  // The last Extend stopped on a byte whose step exceeded max_state_size (not a plain refusal).
  bool limited() const { return limited_; }
  // complete() was true at some level in [1, level]: in an isolated walk (Recognizer::
  // ResetIsolated), the rule invocation could end after consuming between 1 and `level` bytes.
  // (Level 0 is left out on purpose: see state_mask.h.)
  bool CompleteWithin(uint32_t level) const { return complete_upto_[level] != 0; }

 private:
  struct Level {
    std::vector<Item> items;
    Gss::MarkPoint mark;
    bool complete = false;
    bool pure = false;
  };
  void Save(uint32_t level);
  bool IsPure(const std::vector<Item>& items) const;
  // Pure level held_ -> held_ + 1 over `byte`; 1 taken, 0 refused, -1 needs the recognizer.
  int PureStep(uint8_t byte);
  bool RecognizerStep(uint8_t byte);
  void SyncRecognizer();

  Recognizer* recognizer_ = nullptr;
  uint32_t recognizer_level_ = 0;  // the level the recognizer's state is at
  std::vector<Level> levels_;
  std::vector<uint8_t> complete_upto_;
  uint32_t held_ = 0;
  bool limited_ = false;
};

}  // namespace gbnf::detail
