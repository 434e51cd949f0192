// Internal entry points of the front end, shared by parser.cc and analysis.cc.
#pragma once

#include <string_view>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/builder.h"
#include "grammar/lexer.h"
#include "grammar/rule_facts.h"

namespace gbnf::detail {

// Reads every rule of the text into the builder. Throws GrammarError at the first syntax error.
void ParseRules(std::string_view text, const SourceMap& map, const GrammarLimits& limits,
                GrammarBuilder* builder, std::vector<Diagnostic>* warnings);

// Checks the parsed rules: undefined rules, the root, rules that can never finish (errors), and
// unused or unreachable rules (warnings). Returns the errors; sets *root_id when the root exists,
// and *facts (no nesting limit, no distinct-items rules) when every rule is defined.
std::vector<Diagnostic> AnalyzeGrammar(const GrammarBuilder& builder, const SourceMap& map,
                                       std::string_view root, std::vector<Diagnostic>* warnings,
                                       RuleId* root_id, RuleFacts* facts);

}  // namespace gbnf::detail
