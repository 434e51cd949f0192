#include "bindings/source_layout.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

// Offsets are the doctor's: code point indices into the text (Python str offsets), and node
// spans as its position-recording parser (python/gbnf_sampler/doctor/source.py) records them:
// a parenthesised node spans its outermost parentheses, an empty alternative the "|" before it,
// a sequence or alternation ends where its last part ends, a repetition starts with its item.
class LayoutExport {
 public:
  explicit LayoutExport(const Grammar& g) : g_(g), layout_(g.layout()) {
    const std::string& text = g.source();
    if (!std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) {
      char_at_.resize(text.size() + 1);
      uint32_t index = 0;
      for (size_t i = 0; i < text.size(); ++i) {
        char_at_[i] = index;
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++index;
      }
      char_at_[text.size()] = index;
    }
    const size_t n = g.nodes().size();
    groups_.assign(n, 0);
    outer_.resize(n);
    for (const SourceLayout::Group& group : layout_.groups) {
      ++groups_[group.inner];
      outer_[group.inner] = group.span;  // the outermost pair closes last
    }
    bar_.assign(n, kNone);
    for (const SourceLayout::EmptyAlternative& e : layout_.empty_alternatives) bar_[e.node] = e.bar;
    span_.assign(n, {kNone, kNone});
  }

  py::list Definitions() {
    py::list out;
    for (const SourceLayout::Definition& d : layout_.definitions) {
      const std::string& name = g_.rule(d.rule).name;
      out.append(py::make_tuple(name, Char(d.begin), Char(Span(d.body).second), Tree(d.body)));
    }
    return out;
  }

  py::list Events() {
    std::vector<Event> events;
    if (g_.source().rfind("\xEF\xBB\xBF", 0) == 0) events.push_back({"bom", 0, 3, ""});
    for (const SourceLayout::Definition& d : layout_.definitions) {
      const std::string& name = g_.rule(d.rule).name;
      events.push_back({"name", d.begin, d.begin + static_cast<uint32_t>(name.size()), name, true});
      LeafEvents(d.body, &events);
    }
    for (const SourceLayout::Braces& b : layout_.braces) {
      events.push_back({"brace", b.span.offset, b.span.offset + b.span.length, "", b.has_min});
    }
    for (const SourceLayout::Continuation& c : layout_.continuations) {
      events.push_back({"continuation", c.bar, c.bar + 1, "", false, Span(c.previous).second});
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.start < b.start; });
    py::list out;
    for (const Event& e : events) {
      out.append(py::make_tuple(e.kind, Char(e.start), Char(e.end), e.text, e.definition,
                                Char(e.prev_end)));
    }
    return out;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Event {
    const char* kind;
    uint32_t start;
    uint32_t end;
    std::string text;
    bool definition = false;
    uint32_t prev_end = 0;
  };

  uint32_t Char(uint32_t byte) const { return char_at_.empty() ? byte : char_at_[byte]; }

  static std::pair<uint32_t, uint32_t> Own(const Node& node) {
    return {node.span.offset, node.span.offset + node.span.length};
  }

  // The doctor's span of `id`, in bytes (memoised: shared subtrees are not re-walked).
  std::pair<uint32_t, uint32_t> Span(NodeId id) {
    std::pair<uint32_t, uint32_t>& memo = span_[id];
    if (memo.first != kNone) return memo;
    std::pair<uint32_t, uint32_t> span;
    const Node& node = g_.node(id);
    if (bar_[id] != kNone) {
      span = {bar_[id], bar_[id] + 1};
    } else if (groups_[id] > 0) {
      span = {outer_[id].offset, outer_[id].offset + outer_[id].length};
    } else if (node.kind == NodeKind::kRepeat) {
      span = {Span(node.children[0]).first, Own(node).second};
    } else if (!node.children.empty()) {  // a sequence or alternation
      span = {node.span.offset, Span(node.children.back()).second};
    } else {
      span = Own(node);
      if (node.kind == NodeKind::kSequence) span.second = span.first;
    }
    span_[id] = span;
    return span;
  }

  // The node as NodeToTuple gives it, with (start, end, parentheses around it) appended.
  py::tuple Tree(NodeId id) {
    const Node& node = g_.node(id);
    py::tuple base;
    if (node.kind == NodeKind::kSequence || node.kind == NodeKind::kAlternation) {
      py::list items;
      for (NodeId child : node.children) items.append(Tree(child));
      base = py::make_tuple(node.kind == NodeKind::kSequence ? "seq" : "alt", items);
    } else if (node.kind == NodeKind::kRepeat) {
      py::object max = node.max == kUnbounded ? py::none() : py::object(py::int_(node.max));
      base = py::make_tuple("repeat", Tree(node.children[0]), node.min, max);
    } else {
      base = NodeToTuple(g_, id);
    }
    const std::pair<uint32_t, uint32_t> span = Span(id);
    return py::reinterpret_steal<py::tuple>(PySequence_Concat(
        base.ptr(), py::make_tuple(Char(span.first), Char(span.second), groups_[id]).ptr()));
  }

  // Rule names, and the literals and classes llama.cpp reads otherwise, under `id`.
  void LeafEvents(NodeId id, std::vector<Event>* events) const {
    const Node& node = g_.node(id);
    const auto [start, end] = Own(node);
    switch (node.kind) {
      case NodeKind::kRuleRef:
        events->push_back({"name", start, end, g_.rule(node.rule).name, false});
        break;
      case NodeKind::kLiteral:
        if (std::find(node.codepoints.begin(), node.codepoints.end(), 0u) !=
            node.codepoints.end()) {
          events->push_back({"nul", start, end, ""});
        }
        break;
      case NodeKind::kCharClass:
        if (node.negated && node.ranges.empty()) {
          events->push_back({"any_class", start, end, ""});
        } else if (!node.negated && std::any_of(node.ranges.begin(), node.ranges.end(),
                                                [](const CodepointRange& r) { return r.lo == 0; })) {
          events->push_back({"nul", start, end, ""});
        }
        break;
      default:
        for (NodeId child : node.children) LeafEvents(child, events);
        break;
    }
  }

  const Grammar& g_;
  const SourceLayout& layout_;
  std::vector<uint32_t> char_at_;  // byte offset -> code point index; empty for ASCII text
  std::vector<uint32_t> groups_;
  std::vector<SourceSpan> outer_;
  std::vector<uint32_t> bar_;
  std::vector<std::pair<uint32_t, uint32_t>> span_;
};

}  // namespace

py::tuple SourceLayoutOf(const Grammar& g) {
  LayoutExport layout(g);
  py::list definitions = layout.Definitions();
  return py::make_tuple(definitions, layout.Events());
}

}  // namespace gbnf::bindings
