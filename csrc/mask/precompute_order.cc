#include "mask/precompute_order.h"

#include <cstddef>
#include <functional>
#include <queue>
#include <utility>

namespace gbnf::detail {
namespace {

constexpr uint64_t kNever = UINT64_MAX;
// Added to a resume point's distance when the called rule never completes: such points go last.
constexpr uint64_t kNoCompletion = uint64_t{1} << 40;

// a + b, saturated below kNever (a rule nested n deep can need 2^n bytes).
uint64_t Add(uint64_t a, uint64_t b) { return a >= kNever - 1 - b ? kNever - 1 : a + b; }

// A priority queue for Dijkstra's pushes, which never go below the last pop (monotone): a bucket
// per distance up to kBuckets (distances here are mostly small: output bytes), a heap beyond.
// Pops come by ascending distance, a bucket's states in the order they were pushed.
class MonotoneQueue {
 public:
  void Push(uint64_t d, StateId s) {
    if (d < kBuckets) {
      if (d >= buckets_.size()) buckets_.resize(d + 1);
      buckets_[d].push_back(s);
    } else {
      far_.push({d, s});
    }
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  // The next (distance, state); requires !empty().
  std::pair<uint64_t, StateId> Pop() {
    --size_;
    while (current_ < buckets_.size()) {
      std::vector<StateId>& bucket = buckets_[current_];
      if (next_ < bucket.size()) return {current_, bucket[next_++]};
      bucket = std::vector<StateId>();  // done with: free it
      ++current_;
      next_ = 0;
    }
    const auto top = far_.top();
    far_.pop();
    return top;
  }

 private:
  using Entry = std::pair<uint64_t, StateId>;
  static constexpr uint64_t kBuckets = uint64_t{1} << 16;
  std::vector<std::vector<StateId>> buckets_;
  size_t current_ = 0;  // buckets below are drained
  size_t next_ = 0;     // the current bucket's next state
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> far_;
  size_t size_ = 0;
};

// Dijkstra's bookkeeping over the states: the best distance found, which states are final, and
// the queue of candidates.
class ShortestDistances {
 public:
  explicit ShortestDistances(size_t n) : value_(n, kNever), done_(n, 0) {}
  void Relax(StateId s, uint64_t v) {
    if (v < value_[s]) {
      value_[s] = v;
      queue_.Push(v, s);
    }
  }
  // The next state made final, with its distance; false when none is left.
  bool Next(StateId* s, uint64_t* v) {
    while (!queue_.empty()) {
      const auto [d, t] = queue_.Pop();
      if (done_[t]) continue;
      done_[t] = 1;
      *s = t;
      *v = d;
      return true;
    }
    return false;
  }
  bool done(StateId s) const { return done_[s] != 0; }
  uint64_t value(StateId s) const { return value_[s]; }
  std::vector<uint64_t> TakeValues() { return std::move(value_); }

 private:
  std::vector<uint64_t> value_;
  std::vector<uint8_t> done_;
  MonotoneQueue queue_;
};

// Lists of pairs grouped by a key in [0, keys): one flat array (CSR) instead of a vector each.
class Groups {
 public:
  explicit Groups(size_t keys) : begin_(keys + 1, 0) {}
  void Count(size_t key) { ++begin_[key + 1]; }
  void Allocate() {
    for (size_t k = 1; k < begin_.size(); ++k) begin_[k] += begin_[k - 1];
    items_.resize(begin_.back());
    fill_.assign(begin_.begin(), begin_.end() - 1);
  }
  void Push(size_t key, StateId a, StateId b) { items_[fill_[key]++] = {a, b}; }
  const std::pair<StateId, StateId>* begin(size_t key) const { return items_.data() + begin_[key]; }
  const std::pair<StateId, StateId>* end(size_t key) const {
    return items_.data() + begin_[key + 1];
  }

 private:
  std::vector<size_t> begin_;
  std::vector<size_t> fill_;
  std::vector<std::pair<StateId, StateId>> items_;
};

// The fewest bytes from each state to the end of its rule (kNever: it cannot end). Knuth's
// generalization of Dijkstra: a call s -R-> t gives s the value start(R) + t once both are final.
std::vector<uint64_t> Completions(const Automaton& a) {
  const std::vector<RuleId>& rules = a.BuildAll();
  const size_t n = a.num_states();
  Groups steps_into(n);    // t: (s, -) for each byte or token edge s -> t
  Groups resumes_into(n);  // t: (s, start of R) for each call s -R-> t
  Groups callers(a.num_rules());  // R: (s, t) for each call s -R-> t
  // Two passes over the edges: count each group's size, then fill it.
  auto each_edge = [&](auto&& step, auto&& call) {
    for (StateId s = 0; s < n; ++s) {
      for (const ByteEdge& e : a.ByteEdges(s)) step(s, e.target);
      for (const TokenEdge& e : a.TokenEdges(s)) step(s, e.target);
      for (const CallEdge& c : a.CallEdges(s)) call(s, c);
    }
  };
  each_edge([&](StateId, StateId t) { steps_into.Count(t); },
            [&](StateId, const CallEdge& c) {
              resumes_into.Count(c.target);
              callers.Count(c.rule);
            });
  steps_into.Allocate();
  resumes_into.Allocate();
  callers.Allocate();
  each_edge([&](StateId s, StateId t) { steps_into.Push(t, s, 0); },
            [&](StateId s, const CallEdge& c) {
              resumes_into.Push(c.target, s, a.RuleStart(c.rule));
              callers.Push(c.rule, s, c.target);
            });
  std::vector<int64_t> rule_starting(n, -1);
  for (RuleId r : rules) rule_starting[a.RuleStart(r)] = r;

  ShortestDistances best(n);
  for (StateId s = 0; s < n; ++s) {
    if (a.IsFinal(s)) best.Relax(s, 0);
  }
  StateId s = 0;
  uint64_t v = 0;
  while (best.Next(&s, &v)) {
    for (auto* p = steps_into.begin(s); p != steps_into.end(s); ++p) {
      best.Relax(p->first, Add(v, 1));
    }
    for (auto* p = resumes_into.begin(s); p != resumes_into.end(s); ++p) {
      if (best.done(p->second)) best.Relax(p->first, Add(best.value(p->second), v));
    }
    if (rule_starting[s] >= 0) {
      const auto r = static_cast<size_t>(rule_starting[s]);
      for (auto* p = callers.begin(r); p != callers.end(r); ++p) {
        if (best.done(p->second)) best.Relax(p->first, Add(v, best.value(p->second)));
      }
    }
  }
  return best.TakeValues();
}

}  // namespace

std::vector<std::pair<StateId, uint64_t>> PrecomputeOrder(const Automaton& a) {
  const std::vector<uint64_t> completion = Completions(a);  // builds the whole automaton
  const size_t n = a.num_states();
  ShortestDistances best(n);
  best.Relax(a.RuleStart(a.root()), 0);
  std::vector<std::pair<StateId, uint64_t>> order;
  StateId s = 0;
  uint64_t d = 0;
  while (best.Next(&s, &d)) {
    if (!a.ByteEdges(s).empty() || !a.CallEdges(s).empty()) order.emplace_back(s, d);
    for (const ByteEdge& e : a.ByteEdges(s)) best.Relax(e.target, Add(d, 1));
    for (const TokenEdge& e : a.TokenEdges(s)) best.Relax(e.target, Add(d, 1));
    for (const CallEdge& c : a.CallEdges(s)) {
      const uint64_t inside = completion[a.RuleStart(c.rule)];
      best.Relax(a.RuleStart(c.rule), d);
      best.Relax(c.target, Add(d, inside == kNever ? kNoCompletion : inside));
    }
  }
  return order;
}

}  // namespace gbnf::detail
