// The Grammar object and the front end's entry point.
#include "gbnf_sampler/grammar.h"

#include <string>
#include <unordered_map>

#include "grammar/builder.h"
#include "grammar/directives.h"
#include "grammar/lexer.h"
#include "grammar/parser.h"
#include "grammar/rule_name_index.h"
#include "support/utf8.h"

namespace gbnf {
namespace {

Diagnostic TextTooLarge(size_t size, size_t limit) {
  Diagnostic d;
  d.code = "text_too_large";
  d.message = "grammar text is " + std::to_string(size) + " bytes, more than the limit of " +
              std::to_string(limit);
  d.hint = "raise GrammarLimits.max_text_bytes";
  return d;
}

bool SameNode(const Grammar& a, NodeId x, const Grammar& b, NodeId y) {
  const Node& n = a.node(x);
  const Node& m = b.node(y);
  if (n.kind != m.kind || n.negated != m.negated || n.children.size() != m.children.size()) {
    return false;
  }
  switch (n.kind) {
    case NodeKind::kLiteral: return n.codepoints == m.codepoints;
    case NodeKind::kCharClass: return n.ranges == m.ranges;
    case NodeKind::kRuleRef: return a.rule(n.rule).name == b.rule(m.rule).name;
    case NodeKind::kTokenRef:
      return n.token_by_id == m.token_by_id &&
             (n.token_by_id ? n.token_id == m.token_id : n.token_text == m.token_text);
    case NodeKind::kRepeat:
      if (n.min != m.min || n.max != m.max) return false;
      break;
    default: break;
  }
  for (size_t i = 0; i < n.children.size(); ++i) {
    if (!SameNode(a, n.children[i], b, m.children[i])) return false;
  }
  return true;
}

bool IsDistinct(const Grammar& g, RuleId r) {
  return !g.DistinctItemRules().empty() && g.DistinctItemRules()[r] != 0;
}

}  // namespace

void Grammar::IndexRuleNames() {
  auto index = std::make_shared<detail::RuleNameIndex>();
  index->Reserve(rules_.size());
  for (RuleId r = 0; r < rules_.size(); ++r) index->Insert(rules_[r].name, r);
  name_index_ = std::move(index);
}

int64_t Grammar::FindRule(std::string_view name) const {
  if (name_index_ == nullptr) return -1;
  return name_index_->Find(name, [this](RuleId r) { return std::string_view(rules_[r].name); });
}

bool Grammar::SameAs(const Grammar& other) const {
  if (rules_.size() != other.rules_.size()) return false;
  if (rule(root_).name != other.rule(other.root_).name) return false;
  std::unordered_map<std::string_view, NodeId> other_bodies;
  for (const Rule& r : other.rules_) other_bodies.emplace(r.name, r.body);
  for (const Rule& r : rules_) {
    auto it = other_bodies.find(r.name);
    if (it == other_bodies.end() || !SameNode(*this, r.body, other, it->second)) return false;
    const int64_t o = other.FindRule(r.name);
    if (IsDistinct(*this, static_cast<RuleId>(&r - rules_.data())) !=
        IsDistinct(other, static_cast<RuleId>(o))) {
      return false;
    }
  }
  return true;
}

Grammar ParseGrammar(std::string_view text, std::string_view root, const GrammarLimits& limits) {
  if (text.size() > limits.max_text_bytes) {
    throw GrammarError({TextTooLarge(text.size(), limits.max_text_bytes)});
  }
  const detail::SourceMap map(text);
  const size_t invalid = detail::FindInvalidUtf8(text);
  if (invalid < text.size()) {
    throw GrammarError({map.Make(Severity::kError, "invalid_utf8",
                                 "grammar text is not valid UTF-8 here",
                                 "save the file as UTF-8, or write the character as \\uHHHH",
                                 invalid, 1)});
  }
  GrammarBuilder builder;
  builder.nodes.reserve(text.size() / 6);  // real grammars hold about one node per 5-10 bytes
  builder.ReserveRules(text.size() / 128);  // and a rule per 100-5,000 bytes
  std::vector<Diagnostic> warnings;
  detail::ParseRules(text, map, limits, &builder, &warnings);
  RuleId root_id = 0;
  detail::RuleFacts facts;
  std::vector<Diagnostic> errors =
      detail::AnalyzeGrammar(builder, map, root, &warnings, &root_id, &facts);
  if (!errors.empty()) throw GrammarError(std::move(errors), std::move(warnings));
  Grammar g = builder.Finish(root_id, std::move(warnings), std::string(text), std::move(facts));
  std::vector<Diagnostic> directive_warnings;
  std::vector<uint8_t> distinct =
      detail::ReadDistinctItems(g, text, map, &errors, &directive_warnings);
  if (!errors.empty()) throw GrammarError(std::move(errors), g.warnings());
  GrammarBuilder::SetDistinctItems(&g, std::move(distinct), std::move(directive_warnings));
  return g;
}

}  // namespace gbnf
