// Semantic checks after parsing: undefined rules (with "did you mean"), the root rule, rules that
// can never finish (errors), and unused or unreachable rules (warnings).
#include <algorithm>
#include <string>

#include "grammar/parser.h"
#include "grammar/rule_facts.h"

namespace gbnf::detail {
namespace {

constexpr size_t kMaxUndefinedReported = 20;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Edit distance counting an adjacent transposition as one edit ("itme" -> "item" is 1).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The defined rule name closest to `name`, if it is close enough to be a likely typo.
std::string Suggest(const GrammarBuilder& b, std::string_view name) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, name.size() / 3) + 1;
  for (size_t i = 0; i < b.rules.size(); ++i) {
    if (!b.info[i].defined) continue;
    const size_t length_gap = b.rules[i].name.size() > name.size()
                                  ? b.rules[i].name.size() - name.size()
                                  : name.size() - b.rules[i].name.size();
    if (length_gap >= best_distance) continue;  // cannot be closer; skip the quadratic work
    const size_t d = EditDistance(name, b.rules[i].name);
    if (d < best_distance) {
      best_distance = d;
      best = b.rules[i].name;
    }
  }
  return best;
}

// Calls visit(rule_id) for every rule referenced inside the node's subtree.
template <typename Visit>
void ForEachReference(const GrammarBuilder& b, NodeId root, Visit visit) {
  std::vector<NodeId> stack{root};
  while (!stack.empty()) {
    const Node& node = b.nodes[stack.back()];
    stack.pop_back();
    if (node.kind == NodeKind::kRuleRef) visit(node.rule);
    for (NodeId child : node.children) stack.push_back(child);
  }
}

// The rules `root` reaches, by walking their bodies: for grammars with undefined rules (which the
// rule facts do not take) and for the rare rules that never finish.
std::vector<uint8_t> Reachable(const GrammarBuilder& b, RuleId root) {
  std::vector<uint8_t> seen(b.rules.size(), 0);
  std::vector<RuleId> work{root};
  seen[root] = 1;
  while (!work.empty()) {
    const RuleId r = work.back();
    work.pop_back();
    ForEachReference(b, b.rules[r].body, [&](RuleId ref) {
      if (!seen[ref]) {
        seen[ref] = 1;
        work.push_back(ref);
      }
    });
  }
  return seen;
}

void CheckUndefined(const GrammarBuilder& b, const SourceMap& map,
                    std::vector<Diagnostic>* errors) {
  for (size_t i = 0; i < b.rules.size() && errors->size() < kMaxUndefinedReported; ++i) {
    if (b.info[i].defined) continue;
    const std::string& name = b.rules[i].name;
    const std::string suggestion = Suggest(b, name);
    std::string hint = suggestion.empty() ? "define it with " + name + " ::= ..."
                                          : "did you mean " + Quote(suggestion) + "?";
    errors->push_back(map.Make(Severity::kError, "undefined_rule",
                               "undefined rule " + Quote(name), hint, b.info[i].first_reference,
                               name.size()));
  }
}

Diagnostic MissingRoot(const GrammarBuilder& b, std::string_view root) {
  Diagnostic d;
  d.code = "missing_root";
  d.message = "no rule named " + Quote(root) + " (the root rule)";
  const std::string suggestion = Suggest(b, root);
  if (!suggestion.empty()) {
    d.hint = "did you mean " + Quote(suggestion) + "? or pass root=\"" + suggestion + "\"";
  } else if (!b.rules.empty()) {
    d.hint = "add a rule " + std::string(root) + " ::= ..., or pass root=\"" +
             b.rules.front().name + "\"";
  } else {
    d.hint = "the grammar has no rules; add " + std::string(root) + " ::= ...";
  }
  return d;
}

void WarnUnreachable(const GrammarBuilder& b, const SourceMap& map,
                     const std::vector<uint8_t>& reachable, std::vector<Diagnostic>* warnings) {
  for (size_t i = 0; i < b.rules.size(); ++i) {
    if (reachable[i]) continue;
    const Rule& rule = b.rules[i];
    const bool referenced = b.info[i].first_reference != SIZE_MAX;
    warnings->push_back(map.Make(
        Severity::kWarning, referenced ? "unreachable_rule" : "unused_rule",
        "rule " + Quote(rule.name) +
            (referenced ? " is only used by rules the root never reaches" : " is never used"),
        "", rule.span.offset, rule.span.length));
  }
}

// Reports the reachable rules that can never finish because of their own recursion (a rule that
// only fails through another failing rule is not reported, to point at the cause).
void CheckUnproductive(const GrammarBuilder& b, const SourceMap& map,
                       const std::vector<uint8_t>& productive,
                       const std::vector<uint8_t>& reachable, std::vector<Diagnostic>* errors) {
  for (size_t i = 0; i < b.rules.size() && errors->size() < kMaxUndefinedReported; ++i) {
    if (productive[i] || !reachable[i]) continue;
    const Rule& rule = b.rules[i];
    bool self_recursive = false;
    ForEachReference(b, rule.body, [&](RuleId ref) {
      if (!productive[ref] && Reachable(b, ref)[i]) self_recursive = true;
    });
    if (!self_recursive) continue;
    errors->push_back(map.Make(
        Severity::kError, "unproductive_rule",
        "rule " + Quote(rule.name) + " can never finish: every alternative recurses forever",
        "add a base case: an alternative that does not refer back to " + Quote(rule.name),
        rule.span.offset, rule.span.length));
  }
}

}  // namespace

std::vector<Diagnostic> AnalyzeGrammar(const GrammarBuilder& b, const SourceMap& map,
                                       std::string_view root, std::vector<Diagnostic>* warnings,
                                       RuleId* root_id, RuleFacts* facts) {
  std::vector<Diagnostic> errors;
  CheckUndefined(b, map, &errors);
  const int64_t root_index = b.FindRule(root);
  if (root_index < 0 || !b.info[static_cast<size_t>(root_index)].defined) {
    errors.push_back(MissingRoot(b, root));
    return errors;
  }
  *root_id = static_cast<RuleId>(root_index);
  if (!errors.empty()) {  // undefined rules: no facts, but the unreachable rules are reported
    WarnUnreachable(b, map, Reachable(b, *root_id), warnings);
    return errors;
  }
  // Every rule is defined: one pass gives both what the root reaches and what can finish.
  static const std::vector<uint8_t> kNoDistinctItems;
  *facts = AnalyzeRules({b.nodes, b.rules, kNoDistinctItems}, kNoDepthLimit, *root_id);
  WarnUnreachable(b, map, facts->reachable, warnings);
  CheckUnproductive(b, map, facts->productive, facts->reachable, &errors);
  return errors;
}

}  // namespace gbnf::detail
