// The grammar under construction, shared by the parser and the analysis passes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/node_storage.h"
#include "grammar/rule_facts.h"
#include "grammar/rule_name_index.h"

namespace gbnf {

class GrammarBuilder {
 public:
  struct RuleInfo {
    bool defined = false;
    size_t first_reference = SIZE_MAX;  // byte offset of the first use, SIZE_MAX if unused
    size_t name_length = 0;
    size_t definition = SIZE_MAX;  // byte offset of the (last) definition
  };

  NodeId AddNode(Node node) {
    nodes.push_back(std::move(node));
    return static_cast<NodeId>(nodes.size() - 1);
  }

  // The id of the rule called `name`, creating an undefined rule on first sight. `name` views the
  // source text, which outlives the builder (ParseGrammar), so the index can keep viewing it.
  RuleId InternRule(std::string_view name) {
    const int64_t found = FindRule(name);
    if (found >= 0) return static_cast<RuleId>(found);
    const auto id = static_cast<RuleId>(rules.size());
    Rule rule;
    rule.name = std::string(name);
    rules.push_back(std::move(rule));
    info.emplace_back();
    info.back().name_length = name.size();
    names_.push_back(name);
    ids_.Insert(name, id);
    return id;
  }

  // Sizes the rule-name index for about `n` rules, so that a large grammar does not rebuild it
  // as it grows.
  void ReserveRules(size_t n) {
    ids_.Reserve(n);
    names_.reserve(n);
  }

  int64_t FindRule(std::string_view name) const {
    return ids_.Find(name, [this](RuleId id) { return names_[id]; });
  }

  // Marks the rules a distinct-items directive names. When there is one, the rule facts are
  // computed again (such rules are never inlined, which the parser's facts did not know), once
  // here rather than by every automaton built from the grammar.
  static void SetDistinctItems(Grammar* g, std::vector<uint8_t> rules,
                               std::vector<Diagnostic> warnings) {
    const bool any = std::find(rules.begin(), rules.end(), 1) != rules.end();
    g->distinct_items_ = std::move(rules);
    g->warnings_.insert(g->warnings_.end(), warnings.begin(), warnings.end());
    if (any) {
      g->parsed_facts_ = std::make_shared<const detail::RuleFacts>(
          detail::AnalyzeRules(*g, detail::kNoDepthLimit));
    }
  }

  // Moves the finished tree into a Grammar with rules in definition order. Undefined rules are
  // errors, so by the time this runs every rule is defined. `facts`: the rule facts by builder
  // rule id; the Grammar keeps them by its own ids.
  Grammar Finish(RuleId root, std::vector<Diagnostic> warnings, std::string source,
                 detail::RuleFacts facts) {
    std::vector<RuleId> order(rules.size());
    for (RuleId i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [this](RuleId a, RuleId b) {
      return info[a].definition < info[b].definition;
    });
    std::vector<RuleId> new_id(rules.size());
    for (RuleId i = 0; i < order.size(); ++i) new_id[order[i]] = i;
    for (Node& node : nodes) {
      if (node.kind == NodeKind::kRuleRef) node.rule = new_id[node.rule];
    }
    Grammar g;
    g.rules_.reserve(rules.size());
    for (RuleId old : order) g.rules_.push_back(std::move(rules[old]));
    g.IndexRuleNames();
    g.nodes_ = std::move(nodes);
    g.storage_ = std::move(storage);
    g.root_ = new_id[root];
    g.warnings_ = std::move(warnings);
    g.source_ = std::move(source);
    for (SourceLayout::Definition& d : layout.definitions) d.rule = new_id[d.rule];
    g.layout_ = std::move(layout);
    auto renumber = [&order](auto& per_rule) {
      std::remove_reference_t<decltype(per_rule)> out(per_rule.size());
      for (RuleId i = 0; i < order.size(); ++i) out[i] = per_rule[order[i]];
      per_rule = std::move(out);
    };
    renumber(facts.productive);
    renumber(facts.nullable);
    renumber(facts.inlinable);
    renumber(facts.depth);
    renumber(facts.min_size);
    renumber(facts.inlined_height);
    renumber(facts.reachable);
    g.parsed_facts_ = std::make_shared<const detail::RuleFacts>(std::move(facts));
    return g;
  }

  std::vector<Rule> rules;
  std::vector<Node> nodes;
  std::shared_ptr<detail::NodeStorage> storage = std::make_shared<detail::NodeStorage>();
  std::vector<RuleInfo> info;
  SourceLayout layout;

 private:
  std::vector<std::string_view> names_;  // by builder rule id, viewing the source
  detail::RuleNameIndex ids_;
};

}  // namespace gbnf
