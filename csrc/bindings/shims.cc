#include "bindings/shims.h"

namespace py = pybind11;

namespace gbnf::bindings {

py::dict DiagnosticToDict(const Diagnostic& d) {
  py::dict out;
  out["severity"] = d.severity == Severity::kError ? "error" : "warning";
  out["code"] = d.code;
  out["message"] = d.message;
  out["hint"] = d.hint;
  out["line"] = d.line;
  out["column"] = d.column;
  out["width"] = d.width;
  out["snippet"] = d.snippet;
  out["rendered"] = d.Render();
  return out;
}

py::list DiagnosticsToList(const std::vector<Diagnostic>& diagnostics) {
  py::list out;
  for (const Diagnostic& d : diagnostics) out.append(DiagnosticToDict(d));
  return out;
}

py::tuple NodeToTuple(const Grammar& g, NodeId id) {
  const Node& node = g.node(id);
  auto children = [&] {
    py::list items;
    for (NodeId child : node.children) items.append(NodeToTuple(g, child));
    return items;
  };
  switch (node.kind) {
    case NodeKind::kSequence: return py::make_tuple("seq", children());
    case NodeKind::kAlternation: return py::make_tuple("alt", children());
    case NodeKind::kLiteral: {
      py::list cps;
      for (uint32_t cp : node.codepoints) cps.append(cp);
      return py::make_tuple("lit", cps);
    }
    case NodeKind::kCharClass: {
      py::list ranges;
      for (const CodepointRange& r : node.ranges) ranges.append(py::make_tuple(r.lo, r.hi));
      return py::make_tuple("class", ranges, node.negated);
    }
    case NodeKind::kAnyChar: return py::make_tuple("any");
    case NodeKind::kRuleRef: return py::make_tuple("ref", g.rule(node.rule).name);
    case NodeKind::kTokenRef: {
      py::object token_id = node.token_by_id ? py::object(py::int_(node.token_id)) : py::none();
      py::object text = node.token_by_id ? py::none() : py::object(py::str(node.token_text));
      return py::make_tuple("token", token_id, text, node.negated);
    }
    case NodeKind::kRepeat: {
      py::object max = node.max == kUnbounded ? py::none() : py::object(py::int_(node.max));
      return py::make_tuple("repeat", NodeToTuple(g, node.children[0]), node.min, max);
    }
  }
  return py::make_tuple("seq", py::list());
}

void RegisterExceptionTranslators() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const GrammarError& e) {
      py::dict payload;
      payload["errors"] = DiagnosticsToList(e.errors());
      payload["warnings"] = DiagnosticsToList(e.warnings());
      py::object error = py::module_::import("gbnf_sampler.grammar").attr("_grammar_error")(payload);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    } catch (const LimitError& e) {
      py::object cls = py::module_::import("gbnf_sampler.errors").attr("GrammarTooComplexError");
      py::object error = cls(e.limit_name(), e.what());
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });
}

}  // namespace gbnf::bindings
