// The parsed grammar: an abstract syntax tree kept exactly as written (no normalization), so that
// printing it back gives GBNF that parses to the same tree. Normalization into byte-level automata
// happens later, in the automaton builder (csrc/automaton/).
//
// Layout: every node lives in one flat array (Grammar::nodes), addressed by NodeId; composite
// nodes list their children's ids. Rules are another array; a RuleRef names a rule by RuleId.
// A node's variable-length parts (children, code points, ranges, token text) are Slices of
// arrays the grammar owns (NodeStorage): no allocation per node, and nodes stay small.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gbnf_sampler/error.h"
#include "gbnf_sampler/limits.h"

namespace gbnf {

using NodeId = uint32_t;
using RuleId = uint32_t;

// Repetition upper bound meaning "no bound" (x*, x+, x{m,}).
inline constexpr uint32_t kUnbounded = UINT32_MAX;
// The largest code point a grammar may name (\U escapes above it are rejected).
inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

enum class NodeKind : uint8_t {
  kSequence,     // children matched one after another; zero children = the empty string
  kAlternation,  // one of children (always >= 2; the parser never builds a one-child one)
  kLiteral,      // codepoints, in order ("abc", "\x41")
  kCharClass,    // one code point inside (or, if negated, outside) the union of ranges
  kAnyChar,      // "." : any one code point
  kRuleRef,      // rule
  kTokenRef,     // <[id]> / <text> and negations !<...>: one whole vocabulary token
  kRepeat,       // children[0] repeated min..max times (max may be kUnbounded)
};

// Inclusive code point range. In a parsed grammar lo <= hi always holds.
struct CodepointRange {
  uint32_t lo = 0;
  uint32_t hi = 0;
  friend bool operator==(const CodepointRange& a, const CodepointRange& b) {
    return a.lo == b.lo && a.hi == b.hi;
  }
};

// Byte span in the source text, for diagnostics. Synthesized nodes have length 0.
struct SourceSpan {
  uint32_t offset = 0;
  uint32_t length = 0;
};

// A read-only run of elements that a Grammar owns (its NodeStorage), valid while the grammar
// (or a copy of it) lives. Reads like a const std::vector.
template <typename T>
class Slice {
 public:
  using value_type = T;
  using const_iterator = const T*;
  using const_reverse_iterator = std::reverse_iterator<const T*>;

  Slice() = default;
  Slice(const T* data, uint32_t size) : data_(data), size_(size) {}

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }

  friend bool operator==(const Slice& a, const Slice& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Slice& a, const Slice& b) { return !(a == b); }

 private:
  const T* data_ = nullptr;
  uint32_t size_ = 0;
};

struct Node {
  NodeKind kind = NodeKind::kSequence;
  bool negated = false;                 // kCharClass ([^...]), kTokenRef (!<...>)
  bool token_by_id = false;             // kTokenRef: <[id]> (true) or <text> (false)
  uint32_t min = 0;                     // kRepeat
  uint32_t max = 0;                     // kRepeat (kUnbounded for no bound)
  uint32_t rule = 0;                    // kRuleRef: the rule referenced
  uint32_t token_id = 0;                // kTokenRef by id
  std::string_view token_text;          // kTokenRef by text: the token's UTF-8 text, with '<' '>'
  Slice<uint32_t> codepoints;           // kLiteral
  Slice<CodepointRange> ranges;         // kCharClass, in source order (not merged)
  Slice<NodeId> children;               // kSequence, kAlternation, kRepeat (exactly one)
  SourceSpan span;
};

struct Rule {
  std::string name;
  NodeId body = 0;
  SourceSpan span;  // the name at its (last) definition
};

// What the parser met that the syntax tree does not keep: the doctor's llama.cpp dialect check
// replays llama.cpp's own parser, whose result depends on the spelling (parentheses, lines that
// continue a rule, "{,n}"), and reports positions inside redefined rules too. Byte offsets.
struct SourceLayout {
  struct Definition {  // every definition, a redefined rule's earlier ones too
    RuleId rule = 0;
    uint32_t begin = 0;  // the name
    NodeId body = 0;
  };
  struct Group {  // "(" ... ")" around `inner` (one entry per pair, innermost first)
    NodeId inner = 0;
    SourceSpan span;  // from "(" to after ")"
  };
  struct EmptyAlternative {  // an empty alternative after a "|"
    NodeId node = 0;
    uint32_t bar = 0;
  };
  struct Continuation {  // a line starting with "|" continues the rule
    uint32_t bar = 0;
    NodeId previous = 0;  // the alternative before the line break
  };
  struct Braces {  // a "{...}" repetition
    SourceSpan span;
    bool has_min = true;  // false for "{,n}"
  };
  std::vector<Definition> definitions;  // in source order
  std::vector<Group> groups;
  std::vector<EmptyAlternative> empty_alternatives;
  std::vector<Continuation> continuations;
  std::vector<Braces> braces;
};

namespace detail {
struct RuleFacts;    // csrc/grammar/rule_facts.h
class NodeStorage;  // csrc/grammar/node_storage.h
class RuleNameIndex;  // csrc/grammar/rule_name_index.h
}  // namespace detail

class Grammar {
 public:
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  const Rule& rule(RuleId id) const { return rules_[id]; }
  RuleId root() const { return root_; }
  // Rule id by name, or -1.
  int64_t FindRule(std::string_view name) const;
  const std::vector<Diagnostic>& warnings() const { return warnings_; }
  const std::string& source() const { return source_; }
  const SourceLayout& layout() const { return layout_; }
  // Per rule: 1 when a "#@ distinct-items" directive names it (csrc/grammar/directives.h);
  // empty when none does.
  const std::vector<uint8_t>& DistinctItemRules() const { return distinct_items_; }

  // Structural equality of the rule set (names, bodies, root); ignores spans, warnings, source.
  bool SameAs(const Grammar& other) const;

  // The rule facts the parser's checks computed (no nesting limit), kept so that the automaton
  // need not walk the tree again; for a grammar with distinct-items rules (they change which
  // rules are inlined), computed again once the directives are read.
  const detail::RuleFacts* ParsedFacts() const { return parsed_facts_.get(); }

 private:
  friend class GrammarBuilder;
  // Fills the index FindRule reads (the builder calls it once the rules are final).
  void IndexRuleNames();
  std::vector<Rule> rules_;
  std::vector<Node> nodes_;
  std::shared_ptr<const detail::NodeStorage> storage_;  // what the nodes' slices point into
  RuleId root_ = 0;
  std::vector<Diagnostic> warnings_;
  std::string source_;
  SourceLayout layout_;
  std::vector<uint8_t> distinct_items_;
  std::shared_ptr<const detail::RuleFacts> parsed_facts_;
  // Rule ids by name for FindRule (csrc/grammar/rule_name_index.h; by id, so that a copy of the
  // grammar can use it as is).
  std::shared_ptr<const detail::RuleNameIndex> name_index_;
};

// Parses GBNF text; `root` names the start rule. Throws GrammarError (every problem found, with
// positions) when the text is not a usable grammar. Warnings land in Grammar::warnings().
Grammar ParseGrammar(std::string_view text, std::string_view root = "root",
                     const GrammarLimits& limits = GrammarLimits());

// Canonical GBNF for the grammar: rules in definition order, one per line. Parsing the output
// with the same root gives a grammar SameAs() this one.
std::string PrintGrammar(const Grammar& grammar);

}  // namespace gbnf
