#include "grammar/choice_survey.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

// Subtrees compared as shadow.py's `==` compares the syntax objects: kind and fields, children
// in order. Hashes are memoised per node; equality is checked node by node (no recursion: trees
// may nest as deep as the parser allows).
class Subtrees {
 public:
  explicit Subtrees(const Grammar& grammar)
      : grammar_(grammar), hash_(grammar.nodes().size(), 0), known_(grammar.nodes().size(), 0) {}

  uint64_t Hash(NodeId root) {
    if (known_[root]) return hash_[root];
    stack_.assign(1, {root, false});
    while (!stack_.empty()) {
      const auto [id, ready] = stack_.back();
      stack_.pop_back();
      if (known_[id]) continue;
      const Node& node = grammar_.node(id);
      if (!ready) {
        stack_.push_back({id, true});
        for (NodeId c : node.children) {
          if (!known_[c]) stack_.push_back({c, false});
        }
        continue;
      }
      hash_[id] = Own(node);
      known_[id] = 1;
    }
    return hash_[root];
  }

  bool Equal(NodeId a, NodeId b) {
    pairs_.assign(1, {a, b});
    while (!pairs_.empty()) {
      const auto [x, y] = pairs_.back();
      pairs_.pop_back();
      if (x == y) continue;
      const Node& p = grammar_.node(x);
      const Node& q = grammar_.node(y);
      if (!SameFields(p, q) || p.children.size() != q.children.size()) return false;
      for (size_t i = 0; i < p.children.size(); ++i) {
        pairs_.push_back({p.children[i], q.children[i]});
      }
    }
    return true;
  }

 private:
  struct Pending {
    NodeId id;
    bool ready;
  };

  uint64_t Own(const Node& node) const {
    uint64_t h = Mix(static_cast<uint64_t>(node.kind) + 1, node.negated);
    switch (node.kind) {
      case NodeKind::kLiteral:
        for (uint32_t cp : node.codepoints) h = Mix(h, cp);
        break;
      case NodeKind::kCharClass:
        for (const CodepointRange& r : node.ranges) h = Mix(Mix(h, r.lo), r.hi);
        break;
      case NodeKind::kRuleRef:
        h = Mix(h, node.rule);
        break;
      case NodeKind::kTokenRef:
        h = Mix(Mix(h, node.token_by_id),
                node.token_by_id ? node.token_id : node.token_text.size());
        break;
      case NodeKind::kRepeat:
        h = Mix(Mix(h, node.min), node.max);
        break;
      default:
        break;
    }
    for (NodeId c : node.children) h = Mix(h, hash_[c]);
    return h;
  }

  static bool SameFields(const Node& p, const Node& q) {
    if (p.kind != q.kind || p.negated != q.negated) return false;
    switch (p.kind) {
      case NodeKind::kLiteral:
        return p.codepoints == q.codepoints;
      case NodeKind::kCharClass:
        return p.ranges == q.ranges;
      case NodeKind::kRuleRef:
        return p.rule == q.rule;
      case NodeKind::kTokenRef:
        return p.token_by_id == q.token_by_id &&
               (p.token_by_id ? p.token_id == q.token_id : p.token_text == q.token_text);
      case NodeKind::kRepeat:
        return p.min == q.min && p.max == q.max;
      default:
        return true;
    }
  }

  const Grammar& grammar_;
  std::vector<uint64_t> hash_;
  std::vector<uint8_t> known_;
  std::vector<Pending> stack_;
  std::vector<std::pair<NodeId, NodeId>> pairs_;
};

// (alternative, first equal earlier one) for the alternatives of one choice, by alternative.
std::vector<std::pair<uint32_t, uint32_t>> Duplicates(const Node& choice, Subtrees* subtrees) {
  std::vector<std::pair<uint64_t, uint32_t>> by_hash;  // (hash, alternative)
  by_hash.reserve(choice.children.size());
  for (uint32_t j = 0; j < choice.children.size(); ++j) {
    by_hash.emplace_back(subtrees->Hash(choice.children[j]), j);
  }
  std::sort(by_hash.begin(), by_hash.end());
  std::vector<std::pair<uint32_t, uint32_t>> out;
  std::vector<uint32_t> distinct;  // the group's alternatives equal to no earlier one
  for (size_t begin = 0, end = 0; begin < by_hash.size(); begin = end) {
    while (end < by_hash.size() && by_hash[end].first == by_hash[begin].first) ++end;
    distinct.clear();
    for (size_t k = begin; k < end; ++k) {
      const uint32_t j = by_hash[k].second;
      auto equal = std::find_if(distinct.begin(), distinct.end(), [&](uint32_t i) {
        return subtrees->Equal(choice.children[i], choice.children[j]);
      });
      if (equal == distinct.end()) {
        distinct.push_back(j);
      } else {
        out.emplace_back(j, *equal);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether the check's other two tests can find anything in this choice.
bool WorthChecking(const Grammar& grammar, const Node& choice) {
  uint32_t one_char = 0;
  bool long_literal = false;
  bool other = false;
  for (NodeId c : choice.children) {
    const Node& item = grammar.node(c);
    const bool literal = item.kind == NodeKind::kLiteral;
    if ((literal && item.codepoints.size() == 1) || item.kind == NodeKind::kCharClass ||
        item.kind == NodeKind::kAnyChar) {
      ++one_char;
    }
    long_literal |= literal && item.codepoints.size() > 1;
    other |= !literal;
  }
  return one_char >= 2 || (long_literal && other);
}

}  // namespace

std::vector<ChoiceSurvey> SurveyChoices(const Grammar& grammar) {
  std::vector<ChoiceSurvey> out;
  Subtrees subtrees(grammar);
  std::vector<NodeId> stack;
  for (RuleId r = 0; r < grammar.rules().size(); ++r) {
    uint32_t ordinal = 0;
    stack.assign(1, grammar.rule(r).body);
    while (!stack.empty()) {
      const Node& node = grammar.node(stack.back());
      stack.pop_back();
      stack.insert(stack.end(), node.children.rbegin(), node.children.rend());
      if (node.kind != NodeKind::kAlternation) continue;
      ChoiceSurvey survey{r, ordinal++, Duplicates(node, &subtrees)};
      if (!survey.duplicates.empty() || WorthChecking(grammar, node)) {
        out.push_back(std::move(survey));
      }
    }
  }
  return out;
}

}  // namespace gbnf::detail
