// Recursive-descent parser for GBNF, one short function per production:
//
//   grammar      := (rule newline)*
//   rule         := name '::=' alternates(top level)
//   alternates   := sequence ('|' sequence)*       ('|' may also start a continuation line)
//   sequence     := (element postfix*)*
//   element      := literal | class | '.' | name | '(' alternates ')' | ['!'] '<' token '>'
//   postfix      := '*' | '+' | '?' | '{' [m] [',' [n]] '}'
//
// At the top level of a rule a line break ends the rule; inside parentheses it is whitespace.
#include <string>

#include "grammar/parser.h"
#include "support/utf8.h"

namespace gbnf::detail {
namespace {

constexpr const char* kEscapeHint =
    "valid escapes are \\xHH \\uHHHH \\UHHHHHHHH \\n \\r \\t \\\\ \\\" \\[ \\] \\-";

bool IsTypographicQuote(uint32_t cp) {
  return cp == 0x201C || cp == 0x201D || cp == 0x2018 || cp == 0x2019 || cp == 0xFF02;
}

bool IsDigit(int c) { return c >= '0' && c <= '9'; }

int HexValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// True when the ranges cover every Unicode scalar value (a negated class that matches nothing).
bool CoversAllScalars(std::vector<CodepointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  uint32_t next = 0;  // smallest scalar value not yet covered
  for (const CodepointRange& r : ranges) {
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
    if (r.lo > next) return false;
    if (r.hi >= next) next = r.hi + 1;
    if (next > kMaxCodepoint) return true;
  }
  if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
  return next > kMaxCodepoint;
}

class Parser {
 public:
  Parser(std::string_view text, const SourceMap& map, const GrammarLimits& limits,
         GrammarBuilder* builder, std::vector<Diagnostic>* warnings)
      : cursor_(text), map_(map), limits_(limits), b_(*builder), warnings_(*warnings) {}

  void ParseAll() {
    if (cursor_.StartsWith("\xEF\xBB\xBF")) cursor_.Advance(3);  // a byte-order mark
    cursor_.SkipSpace(true);
    while (!cursor_.AtEnd()) {
      ParseRule();
      cursor_.SkipSpace(true);
    }
  }

 private:
  [[noreturn]] void Fail(std::string code, std::string message, std::string hint, size_t offset,
                         size_t length = 1) {
    std::vector<Diagnostic> errors{map_.Make(Severity::kError, std::move(code),
                                             std::move(message), std::move(hint), offset, length)};
    throw GrammarError(std::move(errors), warnings_);
  }

  NodeId Add(Node node) {
    if (b_.nodes.size() >= limits_.max_nodes) {
      Fail("grammar_too_large",
           "grammar has more than " + std::to_string(limits_.max_nodes) + " syntax nodes",
           "split it or raise GrammarLimits.max_nodes", node.span.offset, node.span.length);
    }
    return b_.AddNode(std::move(node));
  }

  static Node MakeNode(NodeKind kind, size_t begin, size_t end) {
    Node node;
    node.kind = kind;
    node.span = SourceSpan{static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)};
    return node;
  }

  // Describes the code point at the cursor for "unexpected character" messages.
  std::string CurrentCharText() const {
    const size_t len = cursor_.CodepointLength();
    const std::string_view s = cursor_.Slice(cursor_.pos(), cursor_.pos() + len);
    if (s == "\t") return "a tab";
    if (s.size() == 1 && (static_cast<unsigned char>(s[0]) < 0x20)) return "a control character";
    return "'" + std::string(s) + "'";
  }

  [[noreturn]] void FailUnexpected(std::string_view expected) {
    const size_t pos = cursor_.pos();
    if (cursor_.AtEnd()) {
      Fail("unexpected_end", "text ends here, expected " + std::string(expected), "", pos);
    }
    Cursor probe(cursor_);
    if (IsTypographicQuote(probe.NextCodepoint())) {
      Fail("typographic_quote", "typographic quote " + CurrentCharText() + " is not a GBNF quote",
           "use an ASCII double quote \" around string literals", pos, cursor_.CodepointLength());
    }
    std::string hint;
    switch (cursor_.Peek()) {
      case '\'': hint = "string literals use double quotes: \"...\""; break;
      case ')': hint = "this ')' has no matching '('"; break;
      case ']': hint = "this ']' has no matching '['"; break;
      case '=': case ':': hint = "a rule definition is written name ::= ..."; break;
      default: break;
    }
    Fail("unexpected_character",
         "unexpected " + CurrentCharText() + ", expected " + std::string(expected), hint, pos,
         cursor_.CodepointLength());
  }

  std::string_view ParseName() {
    const size_t begin = cursor_.pos();
    while (IsNameChar(cursor_.Peek())) cursor_.Advance();
    return cursor_.Slice(begin, cursor_.pos());
  }

  void ParseRule() {
    const size_t begin = cursor_.pos();
    if (!IsNameChar(cursor_.Peek())) {
      if (cursor_.Peek() == '|') {
        Fail("unexpected_character", "'|' outside of a rule",
             "an alternative continues the rule on the line before it; define a rule first",
             begin);
      }
      const int c = cursor_.Peek();
      if (c == '"' || c == '[' || c == '(' || c == '.' || c == '<') {
        Fail("unexpected_character", "expected a rule name at the start of a line",
             "a line break ends a rule; to continue it, wrap the body in ( ... ) or start the "
             "next line with |", begin, cursor_.CodepointLength());
      }
      FailUnexpected("a rule name");
    }
    const std::string_view name = ParseName();
    cursor_.SkipSpace(false);
    if (!cursor_.StartsWith("::=")) {
      std::string hint = "a rule definition is written " + std::string(name) + " ::= ...";
      Fail("missing_assign", "expected '::=' after rule name " + Quote(name), hint,
           cursor_.pos(), cursor_.CodepointLength());
    }
    cursor_.Advance(3);
    cursor_.SkipSpace(true);
    const NodeId body = ParseAlternates(/*nested=*/false, 0);
    if (!cursor_.AtEnd() && !cursor_.AtNewline()) FailUnexpected("an element, '|' or a line break");
    DefineRule(name, begin, body);
  }

  void DefineRule(std::string_view name, size_t begin, NodeId body) {
    const RuleId id = b_.InternRule(name);
    if (b_.rules.size() > limits_.max_rules) {
      Fail("too_many_rules", "grammar has more than " + std::to_string(limits_.max_rules) +
                                 " rules", "raise GrammarLimits.max_rules", begin, name.size());
    }
    GrammarBuilder::RuleInfo& info = b_.info[id];
    if (info.defined) {
      warnings_.push_back(map_.Make(Severity::kWarning, "redefined_rule",
                                    "rule " + Quote(name) + " is defined again; the last "
                                    "definition wins", "", begin, name.size()));
    }
    info.defined = true;
    info.definition = begin;
    b_.layout.definitions.push_back({id, static_cast<uint32_t>(begin), body});
    b_.rules[id].body = body;
    b_.rules[id].span = SourceSpan{static_cast<uint32_t>(begin), static_cast<uint32_t>(name.size())};
  }

  // After a top-level line break, a line starting with '|' continues the rule.
  bool ContinuationFollows() {
    const size_t saved = cursor_.pos();
    cursor_.SkipSpace(true);
    if (cursor_.Peek() == '|') return true;
    cursor_.set_pos(saved);
    return false;
  }

  // The children of the node being parsed sit on top of a stack shared by every level (a
  // nested group parses above them and pops back), so a node's children are stored once, at
  // their final size.
  Slice<NodeId> TakeChildren(std::vector<NodeId>* stack, size_t base) {
    const Slice<NodeId> children =
        b_.storage->children.Store(stack->data() + base, stack->size() - base);
    stack->resize(base);
    return children;
  }

  NodeId ParseAlternates(bool nested, uint32_t depth) {
    const size_t begin = cursor_.pos();
    const size_t base = alternatives_.size();
    const NodeId first = ParseSequence(nested, depth);
    alternatives_.push_back(first);
    for (;;) {
      if (cursor_.Peek() == '|') {
        const auto bar = static_cast<uint32_t>(cursor_.pos());
        cursor_.Advance();
        cursor_.SkipSpace(true);
        const NodeId added_id = ParseSequence(nested, depth);
        alternatives_.push_back(added_id);
        const Node& added = b_.nodes[added_id];
        if (added.kind == NodeKind::kSequence && added.children.empty()) {
          b_.layout.empty_alternatives.push_back({added_id, bar});
        }
      } else if (!nested && cursor_.AtNewline() && ContinuationFollows()) {
        b_.layout.continuations.push_back({static_cast<uint32_t>(cursor_.pos()),
                                           alternatives_.back()});
        continue;
      } else {
        break;
      }
    }
    if (alternatives_.size() == base + 1) {
      alternatives_.pop_back();
      return first;
    }
    Node node = MakeNode(NodeKind::kAlternation, begin, cursor_.pos());
    node.children = TakeChildren(&alternatives_, base);
    return Add(std::move(node));
  }

  bool AtElementStart() const {
    const int c = cursor_.Peek();
    return c == '"' || c == '[' || c == '.' || c == '(' || c == '<' || c == '!' || IsNameChar(c);
  }

  static bool IsPostfix(int c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  NodeId ParseSequence(bool nested, uint32_t depth) {
    const size_t begin = cursor_.pos();
    const size_t base = items_.size();
    uint32_t postfix_depth = 0;  // postfix operators applied to the last item so far
    for (;;) {
      const int c = cursor_.Peek();
      if (AtElementStart()) {
        const NodeId item = ParseElement(depth);
        items_.push_back(item);
        postfix_depth = 0;
      } else if (IsPostfix(c)) {
        if (items_.size() == base) {
          Fail("dangling_operator", "repetition operator '" + std::string(1, char(c)) +
                                        "' has nothing to repeat",
               "put it right after the element to repeat, e.g. \"a\"*", cursor_.pos());
        }
        const size_t op_begin = cursor_.pos();
        if (depth + ++postfix_depth > limits_.max_nesting_depth) FailTooDeep(op_begin);
        const NodeId repeated = ParseRepetition(items_.back(), op_begin);
        items_.back() = repeated;
      } else if (c >= 0x80 || c == '\'') {
        FailUnexpected("an element");  // typographic quotes and other stray characters
      } else {
        break;
      }
      cursor_.SkipSpace(nested);
    }
    if (items_.size() == base + 1) {
      const NodeId only = items_.back();
      items_.pop_back();
      return only;
    }
    Node node = MakeNode(NodeKind::kSequence, begin, cursor_.pos());
    node.children = TakeChildren(&items_, base);
    return Add(std::move(node));
  }

  [[noreturn]] void FailTooDeep(size_t offset) {
    Fail("nesting_too_deep", "nesting is deeper than " +
                                 std::to_string(limits_.max_nesting_depth) + " levels",
         "move inner parts into rules of their own, or raise GrammarLimits.max_nesting_depth",
         offset);
  }

  NodeId ParseElement(uint32_t depth) {
    switch (cursor_.Peek()) {
      case '"': return ParseLiteral();
      case '[': return ParseClass();
      case '.': {
        cursor_.Advance();
        return Add(MakeNode(NodeKind::kAnyChar, cursor_.pos() - 1, cursor_.pos()));
      }
      case '(': return ParseGroup(depth + 1);
      case '<':
      case '!': return ParseTokenRef();
      default: return ParseRuleRef();
    }
  }

  NodeId ParseGroup(uint32_t depth) {
    const size_t open = cursor_.pos();
    if (depth > limits_.max_nesting_depth) FailTooDeep(open);
    cursor_.Advance();
    cursor_.SkipSpace(true);
    const NodeId inner = ParseAlternates(/*nested=*/true, depth);
    if (cursor_.AtEnd()) {
      Fail("unclosed_group", "'(' is never closed", "add the matching ')'", open);
    }
    if (cursor_.Peek() != ')') FailUnexpected("an element, '|' or ')'");
    cursor_.Advance();
    b_.layout.groups.push_back(
        {inner, SourceSpan{static_cast<uint32_t>(open), static_cast<uint32_t>(cursor_.pos() - open)}});
    return inner;
  }

  NodeId ParseRuleRef() {
    const size_t begin = cursor_.pos();
    const std::string_view name = ParseName();
    Cursor probe(cursor_);
    probe.SkipSpace(false);
    if (probe.StartsWith("::=")) {
      Fail("unexpected_definition",
           "rule " + Quote(name) + " is defined inside another rule's body",
           "start each rule on a new line (and close any open '(' before it)", begin,
           name.size());
    }
    const RuleId id = b_.InternRule(name);
    if (b_.info[id].first_reference == SIZE_MAX) b_.info[id].first_reference = begin;
    Node node = MakeNode(NodeKind::kRuleRef, begin, cursor_.pos());
    node.rule = id;
    return Add(std::move(node));
  }

  NodeId ParseLiteral() {
    const size_t open = cursor_.pos();
    cursor_.Advance();
    Node node = MakeNode(NodeKind::kLiteral, open, open);
    codepoints_.clear();
    for (;;) {
      if (cursor_.AtEnd()) {
        Fail("unterminated_literal", "string literal is never closed",
             "add the closing \"", open);
      }
      if (cursor_.Peek() == '"') break;
      codepoints_.push_back(ParseChar(open));
    }
    node.codepoints = b_.storage->codepoints.Store(codepoints_.data(), codepoints_.size());
    cursor_.Advance();
    node.span.length = static_cast<uint32_t>(cursor_.pos() - open);
    return Add(std::move(node));
  }

  // One code point of a literal or class: raw UTF-8 or an escape.
  uint32_t ParseChar(size_t open) {
    if (cursor_.Peek() != '\\') return cursor_.NextCodepoint();
    const size_t escape = cursor_.pos();
    cursor_.Advance();
    if (cursor_.AtEnd()) Fail("unterminated_literal", "text ends inside an escape", "", open);
    const int c = cursor_.Peek();
    switch (c) {
      case 'x': return ParseHex(2, escape);
      case 'u': return ParseHex(4, escape);
      case 'U': return ParseHex(8, escape);
      case 'n': cursor_.Advance(); return '\n';
      case 'r': cursor_.Advance(); return '\r';
      case 't': cursor_.Advance(); return '\t';
      case '\\': case '"': case '[': case ']': case '-':
        cursor_.Advance();
        return static_cast<uint32_t>(c);
      default: {
        const size_t len = cursor_.CodepointLength();
        Fail("unknown_escape",
             "unknown escape '\\" + std::string(cursor_.Slice(cursor_.pos(), cursor_.pos() + len)) +
                 "'", kEscapeHint, escape, 1 + len);
      }
    }
  }

  uint32_t ParseHex(int digits, size_t escape) {
    cursor_.Advance();  // the x, u or U
    uint64_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int v = HexValue(cursor_.Peek());
      if (v < 0) {
        Fail("bad_escape", "expected " + std::to_string(digits) + " hex digits in this escape",
             kEscapeHint, escape, cursor_.pos() - escape + 1);
      }
      value = value * 16 + static_cast<uint64_t>(v);
      cursor_.Advance();
    }
    if (value > kMaxCodepoint) {
      Fail("codepoint_out_of_range", "code point is above U+10FFFF, the largest in Unicode", "",
           escape, cursor_.pos() - escape);
    }
    return static_cast<uint32_t>(value);
  }

  NodeId ParseClass() {
    const size_t open = cursor_.pos();
    cursor_.Advance();
    Node node = MakeNode(NodeKind::kCharClass, open, open);
    ranges_.clear();
    if (cursor_.Peek() == '^') {
      node.negated = true;
      cursor_.Advance();
    }
    for (;;) {
      if (cursor_.AtEnd()) Fail("unterminated_class", "character class is never closed",
                                "add the closing ]", open);
      if (cursor_.Peek() == ']') break;
      const size_t item = cursor_.pos();
      CodepointRange range;
      range.lo = range.hi = ParseChar(open);
      if (cursor_.Peek() == '-' && cursor_.Peek(1) != ']' && cursor_.Peek(1) != -1) {
        cursor_.Advance();
        range.hi = ParseChar(open);
        if (range.hi < range.lo) {
          Fail("inverted_range", "range " + std::string(cursor_.Slice(item, cursor_.pos())) +
                                     " is inverted (its start is after its end)",
               "write the smaller end first", item, cursor_.pos() - item);
        }
      }
      ranges_.push_back(range);
    }
    cursor_.Advance();
    node.span.length = static_cast<uint32_t>(cursor_.pos() - open);
    if (ranges_.empty() && !node.negated) {
      Fail("empty_class", "empty character class [] matches nothing",
           "list characters inside it, or use [^] for any character", open, 2);
    }
    if (node.negated && CoversAllScalars(ranges_)) {
      Fail("empty_class", "this negated class excludes every character, so it matches nothing",
           "", open, node.span.length);
    }
    node.ranges = b_.storage->ranges.Store(ranges_.data(), ranges_.size());
    return Add(std::move(node));
  }

  NodeId ParseTokenRef() {
    const size_t begin = cursor_.pos();
    Node node = MakeNode(NodeKind::kTokenRef, begin, begin);
    if (cursor_.Peek() == '!') {
      node.negated = true;
      cursor_.Advance();
      if (cursor_.Peek() != '<') {
        Fail("bad_token_ref", "'!' must be followed by a token reference",
             "write !<[42]> or !<text>", begin);
      }
    }
    const size_t open = cursor_.pos();
    cursor_.Advance();
    if (cursor_.Peek() == '[') {
      ParseTokenId(&node, begin);
    } else {
      while (!cursor_.AtEnd() && !cursor_.AtNewline() && cursor_.Peek() != '>') cursor_.Advance();
      if (cursor_.Peek() != '>') {
        Fail("bad_token_ref", "token reference is never closed with '>'",
             "write <[42]> for a token id or <text> for a token's text", begin);
      }
      cursor_.Advance();
      if (cursor_.pos() - open == 2) {
        Fail("bad_token_ref", "empty token reference <>", "write <[42]> or <text>", begin, 2);
      }
      node.token_text = b_.storage->StoreText(cursor_.Slice(open, cursor_.pos()));
    }
    node.span.length = static_cast<uint32_t>(cursor_.pos() - begin);
    return Add(std::move(node));
  }

  void ParseTokenId(Node* node, size_t begin) {
    cursor_.Advance();  // '['
    uint64_t id = 0;
    const size_t digits = cursor_.pos();
    while (IsDigit(cursor_.Peek()) && id <= UINT32_MAX) {
      id = id * 10 + static_cast<uint64_t>(cursor_.Peek() - '0');
      cursor_.Advance();
    }
    if (cursor_.pos() == digits || id > UINT32_MAX || cursor_.Peek() != ']' ||
        cursor_.Peek(1) != '>') {
      Fail("bad_token_ref", "malformed token id reference", "write <[42]>: a decimal id in brackets",
           begin, cursor_.pos() - begin + 1);
    }
    cursor_.Advance(2);
    node->token_by_id = true;
    node->token_id = static_cast<uint32_t>(id);
  }

  // Parses a number of a repetition; values past the limit are reported by the caller.
  bool ParseBound(uint64_t* value) {
    if (!IsDigit(cursor_.Peek())) return false;
    *value = 0;
    while (IsDigit(cursor_.Peek())) {
      if (*value <= UINT32_MAX) *value = *value * 10 + static_cast<uint64_t>(cursor_.Peek() - '0');
      cursor_.Advance();
    }
    return true;
  }

  NodeId ParseRepetition(NodeId item, size_t begin) {
    uint64_t min = 0, max = kUnbounded;
    const int op = cursor_.Peek();
    cursor_.Advance();
    if (op == '+') min = 1;
    if (op == '?') max = 1;
    if (op == '{') ParseBraces(begin, &min, &max);
    Node node = MakeNode(NodeKind::kRepeat, begin, cursor_.pos());
    node.min = static_cast<uint32_t>(min);
    node.max = static_cast<uint32_t>(max);
    node.children = b_.storage->children.Store(&item, 1);
    return Add(std::move(node));
  }

  void ParseBraces(size_t begin, uint64_t* min, uint64_t* max) {
    const char* form_hint = "write {m}, {m,}, {m,n} or {,n}";
    cursor_.SkipSpace(false);
    const bool has_min = ParseBound(min);
    cursor_.SkipSpace(false);
    if (cursor_.Peek() == ',') {
      cursor_.Advance();
      cursor_.SkipSpace(false);
      const bool has_max = ParseBound(max);
      if (!has_min && !has_max) {
        Fail("bad_repetition", "repetition needs at least one bound", form_hint, begin,
             cursor_.pos() - begin + 1);
      }
      if (!has_max) *max = kUnbounded;
    } else if (has_min) {
      *max = *min;
    } else {
      Fail("bad_repetition", "expected a number after '{'", form_hint, begin,
           cursor_.pos() - begin + 1);
    }
    cursor_.SkipSpace(false);
    if (cursor_.Peek() != '}') {
      Fail("bad_repetition", "expected '}' to close the repetition", form_hint, begin,
           cursor_.pos() - begin + 1);
    }
    cursor_.Advance();
    b_.layout.braces.push_back(
        {SourceSpan{static_cast<uint32_t>(begin), static_cast<uint32_t>(cursor_.pos() - begin)},
         has_min});
    const uint64_t limit = limits_.max_repetition_bound;
    if (*min > limit || (*max != kUnbounded && *max > limit)) {
      Fail("repetition_too_large", "repetition bound is larger than " + std::to_string(limit),
           "raise GrammarLimits.max_repetition_bound, or use * / + for no bound", begin,
           cursor_.pos() - begin);
    }
    if (*max != kUnbounded && *min > *max) {
      Fail("bad_repetition_bounds", "repetition lower bound " + std::to_string(*min) +
                                        " is greater than its upper bound " + std::to_string(*max),
           "write {" + std::to_string(*max) + "," + std::to_string(*min) + "}", begin,
           cursor_.pos() - begin);
    }
  }

  Cursor cursor_;
  const SourceMap& map_;
  const GrammarLimits& limits_;
  GrammarBuilder& b_;
  std::vector<Diagnostic>& warnings_;
  std::vector<NodeId> items_;         // ParseSequence's items, every level's (TakeChildren)
  std::vector<NodeId> alternatives_;  // ParseAlternates' alternatives, likewise
  std::vector<uint32_t> codepoints_;  // the literal being parsed
  std::vector<CodepointRange> ranges_;  // the class being parsed
};

}  // namespace

void ParseRules(std::string_view text, const SourceMap& map, const GrammarLimits& limits,
                GrammarBuilder* builder, std::vector<Diagnostic>* warnings) {
  Parser(text, map, limits, builder, warnings).ParseAll();
}

}  // namespace gbnf::detail
