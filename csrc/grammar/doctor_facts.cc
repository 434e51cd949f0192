#include "grammar/doctor_facts.h"

#include <algorithm>
#include <iterator>

#include "grammar/rule_facts.h"

namespace gbnf::detail {
namespace {

// Inclusive ranges, as python/gbnf_sampler/doctor/facts.py INVISIBLE lists them.
constexpr CodepointRange kInvisible[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0x85, 0x85},     {0xA0, 0xA0},
    {0x1680, 0x1680}, {0x2000, 0x200D}, {0x2028, 0x2029}, {0x202F, 0x202F},
    {0x205F, 0x2060}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF},
};

bool RangeInvisible(const CodepointRange& range) {
  return std::any_of(std::begin(kInvisible), std::end(kInvisible),
                     [&](const CodepointRange& r) { return range.lo >= r.lo && range.hi <= r.hi; });
}

bool TerminalInvisible(const Node& node) {
  switch (node.kind) {
    case NodeKind::kLiteral:
      return std::all_of(node.codepoints.begin(), node.codepoints.end(), InvisibleCodepoint);
    case NodeKind::kCharClass:
      return !node.negated && std::all_of(node.ranges.begin(), node.ranges.end(), RangeInvisible);
    case NodeKind::kAnyChar:
    case NodeKind::kTokenRef:
      return false;
    default:
      return true;  // inner nodes and references: their parts decide
  }
}

// The reference a body ends with in one of its alternatives, if it is a rule reference (the
// matcher calls it without growing the stack), else kNoNode.
constexpr NodeId kNoNode = UINT32_MAX;

NodeId TailReference(const Grammar& grammar, NodeId alternative) {
  const Node& node = grammar.node(alternative);
  if (node.kind == NodeKind::kSequence && !node.children.empty()) {
    const NodeId last = node.children.back();
    return grammar.node(last).kind == NodeKind::kRuleRef ? last : kNoNode;
  }
  return node.kind == NodeKind::kRuleRef ? alternative : kNoNode;
}

// Whether rule r's body references a rule of its component other than by a tail call.
bool CallsInsideNotLast(const Grammar& grammar, RuleId r, const std::vector<uint32_t>& component) {
  const NodeId body = grammar.rule(r).body;
  std::vector<NodeId> tails;
  const Node& top = grammar.node(body);
  if (top.kind == NodeKind::kAlternation) {
    for (NodeId alternative : top.children) tails.push_back(TailReference(grammar, alternative));
  } else {
    tails.push_back(TailReference(grammar, body));
  }
  std::vector<NodeId> stack{body};
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    const Node& node = grammar.node(id);
    if (node.kind == NodeKind::kRuleRef && component[node.rule] == component[r] &&
        std::find(tails.begin(), tails.end(), id) == tails.end()) {
      return true;
    }
    stack.insert(stack.end(), node.children.begin(), node.children.end());
  }
  return false;
}

std::vector<uint32_t> GrowthCandidates(const Grammar& grammar, const DoctorFacts& facts) {
  std::vector<uint32_t> component(grammar.rules().size());
  for (uint32_t c = 0; c < facts.components.size(); ++c) {
    for (RuleId m : facts.components[c]) component[m] = c;
  }
  std::vector<uint32_t> out;
  for (uint32_t c = 0; c < facts.components.size(); ++c) {
    const std::vector<RuleId>& members = facts.components[c];
    if (!facts.recursive[members.front()]) continue;
    if (std::none_of(members.begin(), members.end(),
                     [&](RuleId m) { return facts.reachable[m] != 0; })) {
      continue;
    }
    if (std::any_of(members.begin(), members.end(),
                    [&](RuleId m) { return CallsInsideNotLast(grammar, m, component); })) {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

bool InvisibleCodepoint(uint32_t cp) { return RangeInvisible({cp, cp}); }

DoctorFacts AnalyzeForDoctor(const Grammar& grammar) {
  DoctorFacts facts;
  const size_t n = grammar.rules().size();
  // Per rule: a visible terminal in its own body (a literal's code points are read only while
  // none is found: each is another allocation to load).
  std::vector<uint8_t> visible(n, 0);
  facts.tokens.assign(n, 0);
  facts.references =
      RuleReferences(grammar.nodes(), grammar.rules(), [&](RuleId r, const Node& node) {
        if (node.kind == NodeKind::kTokenRef) facts.tokens[r] = 1;
        if (!visible[r] && !TerminalInvisible(node)) visible[r] = 1;
      });
  facts.users = Reversed(facts.references);
  SpreadMarks(facts.users, &visible);  // a rule referencing a visible one is visible too
  facts.invisible.resize(n);
  for (size_t r = 0; r < n; ++r) facts.invisible[r] = !visible[r];
  facts.recursive.assign(n, 0);
  ForEachComponent(facts.references, [&](const std::vector<RuleId>& members) {
    const RuleId first = members.front();
    const RuleId* refs_end = facts.references.last(first);
    const bool recursive =
        members.size() > 1 || std::find(facts.references.first(first), refs_end, first) != refs_end;
    for (RuleId m : members) facts.recursive[m] = recursive;
    facts.components.push_back(members);
  });
  // The parser's facts have both (computed without a nesting limit, which neither depends on).
  const RuleFacts* parsed = grammar.ParsedFacts();
  if (parsed != nullptr && parsed->reachable.size() == n) {
    facts.nullable = parsed->nullable;
    facts.reachable = parsed->reachable;
  } else {
    RuleFacts analyzed = AnalyzeRules(grammar, kNoDepthLimit);
    facts.nullable = std::move(analyzed.nullable);
    facts.reachable = std::move(analyzed.reachable);
  }
  facts.growth_candidates = GrowthCandidates(grammar, facts);
  return facts;
}

}  // namespace gbnf::detail
