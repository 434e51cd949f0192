// How the matcher's state grows on sample sentences of a rule: the measurement behind the
// doctor's ambiguous_growth (python/gbnf_sampler/doctor/growth.py, `_measure`, the reference the
// tests compare this with). Sentences of increasing target lengths (SentenceSampler, biased
// towards the alternatives that recurse into the cycle) are fed to a byte-level Matcher a chunk
// at a time, and the largest state seen is kept per length.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/grammar.h"
#include "grammar/shortest_derivation.h"

namespace gbnf::detail {

// growth.py's constants, passed in so that they have one home.
struct GrowthSettings {
  std::vector<int64_t> lengths;  // target lengths (code points), shortest first
  uint32_t samples = 2;          // sentences per length
  uint32_t chunk = 4;            // bytes fed per step (the state is read between steps)
  int64_t min_growth = 8;        // items: a smaller step is noise
  double ratio = 1.8;            // each length's largest state must exceed the last's this much
  int64_t wind_down = 8;         // code points before the target where every alternative counts
  uint32_t state_cap = 0;        // the matcher's max_state_size (reaching it counts as the cap)
  size_t history_bytes = 0;      // the matcher's max_history_bytes
};

struct GrowthMeasurement {
  std::vector<uint64_t> sizes;    // per length measured: the largest state
  std::vector<uint64_t> fed;      // bytes fed until then
  std::vector<uint64_t> lengths;  // the longest sentence (bytes)
};

// Measures `root` of `grammar`, whose automaton `automaton` starts at `root`; `cycle`: per rule, 1
// for the cycle's members; `minimums`: ShortestDerivations of `grammar`. Stops after the first
// length that does not grow over the one before. Throws UnsampledSentence (sentence_sampler.h)
// where the sampler cannot follow the reference.
GrowthMeasurement MeasureGrowth(std::shared_ptr<const Automaton> automaton, const Grammar& grammar,
                                const std::vector<Derivation>& minimums, RuleId root,
                                std::vector<uint8_t> cycle, const GrowthSettings& settings,
                                uint64_t seed);

}  // namespace gbnf::detail
