#include "grammar/sentence_sampler.h"

#include <algorithm>
#include <utility>

#include "support/utf8.h"

namespace gbnf::detail {
namespace {

constexpr uint64_t kUnknown = UINT64_MAX;  // a node's minimum not evaluated yet
constexpr int64_t kWorkPerCodepoint = 40;  // sample.py's MAX_EXPANSIONS_PER_BYTE
constexpr int64_t kMaxPending = int64_t{1} << 62;  // past it the reference's sums are not ours
constexpr uint64_t kMaxCopies = uint64_t{1} << 24;  // repetitions expanded at once

// Code points tried, in order, for a negated class (sample.py's _CANDIDATES).
constexpr char kFirstCandidates[] = "ax0 b.,-_:";
constexpr uint32_t kLastCandidate = 0x2FFF;
constexpr uint32_t kNoCandidate = 0x1F600;

bool Inside(const Slice<CodepointRange>& ranges, uint32_t cp) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [cp](const CodepointRange& r) { return r.lo <= cp && cp <= r.hi; });
}

}  // namespace

SentenceSampler::SentenceSampler(const Grammar& grammar, const std::vector<Derivation>& minimums,
                                 uint64_t seed, std::vector<uint8_t> favoured, int64_t wind_down)
    : grammar_(grammar), minimums_(minimums), rng_(seed), favoured_rules_(std::move(favoured)),
      wind_down_(wind_down), node_minimums_(grammar.nodes().size(), {kUnknown, kUnknown}),
      favoured_nodes_(grammar.nodes().size(), 0) {}

bool SentenceSampler::Sentence(RuleId root, int64_t target, std::string* out) {
  out->clear();
  if (minimums_[root].length >= kNoDerivation) return false;
  int64_t emitted = 0;
  auto pending = static_cast<int64_t>(minimums_[root].length);
  const int64_t budget = kWorkPerCodepoint * (target + 16);
  int64_t work = 0;
  work_.assign(1, grammar_.rule(root).body);
  while (!work_.empty()) {
    const NodeId id = work_.back();
    work_.pop_back();
    pending -= static_cast<int64_t>(Minimum(id).length);
    ++work;
    const int64_t room = work < budget ? target - emitted - pending : 0;
    const size_t before = work_.size();
    emitted += Expand(id, room, out);
    for (size_t k = before; k < work_.size(); ++k) {
      const uint64_t length = Minimum(work_[k]).length;
      if (length >= kNoDerivation) throw UnsampledSentence{};
      pending += static_cast<int64_t>(length);
      if (pending > kMaxPending) throw UnsampledSentence{};
    }
  }
  return true;
}

// A node's shortest derivation, children first without recursion, memoised per node; lengths
// saturate at kNoDerivation (sample.py's Sampler.minimum counts every length from INF on as INF).
Derivation SentenceSampler::Minimum(NodeId top) {
  if (node_minimums_[top].length != kUnknown) return node_minimums_[top];
  std::vector<std::pair<NodeId, bool>> stack{{top, false}};
  while (!stack.empty()) {
    const auto [id, ready] = stack.back();
    stack.pop_back();
    if (node_minimums_[id].length != kUnknown) continue;
    const Node& node = grammar_.node(id);
    if (!ready && !node.children.empty()) {
      stack.push_back({id, true});
      for (NodeId c : node.children) stack.push_back({c, false});
      continue;
    }
    Derivation value = kNoSentence;
    switch (node.kind) {
      case NodeKind::kLiteral: value = {node.codepoints.size(), 0}; break;
      case NodeKind::kCharClass:
      case NodeKind::kAnyChar: value = {1, 0}; break;
      case NodeKind::kTokenRef: break;
      case NodeKind::kRuleRef: value = ReferenceTo(minimums_[node.rule]); break;
      case NodeKind::kSequence:
        value = {0, 0};
        for (NodeId c : node.children) value = SequenceOf(value, node_minimums_[c]);
        break;
      case NodeKind::kAlternation:
        for (NodeId c : node.children) value = std::min(value, node_minimums_[c]);
        break;
      case NodeKind::kRepeat: value = RepeatOf(node_minimums_[node.children[0]], node.min); break;
    }
    node_minimums_[id] = value;
  }
  return node_minimums_[top];
}

int64_t SentenceSampler::Expand(NodeId id, int64_t room, std::string* out) {
  const Node& node = grammar_.node(id);
  switch (node.kind) {
    case NodeKind::kLiteral:
      for (uint32_t cp : node.codepoints) AppendUtf8(cp, out);
      return static_cast<int64_t>(node.codepoints.size());
    case NodeKind::kCharClass:
    case NodeKind::kAnyChar:
      AppendUtf8(Char(node), out);
      return 1;
    case NodeKind::kRuleRef:
      work_.push_back(grammar_.rule(node.rule).body);
      return 0;
    case NodeKind::kSequence:
      work_.insert(work_.end(), node.children.rbegin(), node.children.rend());
      return 0;
    case NodeKind::kAlternation:
      work_.push_back(Choose(node, room));
      return 0;
    case NodeKind::kRepeat: {
      const uint64_t copies = Count(node, room);
      if (copies > kMaxCopies) throw UnsampledSentence{};
      work_.insert(work_.end(), copies, node.children[0]);
      return 0;
    }
    case NodeKind::kTokenRef: break;
  }
  throw UnsampledSentence{};  // a token reference has no byte-level sentence
}

NodeId SentenceSampler::Choose(const Node& node, int64_t room) {
  uint64_t base = kNoDerivation;
  for (NodeId c : node.children) base = std::min(base, Minimum(c).length);
  options_.clear();
  for (NodeId c : node.children) {
    const uint64_t length = Minimum(c).length;
    const int64_t over = static_cast<int64_t>(length - base);  // both finite when it counts
    if (length < kNoDerivation && over <= std::max<int64_t>(room, 0)) {
      options_.push_back(c);
    }
  }
  if (room <= 0 || options_.size() <= 1) {
    NodeId best = node.children[0];
    for (NodeId c : node.children) {
      if (Minimum(c) < Minimum(best)) best = c;
    }
    return best;
  }
  if (!favoured_rules_.empty()) {
    chosen_.clear();
    for (NodeId c : options_) {
      if (room < wind_down_ || Favoured(c)) chosen_.push_back(c);
    }
    if (!chosen_.empty()) return chosen_[rng_.Below(chosen_.size())];
  }
  return options_[rng_.Below(options_.size())];
}

uint64_t SentenceSampler::Count(const Node& node, int64_t room) {
  if (room <= 0) return node.min;
  const auto item = static_cast<int64_t>(
      std::max<uint64_t>(1, Minimum(node.children[0]).length));
  const int64_t fit = room / item;
  const int64_t cap = node.max == kUnbounded ? std::min<int64_t>(8, fit)
                                             : std::min<int64_t>(node.max - node.min, fit);
  return node.min + rng_.Below(static_cast<uint64_t>(std::max<int64_t>(cap, 0)) + 1);
}

uint32_t SentenceSampler::Char(const Node& node) {
  if (node.kind == NodeKind::kAnyChar) return static_cast<uint32_t>("abc"[rng_.Below(3)]);
  if (!node.negated) {
    const CodepointRange& r = node.ranges[rng_.Below(node.ranges.size())];
    uint32_t cp = r.lo + static_cast<uint32_t>(rng_.Below(uint64_t{r.hi} - r.lo + 1));
    const auto surrogate = [](uint32_t c) { return 0xD800 <= c && c <= 0xDFFF; };
    if (surrogate(cp)) cp = !surrogate(r.lo) ? r.lo : r.hi >= 0xE000 ? 0xE000 : 0xD7FF;
    return cp;
  }
  for (const char* c = kFirstCandidates; *c != '\0'; ++c) {
    if (!Inside(node.ranges, static_cast<uint32_t>(*c))) return static_cast<uint32_t>(*c);
  }
  for (uint32_t cp = 0x21; cp <= kLastCandidate; ++cp) {
    if (!Inside(node.ranges, cp)) return cp;
  }
  return kNoCandidate;
}

// Whether the subtree of `alternative` references a favoured rule (memoised per node).
bool SentenceSampler::Favoured(NodeId alternative) {
  uint8_t& known = favoured_nodes_[alternative];
  if (known == 0) {
    bool found = false;
    std::vector<NodeId> stack{alternative};
    while (!stack.empty() && !found) {
      const Node& node = grammar_.node(stack.back());
      stack.pop_back();
      found = node.kind == NodeKind::kRuleRef && favoured_rules_[node.rule] != 0;
      stack.insert(stack.end(), node.children.begin(), node.children.end());
    }
    known = found ? 2 : 1;
  }
  return known == 2;
}

}  // namespace gbnf::detail
