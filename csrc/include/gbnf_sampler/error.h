// Diagnostics: structured errors and warnings with source positions, rendered like a compiler's.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace gbnf {

enum class Severity : uint8_t { kError, kWarning };

// One message about the grammar text. Line and column are 1-based; the column counts code points.
// Both are 0 when the message has no position (e.g. "root rule missing" on an empty text).
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;     // stable machine-readable identifier, e.g. "undefined_rule"
  std::string message;  // one line, no position
  std::string hint;     // optional advice ("did you mean ...?"); may be empty
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t width = 1;   // caret width in code points
  std::string snippet;  // the source line the position is on, without its line break

  // "line 3, column 14: undefined rule "valu" (did you mean "value"?)" plus the snippet and caret.
  std::string Render() const;
};

// Thrown by the front end for a grammar that cannot be used. Holds every error found (at least
// one; the first is the primary) and the warnings collected before the failure.
class GrammarError : public std::exception {
 public:
  explicit GrammarError(std::vector<Diagnostic> errors, std::vector<Diagnostic> warnings = {});
  const char* what() const noexcept override { return what_.c_str(); }
  const std::vector<Diagnostic>& errors() const { return errors_; }
  const std::vector<Diagnostic>& warnings() const { return warnings_; }
  const Diagnostic& primary() const { return errors_.front(); }

 private:
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
  std::string what_;
};

// Thrown when an input is within the language's syntax but beyond a configured resource limit
// that is not tied to a source position (e.g. matcher state size). Grammar-text limits use
// GrammarError with a position instead.
class LimitError : public std::exception {
 public:
  LimitError(std::string limit_name, std::string message)
      : limit_name_(std::move(limit_name)), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& limit_name() const { return limit_name_; }

 private:
  std::string limit_name_;
  std::string message_;
};

}  // namespace gbnf
