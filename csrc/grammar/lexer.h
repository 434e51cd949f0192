// Character-level scanning of grammar text: a cursor over validated UTF-8 that knows GBNF's
// whitespace and comments, and a map from byte offsets to line/column for diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gbnf_sampler/error.h"

namespace gbnf::detail {

// Line/column lookup over the whole text. Line breaks are "\n", "\r\n" and a lone "\r".
class SourceMap {
 public:
  explicit SourceMap(std::string_view text);
  // 1-based line and column (in code points) of a byte offset.
  void Locate(size_t offset, uint32_t* line, uint32_t* column) const;
  // The text of a 1-based line, without its line break.
  std::string_view Line(uint32_t line) const;
  // A diagnostic at [offset, offset + length) bytes; the caret is clipped to the line.
  Diagnostic Make(Severity severity, std::string code, std::string message, std::string hint,
                  size_t offset, size_t length) const;

 private:
  std::string_view text_;
  std::vector<size_t> line_starts_;
};

// A read position in the text. Peek returns -1 at the end, so NUL bytes in the text stay data.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  int Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? static_cast<unsigned char>(text_[pos_ + ahead]) : -1;
  }
  bool StartsWith(std::string_view s) const { return text_.substr(pos_).substr(0, s.size()) == s; }
  void Advance(size_t n = 1) { pos_ += n; }
  // Decodes the code point at the cursor and moves past it.
  uint32_t NextCodepoint();
  // Length in bytes of the code point at the cursor (1 at the end).
  size_t CodepointLength() const;
  bool AtNewline() const { return Peek() == '\n' || Peek() == '\r'; }
  // Skips spaces, tabs and comments; also line breaks when newlines_ok.
  void SkipSpace(bool newlines_ok);
  // Moves past one line break (\n, \r\n or \r) if the cursor is on one.
  void SkipNewline();
  std::string_view Slice(size_t begin, size_t end) const { return text_.substr(begin, end - begin); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

inline bool IsNameChar(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

}  // namespace gbnf::detail
