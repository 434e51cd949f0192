#include <algorithm>
#include <string>

#include "gbnf_sampler/error.h"

namespace gbnf {

namespace {

constexpr size_t kSnippetWindow = 100;  // code points of a long line shown around the caret

// Byte offset of the n-th code point of UTF-8 text (text.size() past the end).
size_t CodepointOffset(const std::string& text, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (seen++ == n) return i;
  }
  return text.size();
}

}  // namespace

std::string Diagnostic::Render() const {
  std::string out;
  if (line > 0) {
    out += "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  }
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  if (line == 0) return out;
  // Long lines are cut to a window around the caret, marked with "...".
  const size_t caret = column > 0 ? column - 1 : 0;
  const size_t first = caret > kSnippetWindow / 2 ? caret - kSnippetWindow / 2 : 0;
  const size_t begin = CodepointOffset(snippet, first);
  const size_t end = CodepointOffset(snippet, first + kSnippetWindow);
  const std::string prefix = first > 0 ? "..." : "";
  const std::string shown = prefix + snippet.substr(begin, end - begin) +
                            (end < snippet.size() ? "..." : "");
  const std::string number = std::to_string(line);
  const std::string gutter(number.size() + 1, ' ');
  out += "\n " + number + " | " + shown + "\n" + gutter + " | ";
  // The caret sits under the column; tabs are kept so it lines up in a terminal.
  out.append(prefix.size(), ' ');
  for (size_t i = begin, cp = first; i < snippet.size() && cp < caret; ++i) {
    if ((static_cast<unsigned char>(snippet[i]) & 0xC0) == 0x80) continue;
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
