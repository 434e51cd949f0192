#include "matcher/growth_probe.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "gbnf_sampler/error.h"
#include "gbnf_sampler/matcher.h"
#include "grammar/sentence_sampler.h"

namespace gbnf::detail {
namespace {

struct Largest {
  uint64_t size = 0;
  uint64_t fed = 0;
  friend bool operator<(const Largest& a, const Largest& b) {
    return a.size != b.size ? a.size < b.size : a.fed < b.fed;
  }
};

// The largest state seen while feeding `data` a chunk at a time, and the bytes fed until then;
// stops once the state reaches `enough` (growth is shown, the rest would only cost time).
Largest LargestState(const std::shared_ptr<const Automaton>& automaton, std::string_view data,
                     uint64_t enough, const GrowthSettings& settings) {
  MatcherLimits limits;
  limits.max_state_size = settings.state_cap;
  limits.max_rollback = 0;
  limits.max_history_bytes = settings.history_bytes;
  Matcher matcher(automaton, limits);
  uint64_t largest = matcher.StateSize();
  uint64_t fed = 0;
  try {
    for (size_t end = settings.chunk; end < data.size() + settings.chunk; end += settings.chunk) {
      fed = end;
      if (!matcher.AcceptBytes(data.substr(end - settings.chunk, settings.chunk))) break;
      largest = std::max<uint64_t>(largest, matcher.StateSize());
      if (largest >= enough) break;
    }
  } catch (const LimitError&) {
    return {settings.state_cap, fed};
  }
  return {largest, std::min<uint64_t>(fed, data.size())};
}

// Every length measured so far grew over the one before (growth.py's Measurement.steps_grow).
bool StepsGrow(const GrowthMeasurement& m, const GrowthSettings& settings) {
  for (size_t k = 1; k < m.sizes.size(); ++k) {
    if (m.lengths[k] < 3 * std::max<uint64_t>(m.lengths[k - 1], 1)) return false;
  }
  for (size_t k = 1; k < m.sizes.size(); ++k) {
    const auto a = static_cast<double>(m.sizes[k - 1]);
    if (static_cast<double>(m.sizes[k]) < settings.ratio * a) return false;
    if (static_cast<int64_t>(m.sizes[k] - m.sizes[k - 1]) < settings.min_growth) return false;
  }
  return true;
}

}  // namespace

GrowthMeasurement MeasureGrowth(std::shared_ptr<const Automaton> automaton, const Grammar& grammar,
                                const std::vector<Derivation>& minimums, RuleId root,
                                std::vector<uint8_t> cycle, const GrowthSettings& settings,
                                uint64_t seed) {
  SentenceSampler sampler(grammar, minimums, seed, std::move(cycle), settings.wind_down);
  GrowthMeasurement m;
  std::string text;
  for (int64_t target : settings.lengths) {
    const uint64_t enough =
        m.sizes.empty()
            ? settings.state_cap
            : static_cast<uint64_t>(settings.ratio * static_cast<double>(m.sizes.back())) +
                  static_cast<uint64_t>(settings.min_growth);
    Largest best;
    uint64_t longest = 0;
    for (uint32_t s = 0; s < settings.samples; ++s) {
      if (!sampler.Sentence(root, target, &text)) break;
      best = std::max(best, LargestState(automaton, text, enough, settings));
      longest = std::max<uint64_t>(longest, text.size());
    }
    m.sizes.push_back(best.size);
    m.fed.push_back(best.fed);
    m.lengths.push_back(longest);
    if (!StepsGrow(m, settings)) break;
  }
  return m;
}

}  // namespace gbnf::detail
