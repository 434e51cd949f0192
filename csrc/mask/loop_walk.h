// The fast classification walk (state_mask.h's ClassifyRange): the reference walk over the token
// trie, stepping a ConfigWalker, plus subtree jumps where the parser loops.
//
// After the walker takes a whole token p whose subtree is large enough, the loop bytes of the
// configuration it holds (loop_bytes.h) decide what is below p without walking it:
//   * when every byte the tokens below p add loops (TokenTrie::below_ascii, byte_flags), the
//     whole subtree is accepted and jumped over;
//   * when those bytes are a chain's (a bounded repetition) and only some tokens are too long,
//     the short ones are accepted from their character counts and the long ones are refused;
//   * otherwise p becomes a cover: each token below p whose bytes past p all loop is accepted
//     from its bytes alone (a scan, no parser step), with its own subtree when that is made of
//     looping bytes too; only the others are walked (inside a string body: the tokens holding a
//     quote, a backslash, a control byte or broken UTF-8).
// Where the loop bytes are a wide class with the space (a string body's, a comment's), the
// vocabulary's list of the tokens made only of that class (TokenTrie::RunsInside: JSON's string
// bodies listed with the trie, other classes once per vocabulary by a background worker)
// replaces the scans: a cover whose root is in the class accepts those tokens run by run and
// walks only the others, and a state that loops itself is one cover from the start (in a JSON
// string body, a few thousand tokens of 128k-262k are walked). Where every character of the
// class leads such a state back to one configuration, the others are walked by their tails
// instead, as a trie (mask/tail_walk.cc): a few hundred steps.
// Accepted and dependent positions are kept as runs (a jump is one run); the result is the
// reference walk's, position for position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gbnf_sampler/vocab.h"
#include "mask/config_walker.h"
#include "mask/loop_bytes.h"
#include "mask/state_mask.h"

namespace gbnf::detail {

class LoopWalk {
 public:
  // A subtree of this many tokens or fewer is walked, not tested for a jump; past kMinFind
  // tokens the loop bytes of the walker's configuration are found when no configuration of its
  // shape had them found yet (a search costs a few hundred table steps), unless no edge of the
  // configuration takes kMinChainBytes bytes or more (a literal).
  static constexpr size_t kMinJump = 4;
  static constexpr size_t kMinFind = 256;
  // Loops of fewer ASCII bytes (digits, whitespace) hold few tokens, whose subtrees the jumps
  // find: the trie's runs of their class (one pass over the vocabulary's bytes, once) would
  // not pay.
  static constexpr int kMinInsideBytes = 32;

  // Appends to `accepted` and `dependent` (position runs: state_mask.h).
  LoopWalk(ConfigWalker& walker, const TokenTrie& trie, PositionRuns* accepted,
           PositionRuns* dependent)
      : walker_(walker), trie_(trie), accepted_(accepted), dependent_(dependent) {}

  // Classifies the positions [from, to); returns the numbers of accepted and dependent ones.
  std::pair<size_t, size_t> Run(size_t from, size_t to);

 private:
  struct Cover {
    size_t end;      // the cover's subtree is (root, end)
    uint32_t depth;  // bytes of its root
    LoopBytes loops;
    // A string of the chain's bytes past its budget is refused, and nothing completed before the
    // root: such tokens are rejected without a walk.
    bool refuses_longer;
    uint64_t char_limit;  // characters of the root plus the budget
    // For loops (no budget), the trie's positions made only of loop bytes, when the trie keeps
    // that class: each is taken whole from anywhere in the cover, so runs of them are accepted
    // without a look at their bytes. next_run: the first run that may end after the position.
    const TokenTrie::ClassRuns* inside = nullptr;
    size_t next_run = 0;
  };
  // A covered token at `pos` (with its subtree when that is covered too) is accepted; returns
  // the next position, or `pos` when the token is not covered.
  size_t TryCover(const Cover& cover, size_t pos, size_t to);
  // With cover.inside: accepts the rest of the run of loop-byte positions that `pos` is in;
  // returns the next position (`pos` when it is in no run: walked) and a lower bound of the
  // lcps jumped over (what the walk may keep of the prefix it holds).
  struct Skip {
    size_t next;
    uint32_t lcp;
  };
  Skip SkipInside(Cover* cover, size_t pos, size_t to);
  static TokenTrie::ByteClass ClassOf(const LoopBytes& loops);
  // The trie's runs of the class of `loops` (a loop, no budget), or null.
  const TokenTrie::ClassRuns* InsideOf(const LoopBytes& loops);
  // Pushes `cover` (its subtree starts after `pos`, its root), with the trie's runs of its loop
  // bytes when the root's bytes are in the class too (or there is no root: root_taken), so
  // that a token below is in the class exactly when its tail is.
  void PushCover(Cover cover, size_t pos, bool root_taken);
  // A cover of the whole range [from, to) when the state itself loops (depth 0) and the trie
  // keeps the runs of its loop bytes; true when the range was classified outright instead
  // (WalkRunsAndTails).
  bool CoverTheStart(size_t from, size_t to);
  // (mask/tail_walk.cc.) When one character of `cls` leads the start to a configuration that
  // every whole character of the class, from the start or from there, leads to again (the same
  // items, stack and completion, not only the same shape), and no byte of one completes, a
  // token of the class's characters and then a tail is classified by its tail alone, from the
  // start (no prefix) or from that configuration: the runs are accepted, and the tails walked
  // as a trie, each refused tail prefix refusing every tail below it. Classifies [from, to) so
  // and returns true, or returns false having classified nothing.
  bool WalkRunsAndTails(const TokenTrie::ClassRuns& inside, const TokenTrie::ByteClass& cls,
                        size_t from, size_t to);
  // Every whole character of `cls`, from the configuration the walker holds at `level`, leads
  // to `target`, and none of its bytes completes (`seen`: as CharactersReturn's).
  bool CharactersLead(uint32_t level, int32_t target, const TokenTrie::ByteClass& cls,
                      std::vector<std::pair<uint8_t, int32_t>>* seen);
  // The multi-byte characters from `level` (the walker holds a character's first bytes there,
  // UTF-8 state `utf8`) lead to `target`; `seen`: the (state, configuration) pairs explored.
  bool CharactersReturn(uint32_t level, uint8_t utf8, int32_t target,
                        std::vector<std::pair<uint8_t, int32_t>>* seen);
  int32_t StepOf(int32_t config, uint32_t level, uint8_t byte);
  struct TailResults {
    std::vector<uint32_t> taken;      // positions
    std::vector<uint32_t> dependent;  // positions
  };
  void WalkTails(const TokenTrie::TailList& list, size_t from, size_t to, uint32_t base,
                 TailResults* out);
  void AcceptRunsAndTails(const TokenTrie::ClassRuns& inside, size_t from, size_t to,
                          std::vector<uint32_t>* taken);
  // After the walker took the whole token at `pos`: jumps its subtree, or makes it a cover;
  // returns the next position.
  size_t AfterTaken(size_t pos, size_t to);
  void AcceptShort(size_t pos, size_t end, uint64_t limit);
  void Accept(size_t from, size_t to) {
    AddRun(accepted_, from, to);
    num_accepted_ += to - from;
  }
  static void AddRun(PositionRuns* runs, size_t from, size_t to) {
    if (!runs->empty() && runs->back().second == from) {
      runs->back().second = static_cast<uint32_t>(to);
    } else {
      runs->emplace_back(static_cast<uint32_t>(from), static_cast<uint32_t>(to));
    }
  }

  ConfigWalker& walker_;
  const TokenTrie& trie_;
  PositionRuns* accepted_;
  PositionRuns* dependent_;
  LoopFinder loops_;
  std::vector<Cover> covers_;  // nested: each inside the one before
  // The classes looked up in the trie during this walk (RunsInside takes a lock).
  std::vector<std::pair<TokenTrie::ByteClass, const TokenTrie::ClassRuns*>> inside_;
  size_t num_accepted_ = 0;
  size_t num_dependent_ = 0;
};

}  // namespace gbnf::detail
