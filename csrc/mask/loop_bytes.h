// LoopBytes: bytes that a walk configuration takes, found by the ConfigWalker's own steps (so
// the answer is the recognizer's), with how many characters of them it takes in a row.
//
// Loops (budget kUnbounded): the bytes over which the configuration steps back to its own shape
// (ConfigWalker::ShapeOf); any string of them is taken whole:
//   * an ASCII byte b loops when the step over b gives a configuration of the same shape;
//   * non-ASCII bytes loop together or not at all: when every valid multi-byte character is
//     taken byte by byte and gives the shape back at its end (checked over the product of the
//     walk's configurations with the UTF-8 DFA), every string of valid UTF-8 (its last character
//     may be cut short) is taken.
// Chains (a finite budget): a bounded repetition (a string with maxLength, x{0,40}) never comes
// back to its shape, it counts. When the configuration has no loop bytes, the ASCII bytes that
// most of them step to one configuration C1 are followed: if each of them steps C1 to one C2,
// C2 to one C3 and so on, any string of at most `budget` characters of them (and of multi-byte
// characters, when each of those steps C_i to C_i+1 as well) is taken. The configurations of
// the chain are remembered with the budget they have left, and whether a longer string of the
// chain's bytes is plainly refused (longer_refused).
// mask/loop_walk.h accepts tokens, and whole trie subtrees, from their bytes alone with these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gbnf_sampler/vocab.h"
#include "mask/config_walker.h"

namespace gbnf::detail {

struct LoopBytes {
  static constexpr uint32_t kUnbounded = UINT32_MAX;

  uint64_t ascii[2] = {0, 0};  // bit b & 63 of word b >> 6: ASCII byte b is taken
  bool non_ascii = false;      // every valid multi-byte character is taken
  uint32_t budget = kUnbounded;  // characters taken in a row (kUnbounded: a loop)
  // A chain whose last configuration refuses every byte it takes, and none of whose
  // configurations after this one may end the rule invocation: a string of these bytes longer
  // than the budget is refused, and not for lack of context (no completion on the way).
  bool longer_refused = false;

  bool any() const { return ((ascii[0] | ascii[1]) != 0 || non_ascii) && budget > 0; }
};

// (configuration, UTF-8 state) pairs the multi-byte check explores before it gives up
// (non_ascii stays false: tokens with such bytes are walked).
inline constexpr size_t kMaxLoopPairs = 64;
// The longest chain followed: each link costs a few hundred table steps, and tokens of more
// characters are rare (they are walked).
inline constexpr uint32_t kMaxChain = 32;
// The fewest ASCII bytes a chain's class holds (fewer: a literal, walked as it is).
inline constexpr size_t kMinChainBytes = 4;
// How far around a chain's configuration a twin must agree for the next link to be the last one
// shifted: a character's step reads at most its 4 bytes ahead (and twice that, to be sure).
inline constexpr uint32_t kTwinStepRadius = 8;

// The loop bytes of walk configurations, memoized by shape for one walk (between Begin and End
// of one ConfigWalker).
class LoopFinder {
 public:
  // The loop bytes of the configuration the walker holds at `level` (<= held(), in the memo),
  // found if needed; the walker then holds `level` bytes.
  LoopBytes At(ConfigWalker& walker, uint32_t level);
  // Those already found for this configuration or one of its shape, else none.
  const LoopBytes* Known(ConfigWalker& walker, uint32_t level);

 private:
  // The index in found_ of the configuration's loop bytes, -1 if not found yet.
  int32_t& SlotOf(std::vector<int32_t>* slots, uint32_t id);
  bool SameShape(ConfigWalker& walker, int32_t a, int32_t b);
  LoopBytes Find(ConfigWalker& walker, uint32_t level);
  // Whether every valid multi-byte character (and every prefix of one) is taken from `from`
  // (reached from `level` over `path`), each whole character ending in a configuration that
  // `ends(config)` accepts.
  template <typename Ends>
  bool MultiByteTaken(ConfigWalker& walker, uint32_t level, std::string_view path, int32_t from,
                      Ends&& ends);
  // The chain from the configuration at `level` (no loop bytes), given its steps over ASCII.
  LoopBytes FindChain(ConfigWalker& walker, uint32_t level, const int32_t* next);
  bool EndRefuses(ConfigWalker& walker, uint32_t level, const LoopBytes& chain, int32_t last);
  uint32_t TwinLinks(ConfigWalker& walker, int32_t from, int32_t to, uint32_t limit);
  void Remember(ConfigWalker& walker, int32_t config, const LoopBytes& loops);
  int32_t StepFrom(ConfigWalker& walker, uint32_t level, int32_t config, std::string_view path,
                   uint8_t byte);

  std::vector<LoopBytes> found_;
  std::vector<int32_t> by_config_;
  std::vector<int32_t> by_shape_;
  size_t num_looping_ = 0;  // found_ entries with loop bytes
  // Scratch: of the multi-byte check, of StepFrom, of FindChain (the chain's configurations
  // and the bytes to its last one).
  std::vector<std::pair<int32_t, uint8_t>> seen_;
  std::string step_;
  std::vector<int32_t> chain_;
  std::vector<StateId> twin_states_;  // TwinLinks' scratch
  std::string chain_path_;
  bool completes_inside_ = false;  // a configuration inside a multi-byte character completes
};

}  // namespace gbnf::detail
