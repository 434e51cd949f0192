// Canonical GBNF output. Every tree the parser can build prints to text that parses back to the
// same tree: parentheses exactly where the tree has a composite node inside another, empty
// sequences as "()", and escapes for characters that would be read differently.
#include <string>

#include "gbnf_sampler/grammar.h"
#include "support/utf8.h"

namespace gbnf {
namespace {

void AppendHex(uint32_t cp, int digits, char prefix, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  out->push_back('\\');
  out->push_back(prefix);
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out->push_back(kHex[(cp >> shift) & 15]);
}

// Appends one code point of a literal (in_class false) or class (in_class true).
void AppendChar(uint32_t cp, bool in_class, std::string* out) {
  switch (cp) {
    case '\n': *out += "\\n"; return;
    case '\r': *out += "\\r"; return;
    case '\t': *out += "\\t"; return;
    case '\\': *out += "\\\\"; return;
    default: break;
  }
  if (!in_class && cp == '"') {
    *out += "\\\"";
  } else if (in_class && (cp == ']' || cp == '-' || cp == '[')) {
    out->push_back('\\');
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
    AppendHex(cp, 2, 'x', out);
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    AppendHex(cp, 4, 'u', out);  // a lone surrogate cannot be written as UTF-8 text
  } else {
    detail::AppendUtf8(cp, out);
  }
}

class Printer {
 public:
  explicit Printer(const Grammar& g) : g_(g) {}

  std::string Print() {
    for (const Rule& rule : g_.rules()) {
      out_ += rule.name;
      out_ += " ::= ";
      PrintNode(rule.body, /*parent=*/Context::kTop);
      out_ += '\n';
    }
    const std::vector<uint8_t>& distinct = g_.DistinctItemRules();
    for (size_t r = 0; r < distinct.size(); ++r) {
      if (distinct[r] == 0) continue;
      out_ += "#@ distinct-items ";
      out_ += g_.rule(static_cast<RuleId>(r)).name;
      out_ += '\n';
    }
    return std::move(out_);
  }

 private:
  enum class Context { kTop, kAlternative, kSequenceItem, kRepeated };

  static bool IsAtom(NodeKind kind) {
    return kind != NodeKind::kSequence && kind != NodeKind::kAlternation &&
           kind != NodeKind::kRepeat;
  }

  bool NeedsParens(const Node& node, Context context) const {
    if (node.kind == NodeKind::kSequence && node.children.empty()) return true;
    switch (context) {
      case Context::kTop: return false;
      case Context::kAlternative: return node.kind == NodeKind::kAlternation;
      case Context::kSequenceItem:
        return node.kind == NodeKind::kAlternation || node.kind == NodeKind::kSequence;
      case Context::kRepeated: return !IsAtom(node.kind);
    }
    return false;
  }

  void PrintNode(NodeId id, Context context) {
    const Node& node = g_.node(id);
    const bool parens = NeedsParens(node, context);
    if (parens) out_ += '(';
    PrintBare(node);
    if (parens) out_ += ')';
  }

  void PrintBare(const Node& node) {
    switch (node.kind) {
      case NodeKind::kSequence: PrintList(node, " ", Context::kSequenceItem); break;
      case NodeKind::kAlternation: PrintList(node, " | ", Context::kAlternative); break;
      case NodeKind::kLiteral:
        out_ += '"';
        for (uint32_t cp : node.codepoints) AppendChar(cp, false, &out_);
        out_ += '"';
        break;
      case NodeKind::kCharClass: PrintClass(node); break;
      case NodeKind::kAnyChar: out_ += '.'; break;
      case NodeKind::kRuleRef: out_ += g_.rule(node.rule).name; break;
      case NodeKind::kTokenRef:
        if (node.negated) out_ += '!';
        if (node.token_by_id) {
          out_ += "<[" + std::to_string(node.token_id) + "]>";
        } else {
          out_ += node.token_text;
        }
        break;
      case NodeKind::kRepeat:
        PrintNode(node.children[0], Context::kRepeated);
        PrintBounds(node.min, node.max);
        break;
    }
  }

  void PrintList(const Node& node, const char* separator, Context context) {
    for (size_t i = 0; i < node.children.size(); ++i) {
      if (i > 0) out_ += separator;
      PrintNode(node.children[i], context);
    }
  }

  void PrintClass(const Node& node) {
    out_ += node.negated ? "[^" : "[";
    for (size_t i = 0; i < node.ranges.size(); ++i) {
      const CodepointRange& r = node.ranges[i];
      if (i == 0 && !node.negated && r.lo == '^') {
        AppendHex('^', 2, 'x', &out_);  // a leading ^ would read as negation
      } else {
        AppendChar(r.lo, true, &out_);
      }
      if (r.hi != r.lo) {
        out_ += '-';
        AppendChar(r.hi, true, &out_);
      }
    }
    out_ += ']';
  }

  void PrintBounds(uint32_t min, uint32_t max) {
    if (min == 0 && max == kUnbounded) {
      out_ += '*';
    } else if (min == 1 && max == kUnbounded) {
      out_ += '+';
    } else if (min == 0 && max == 1) {
      out_ += '?';
    } else if (min == max) {
      out_ += "{" + std::to_string(min) + "}";
    } else if (max == kUnbounded) {
      out_ += "{" + std::to_string(min) + ",}";
    } else {
      out_ += "{" + std::to_string(min) + "," + std::to_string(max) + "}";
    }
  }

  const Grammar& g_;
  std::string out_;
};

}  // namespace

std::string PrintGrammar(const Grammar& grammar) { return Printer(grammar).Print(); }

}  // namespace gbnf
