#include "grammar/lexer.h"

#include <algorithm>

#include "support/utf8.h"

namespace gbnf::detail {

SourceMap::SourceMap(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    if (text[i] == '\n' || text[i] == '\r') line_starts_.push_back(i + 1);
  }
}

void SourceMap::Locate(size_t offset, uint32_t* line, uint32_t* column) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  *line = static_cast<uint32_t>(index + 1);
  const size_t start = line_starts_[index];
  *column = static_cast<uint32_t>(CountCodepoints(text_.substr(start, offset - start)) + 1);
}

std::string_view SourceMap::Line(uint32_t line) const {
  const size_t start = line_starts_[line - 1];
  size_t end = start;
  while (end < text_.size() && text_[end] != '\n' && text_[end] != '\r') ++end;
  return text_.substr(start, end - start);
}

Diagnostic SourceMap::Make(Severity severity, std::string code, std::string message,
                           std::string hint, size_t offset, size_t length) const {
  Diagnostic d;
  d.severity = severity;
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  Locate(offset, &d.line, &d.column);
  const std::string_view line_text = Line(d.line);
  // Only the valid UTF-8 prefix of the line can be shown (the text may be invalid past it).
  const std::string_view shown = line_text.substr(0, FindInvalidUtf8(line_text));
  d.snippet = std::string(shown);
  const size_t line_start = static_cast<size_t>(line_text.data() - text_.data());
  const size_t begin = std::min(offset, line_start + shown.size());
  const size_t end = std::min(offset + length, line_start + shown.size());
  d.width = std::max<uint32_t>(1, static_cast<uint32_t>(CountCodepoints(
                                      text_.substr(begin, end > begin ? end - begin : 0))));
  return d;
}

uint32_t Cursor::NextCodepoint() {
  size_t length = 1;
  const uint32_t cp = DecodeUtf8(text_, pos_, &length);
  pos_ += length;
  return cp;
}

size_t Cursor::CodepointLength() const {
  if (AtEnd()) return 1;
  size_t length = 1;
  DecodeUtf8(text_, pos_, &length);
  return length;
}

void Cursor::SkipSpace(bool newlines_ok) {
  while (!AtEnd()) {
    const int c = Peek();
    if (c == ' ' || c == '\t') {
      Advance();
    } else if (c == '#') {
      while (!AtEnd() && !AtNewline()) Advance();
    } else if (newlines_ok && (c == '\n' || c == '\r')) {
      Advance();
    } else {
      break;
    }
  }
}

void Cursor::SkipNewline() {
  if (Peek() == '\r') Advance();
  if (Peek() == '\n') Advance();
}

}  // namespace gbnf::detail
