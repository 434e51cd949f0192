#include <algorithm>
#include <string>

#include "gbnf_sampler/error.h"

namespace gbnf {

std::string Diagnostic::Render() const {
  std::string out;
  if (line > 0) {
    out += "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  }
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  if (line == 0) return out;
  const std::string number = std::to_string(line);
  const std::string gutter(number.size() + 1, ' ');
  out += "\n " + number + " | " + snippet + "\n" + gutter + " | ";
  // The caret sits under the column; leading tabs are kept so it lines up in a terminal.
  uint32_t cp = 1;
  for (size_t i = 0; i < snippet.size() && cp < column; ++i) {
    const auto byte = static_cast<unsigned char>(snippet[i]);
    if ((byte & 0xC0) == 0x80) continue;
    out += snippet[i] == '\t' ? '\t' : ' ';
    ++cp;
  }
  out.append(std::max<uint32_t>(width, 1), '^');
  return out;
}

GrammarError::GrammarError(std::vector<Diagnostic> errors, std::vector<Diagnostic> warnings)
    : errors_(std::move(errors)), warnings_(std::move(warnings)) {
  if (errors_.empty()) {
    Diagnostic internal;
    internal.code = "internal";
    internal.message = "grammar error without a diagnostic";
    errors_.push_back(std::move(internal));
  }
  what_ = errors_.front().Render();
  if (errors_.size() > 1) {
    what_ += "\n(and " + std::to_string(errors_.size() - 1) + " more error";
    what_ += errors_.size() > 2 ? "s)" : ")";
  }
}

}  // namespace gbnf
