#include "grammar/directives.h"

#include <string>
#include <unordered_map>

namespace gbnf::detail {
namespace {

bool IsNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

}  // namespace

std::vector<uint8_t> ReadDistinctItems(const Grammar& grammar, std::string_view text,
                                       const SourceMap& map, std::vector<Diagnostic>* errors,
                                       std::vector<Diagnostic>* warnings) {
  std::vector<uint8_t> out;
  std::unordered_map<std::string_view, RuleId> ids;  // filled at the first name
  // Directives start a line; a "#@" elsewhere is an ordinary comment (or inside a literal).
  for (size_t at = text.find("#@"); at != std::string_view::npos; at = text.find("#@", at + 2)) {
    if (at > 0 && text[at - 1] != '\n' && text[at - 1] != '\r') continue;
    size_t end = text.find_first_of("\r\n", at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, kDistinctItemsDirective.size()) != kDistinctItemsDirective ||
        (line.size() > kDistinctItemsDirective.size() &&
         line[kDistinctItemsDirective.size()] != ' ')) {
      warnings->push_back(map.Make(Severity::kWarning, "unknown_directive",
                                   "unknown directive \"" + std::string(line.substr(0, 24)) +
                                       "\", read as a comment",
                                   "the one directive is \"#@ distinct-items RULE...\"; write "
                                   "\"# \" for a comment",
                                   at, 2));
      continue;
    }
    for (size_t i = at + kDistinctItemsDirective.size(); i < end;) {
      if (!IsNameByte(text[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < end && IsNameByte(text[j])) ++j;
      const std::string_view name = text.substr(i, j - i);
      if (ids.empty()) {
        for (RuleId r = 0; r < grammar.rules().size(); ++r) ids.emplace(grammar.rule(r).name, r);
      }
      const auto found = ids.find(name);
      if (found == ids.end()) {
        errors->push_back(map.Make(Severity::kError, "undefined_rule",
                                   "distinct-items names the undefined rule \"" +
                                       std::string(name) + "\"",
                                   "name a rule this grammar defines", i, j - i));
      } else {
        out.resize(grammar.rules().size(), 0);
        out[found->second] = 1;
      }
      i = j;
    }
  }
  return out;
}

}  // namespace gbnf::detail
