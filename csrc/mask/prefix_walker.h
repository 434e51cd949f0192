// PrefixWalker: runs a parser over the bytes of a token trie walk, keeping one saved parser state
// per byte of the prefix it holds, so that going back to a shorter prefix costs one copy and a
// common prefix is parsed once. The parser's graph-structured stack is put in speculative mode
// (append only) between Begin and End, and everything created since Begin is dropped by End.
// Allocates only while its buffers grow (the first walks).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "matcher/parser.h"

namespace gbnf::detail {

class PrefixWalker {
 public:
  // Level 0 is the parser's current state.
  void Begin(Parser* parser, size_t max_token_length);
  // Puts the parser back in its state at Begin.
  void End();

  uint32_t held() const { return held_; }
  // Pops back to `keep` bytes (keep <= held()), then advances over `add` byte by byte while the
  // grammar allows; returns how many bytes of `add` were taken (held() == keep + that).
  size_t Extend(uint32_t keep, std::string_view add);
  // The last Extend stopped on a byte whose step exceeded max_state_size (not a plain refusal).
  bool limited() const { return limited_; }
  // complete() was true at some level in [1, level]: in an isolated walk (Parser::
  // ResetIsolated), the rule invocation could end after consuming between 1 and `level` bytes.
  // (Level 0 is left out on purpose: see state_mask.h.)
  bool CompleteWithin(uint32_t level) const { return complete_upto_[level] != 0; }

 private:
  struct Level {
    std::vector<Item> items;
    Gss::MarkPoint mark;
    bool complete = false;
  };
  void PopTo(uint32_t keep);
  void Save(uint32_t level);

  Parser* parser_ = nullptr;
  std::vector<Level> levels_;
  std::vector<uint8_t> complete_upto_;
  uint32_t held_ = 0;
  bool limited_ = false;
};

}  // namespace gbnf::detail
