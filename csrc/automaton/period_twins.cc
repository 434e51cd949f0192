// Twins among the copies of a repetition. x{0,2000} builds 2000 copies of x, so a position
// inside a long count is a new state at every step, each needing its own mask, though all but
// the last few have the same future. The state s + P (P: the states per copy) is the twin of s
// within radius r when the automaton around s + P, up to r bytes, is the automaton around s
// shifted: every state within r bytes of s has the same final kind and edges as its image,
// the image being the state P further inside the copies and the state itself outside them.
// That map is then an isomorphism of the two balls of radius r (state_key.h), so the two states
// have equal keys of that radius and the same classification wherever it reads no further: the
// mask cache takes the earlier twin's entry (cache_core.cc) instead of writing a key of
// thousands of states for every position.
//
// Found per repetition (NfaPeriod) of at least kMinTwinCopies copies: a state is "bad" when its
// record does not map (inside the copies but the last: its final kind or edges differ from
// those of its image, or an edge leads into the last copy, where the shift leaves the copies;
// outside them: an edge leads into them), and s agrees with s + P within the distance to the
// nearest bad state minus one byte. Distances are the keys' (a byte edge costs one byte, a
// call none), and a call of a rule that reaches this one (its recursive component) is taken to
// lead back to this rule's start at no cost. The search outside the copies stops after
// kOutsideBudget states; where it stops counts as bad. Agreement is counted up to kAgreeCap
// bytes (the longest tokens of Llama-3, Qwen2 and Gemma hold 128, 128 and 48 bytes; a
// vocabulary with a token of kAgreeCap bytes or more gets no twins), so distances settle
// within that many bytes of a count's end.
//
// The copies are checked one against the next in one pass over their edge slices; distances
// are settled copy by copy from the end, and once a copy's distances equal the next copy's,
// every earlier copy that maps to its successor has them too (each copy's distances are the
// same function of the next copy's), so a long count costs one pass over its edges.
#include <algorithm>
#include <deque>
#include <vector>

#include "automaton/assembler.h"
#include "grammar/rule_facts.h"

namespace gbnf {
namespace {

constexpr uint32_t kMinTwinCopies = 8;
constexpr uint32_t kUnknown = UINT32_MAX;
constexpr uint32_t kAgreeCap = 256;
constexpr size_t kOutsideBudget = 4096;

// One repetition's copies [lo, hi) of `period` states each, in one rule's FSM.
class TwinFinder {
 public:
  TwinFinder(const AssembledRule& a, StateId lo, StateId hi, uint32_t period,
             const std::vector<uint32_t>& recursion, RuleId rule, std::vector<uint32_t>* slot)
      : a_(a), lo_(lo), hi_(hi), last_(hi - period), period_(period), recursion_(recursion),
        rule_(rule), slot_(*slot) {}
  // Copies [first, last) map onto the next one whole (the assembler shifted them): not compared.
  void KnownToMap(uint32_t first, uint32_t last) {
    known_first_ = first;
    known_last_ = last;
  }
  // Writes the twins found into `twin_period` / `twin_agree` (sized to the rule's states).
  void Run(std::vector<uint32_t>* twin_period, std::vector<uint32_t>* twin_agree);

 private:
  bool InCopies(StateId s) const { return s >= lo_ && s < hi_; }
  StateId Image(StateId s) const {
    return s < lo_ || s >= hi_ ? s : s < last_ ? s + period_ : kUnknown;
  }
  bool RangeMaps(StateId s, uint32_t count);
  // Whether a call of `callee` may lead back to this rule's start (when the facts say nothing,
  // it may).
  bool CallsBack(RuleId callee) const {
    return callee >= recursion_.size() || rule_ >= recursion_.size() ||
           (recursion_[callee] != detail::kNotRecursive && recursion_[callee] == recursion_[rule_]);
  }
  void NoteOutside(StateId target);
  void SearchOutside();
  uint32_t Relaxed(StateId s, uint32_t d) const;
  bool SettleCopy(uint32_t copy);
  uint32_t DistanceOf(StateId s) const {
    return s >= lo_ && s < last_ ? dist_[s - lo_] : outside_dist_[slot_[s]];
  }

  const AssembledRule& a_;
  StateId lo_, hi_, last_;
  uint32_t period_;
  const std::vector<uint32_t>& recursion_;
  RuleId rule_;
  std::vector<uint32_t>& slot_;   // per state outside the copies: its index in outside_
  std::vector<uint32_t> dist_;    // per state of the copies but the last: bytes to a bad state
  std::vector<uint8_t> maps_;     // per copy but the last: it maps onto the next one whole
  std::vector<StateId> outside_;  // states outside the copies that the copies reach
  std::vector<uint32_t> outside_dist_;
  uint32_t known_first_ = 0, known_last_ = 0;
};

void TwinFinder::NoteOutside(StateId s) {
  if (InCopies(s) || slot_[s] != kUnknown) return;
  slot_[s] = static_cast<uint32_t>(outside_.size());
  outside_.push_back(s);
}

// States [s, s + count) against the same states one copy further: the same CSR shape, final
// kinds and edges, targets imaged. Notes the targets outside the copies on the way (a state
// that fails may add a few: they are only searched).
bool TwinFinder::RangeMaps(StateId s, uint32_t count) {
  const StateId t = s + period_;
  const uint32_t bs = a_.byte_begin[s], bt = a_.byte_begin[t];
  const uint32_t cs = a_.call_begin[s], ct = a_.call_begin[t];
  for (uint32_t k = 1; k <= count; ++k) {
    if (a_.byte_begin[s + k] - bs != a_.byte_begin[t + k] - bt ||
        a_.call_begin[s + k] - cs != a_.call_begin[t + k] - ct ||
        a_.final[s + k - 1] != a_.final[t + k - 1]) {
      return false;
    }
  }
  const uint32_t nb = a_.byte_begin[s + count] - bs;
  for (uint32_t i = 0; i < nb; ++i) {
    const ByteEdge& e = a_.bytes[bs + i];
    const ByteEdge& f = a_.bytes[bt + i];
    if (e.lo != f.lo || e.hi != f.hi || Image(e.target) != f.target) return false;
    NoteOutside(e.target);
  }
  const uint32_t nc = a_.call_begin[s + count] - cs;
  for (uint32_t i = 0; i < nc; ++i) {
    const CallEdge& e = a_.calls[cs + i];
    const CallEdge& f = a_.calls[ct + i];
    if (e.rule != f.rule || Image(e.target) != f.target) return false;
    NoteOutside(e.target);
    if (CallsBack(e.rule)) NoteOutside(0);
  }
  return true;
}

// The states outside the copies that the copies reach, and what those reach in turn (up to the
// budget), with their distances to a bad state: one that leads into the copies, or one where
// the search stopped. Their edges never lead into the copies but from a bad state, so these
// distances are settled before any copy's.
void TwinFinder::SearchOutside() {
  std::vector<uint8_t> bad;
  for (size_t i = 0; i < outside_.size(); ++i) {
    const StateId s = outside_[i];
    bool is_bad = outside_.size() > kOutsideBudget;
    for (uint32_t k = a_.byte_begin[s]; !is_bad && k < a_.byte_begin[s + 1]; ++k) {
      is_bad = InCopies(a_.bytes[k].target);
    }
    for (uint32_t k = a_.call_begin[s]; !is_bad && k < a_.call_begin[s + 1]; ++k) {
      is_bad = InCopies(a_.calls[k].target);
    }
    bad.push_back(is_bad ? 1 : 0);
    if (is_bad) continue;
    for (uint32_t k = a_.byte_begin[s]; k < a_.byte_begin[s + 1]; ++k) {
      NoteOutside(a_.bytes[k].target);
    }
    for (uint32_t k = a_.call_begin[s]; k < a_.call_begin[s + 1]; ++k) {
      NoteOutside(a_.calls[k].target);
      if (CallsBack(a_.calls[k].rule)) NoteOutside(0);
    }
  }
  // Backward 0-1 breadth-first search from the bad states over the good states' edges.
  const size_t m = outside_.size();
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> into(m);  // (predecessor, cost)
  for (uint32_t i = 0; i < m; ++i) {
    if (bad[i]) continue;
    const StateId s = outside_[i];
    for (uint32_t k = a_.byte_begin[s]; k < a_.byte_begin[s + 1]; ++k) {
      into[slot_[a_.bytes[k].target]].push_back({i, 1});
    }
    for (uint32_t k = a_.call_begin[s]; k < a_.call_begin[s + 1]; ++k) {
      into[slot_[a_.calls[k].target]].push_back({i, 0});
      if (CallsBack(a_.calls[k].rule)) into[slot_[0]].push_back({i, 0});
    }
  }
  outside_dist_.assign(m, kUnknown);
  std::deque<uint32_t> queue;
  for (uint32_t i = 0; i < m; ++i) {
    if (bad[i]) {
      outside_dist_[i] = 0;
      queue.push_back(i);
    }
  }
  while (!queue.empty()) {
    const uint32_t v = queue.front();
    queue.pop_front();
    for (const auto& [u, cost] : into[v]) {
      if (outside_dist_[v] + cost >= outside_dist_[u]) continue;
      outside_dist_[u] = outside_dist_[v] + cost;
      cost == 0 ? queue.push_front(u) : queue.push_back(u);
    }
  }
}

// The distance of good state s (in the copies) from its edges' targets' distances, at most d.
uint32_t TwinFinder::Relaxed(StateId s, uint32_t d) const {
  for (uint32_t k = a_.byte_begin[s]; k < a_.byte_begin[s + 1]; ++k) {
    const uint32_t t = DistanceOf(a_.bytes[k].target);
    if (t != kUnknown) d = std::min(d, t + 1);
  }
  for (uint32_t k = a_.call_begin[s]; k < a_.call_begin[s + 1]; ++k) {
    d = std::min(d, DistanceOf(a_.calls[k].target));
    if (CallsBack(a_.calls[k].rule)) d = std::min(d, DistanceOf(0));
  }
  return std::min(d, kAgreeCap);
}

// Settles the distances of one copy, the later copies' being settled: sweeps over its states
// until none changes (a copy's edges lead within it or forward). False when an edge leads back
// into an earlier copy, or the sweeps do not settle.
bool TwinFinder::SettleCopy(uint32_t copy) {
  const StateId s0 = lo_ + copy * period_;
  // Edges that lead to an earlier state of this copy need more than one sweep (from the
  // copy's last state back); one into an earlier copy, a search of its own.
  bool forward = true;
  for (StateId s = s0; s < s0 + period_; ++s) {
    if (dist_[s - lo_] == 0) continue;
    auto check = [&](StateId t) {
      if (t >= lo_ && t < s0) return false;
      forward = forward && !(t >= s0 && t < s);
      return true;
    };
    for (uint32_t k = a_.byte_begin[s]; k < a_.byte_begin[s + 1]; ++k) {
      if (!check(a_.bytes[k].target)) return false;
    }
    for (uint32_t k = a_.call_begin[s]; k < a_.call_begin[s + 1]; ++k) {
      if (!check(a_.calls[k].target)) return false;
    }
  }
  for (uint32_t sweep = 0; sweep <= period_; ++sweep) {
    bool changed = false;
    for (StateId s = s0 + period_; s-- > s0;) {
      uint32_t& d = dist_[s - lo_];
      if (d == 0) continue;
      const uint32_t relaxed = Relaxed(s, d);
      changed = changed || relaxed != d;
      d = relaxed;
    }
    if (!changed || forward) return true;
  }
  return false;
}

void TwinFinder::Run(std::vector<uint32_t>* twin_period, std::vector<uint32_t>* twin_agree) {
  const uint32_t copies = (hi_ - lo_) / period_ - 1;  // every copy but the last
  dist_.assign(last_ - lo_, kUnknown);
  maps_.assign(copies, 0);
  for (uint32_t c = 0; c < copies; ++c) {
    maps_[c] = (c >= known_first_ && c < known_last_) || RangeMaps(lo_ + c * period_, period_);
    if (maps_[c]) continue;
    for (StateId s = lo_ + c * period_; s < lo_ + (c + 1) * period_; ++s) {
      if (!RangeMaps(s, 1)) dist_[s - lo_] = 0;
    }
  }
  SearchOutside();
  bool settled = true;
  for (uint32_t c = copies; settled && c-- > 0;) {
    const bool steady = c + 2 < copies && maps_[c] && maps_[c + 1] &&
                        std::equal(dist_.begin() + (c + 1) * period_,
                                   dist_.begin() + (c + 2) * period_,
                                   dist_.begin() + (c + 2) * period_);
    if (steady) {
      std::copy_n(dist_.begin() + (c + 1) * period_, period_, dist_.begin() + c * period_);
    } else {
      settled = SettleCopy(c);
    }
  }
  if (settled) {
    for (StateId s = lo_; s < last_; ++s) {
      const uint32_t d = dist_[s - lo_];
      const uint32_t agree = d == kUnknown ? kAgreeCap : d == 0 ? 0 : d - 1;
      if (agree > 0 && agree > (*twin_agree)[s + period_]) {
        (*twin_period)[s + period_] = period_;
        (*twin_agree)[s + period_] = agree;
      }
    }
  }
  for (StateId s : outside_) slot_[s] = kUnknown;
}

}  // namespace

void AutomatonAssembler::FindPeriodTwins(const std::vector<uint32_t>& recursion, RuleId rule) {
  std::vector<uint32_t> slot;  // per state: its index among the states searched, reset after each
  for (const detail::NfaPeriod& p : nfa_.periods) {
    if (p.copies < kMinTwinCopies) continue;
    const auto first_from = [&](StateId nfa_state) {
      return static_cast<StateId>(
          std::lower_bound(important_.begin(), important_.end(), nfa_state) - important_.begin());
    };
    const StateId lo = first_from(p.lo);
    const StateId hi = first_from(p.hi);
    if (lo == 0 || hi <= lo || (hi - lo) % p.copies != 0) continue;
    if (slot.empty()) slot.assign(a_.num_states(), kUnknown);
    if (a_.twin_period.empty()) {
      a_.twin_period.assign(a_.num_states(), 0);
      a_.twin_agree.assign(a_.num_states(), 0);
    }
    TwinFinder finder(a_, lo, hi, (hi - lo) / p.copies, recursion, rule, &slot);
    for (const CopyPlan& plan : plans_) {
      // Copy c + 1 was copy c shifted, for 2 <= c < LastShifted(); the targets of either stay
      // out of the last copy and the first (shifted_copies.cc), where the twins' image differs.
      if (plan.lo == p.lo && plan.fsm_per_copy == (hi - lo) / p.copies) {
        finder.KnownToMap(2, plan.LastShifted());
      }
    }
    finder.Run(&a_.twin_period, &a_.twin_agree);
  }
}

}  // namespace gbnf
