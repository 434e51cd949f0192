// Random sentences of a grammar's rules, of about a target length: the doctor's samples for
// measuring how the matcher's state grows (ambiguous_growth). The same derivations as
// python/gbnf_sampler/doctor/sample.py's Sampler, the reference the tests compare this with: same
// random numbers (SplitMix64), same choices, same UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/shortest_derivation.h"

namespace gbnf::detail {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n) for n >= 1: the top bits of a draw, drawn again while too large.
  uint64_t Below(uint64_t n) {
    int bits = 0;
    for (uint64_t v = n; v != 0; v >>= 1) ++bits;
    for (;;) {
      const uint64_t r = Next() >> (64 - bits);
      if (r < n) return r;
    }
  }

 private:
  uint64_t state_;
};

// Thrown by SentenceSampler when it cannot follow the reference exactly: a token reference on the
// way (no byte-level sentence), or lengths past what 64-bit arithmetic holds.
struct UnsampledSentence {};

class SentenceSampler {
 public:
  // `minimums`: ShortestDerivations of `grammar` (at least of the rules sampled). `favoured`: per
  // rule, 1 for the rules of the cycle whose alternatives are favoured (an alternative that
  // references one of them is taken while `wind_down` or more code points are left before the
  // target); empty: no alternative is favoured.
  SentenceSampler(const Grammar& grammar, const std::vector<Derivation>& minimums, uint64_t seed,
                  std::vector<uint8_t> favoured, int64_t wind_down);

  // A sentence of `root` of about `target` code points, UTF-8 (surrogates encoded plainly, as
  // Python's "surrogatepass"), into *out; false when the rule has no derivation. Throws
  // UnsampledSentence.
  bool Sentence(RuleId root, int64_t target, std::string* out);

 private:
  Derivation Minimum(NodeId id);
  // Code points emitted; pushes the children to expand next on work_ (in reverse).
  int64_t Expand(NodeId id, int64_t room, std::string* out);
  NodeId Choose(const Node& node, int64_t room);
  uint64_t Count(const Node& node, int64_t room);
  uint32_t Char(const Node& node);
  bool Favoured(NodeId alternative);

  const Grammar& grammar_;
  const std::vector<Derivation>& minimums_;
  SplitMix64 rng_;
  std::vector<uint8_t> favoured_rules_;
  int64_t wind_down_;
  std::vector<Derivation> node_minimums_;  // by node; length kUnknown until evaluated
  std::vector<uint8_t> favoured_nodes_;    // by node: 0 unknown, 1 no, 2 yes
  std::vector<NodeId> work_;
  std::vector<NodeId> options_;
  std::vector<NodeId> chosen_;
};

}  // namespace gbnf::detail
