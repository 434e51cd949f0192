#include "bindings/shims.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "llama/sampler_hook.h"
#include "mask/mask_cache.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

template <typename Fn>
Fn FromAddress(uintptr_t address) {
  return reinterpret_cast<Fn>(address);  // an address of llama.cpp's C API, from ctypes
}

template <typename F>
uintptr_t FunctionAddress(F* f) {
  return reinterpret_cast<uintptr_t>(f);
}

// A dict key made once per process (a grammar can have thousands of warnings): interned, and
// kept alive for the interpreter's lifetime on purpose.
py::handle Key(const char* name) {
  PyObject* key = PyUnicode_InternFromString(name);
  if (key == nullptr) throw py::error_already_set();
  return key;
}

}  // namespace

py::dict DiagnosticToDict(const Diagnostic& d) {
  static const py::handle kSeverity = Key("severity"), kCode = Key("code"),
                          kMessage = Key("message"), kHint = Key("hint"), kLine = Key("line"),
                          kColumn = Key("column"), kWidth = Key("width"),
                          kSnippet = Key("snippet"), kRendered = Key("rendered");
  py::dict out;
  out[kSeverity] = d.severity == Severity::kError ? "error" : "warning";
  out[kCode] = d.code;
  out[kMessage] = d.message;
  out[kHint] = d.hint;
  out[kLine] = d.line;
  out[kColumn] = d.column;
  out[kWidth] = d.width;
  out[kSnippet] = d.snippet;
  out[kRendered] = d.Render();
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
      py::object text = node.token_by_id ? py::none() : py::object(py::str(node.token_text.data(), node.token_text.size()));
      return py::make_tuple("token", token_id, text, node.negated);
    }
    case NodeKind::kRepeat: {
      py::object max = node.max == kUnbounded ? py::none() : py::object(py::int_(node.max));
      return py::make_tuple("repeat", NodeToTuple(g, node.children[0]), node.min, max);
    }
  }
  return py::make_tuple("seq", py::list());
}

namespace {

// Builds syntax nodes (gbnf_sampler.syntax's frozen dataclasses) without running their
// __init__: each object is allocated by object.__new__ and its fields are written to its
// __dict__ as dataclasses' own frozen __init__ writes them (object.__setattr__).
//
// The nodes and their tuples are left out of Python's cyclic collector: a syntax tree holds no
// cycle (a node refers to its children, ints and strs; frozen, it cannot be changed to refer to
// anything else), and a 1-5 MB grammar's million fresh objects made each young-generation pass
// of the collector that met them cost as much as the doctor's checks together. Reference
// counting frees them as before.
class NodeBuilder {
 public:
  NodeBuilder(const Grammar& g, const py::tuple& classes) : g_(g) {
    if (classes.size() != kClasses) throw py::value_error("rules_nodes needs the 8 node classes");
    for (size_t i = 0; i < kClasses; ++i) classes_[i] = classes[i];
  }

  py::object Build(NodeId id) {
    const Node& node = g_.node(id);
    switch (node.kind) {
      case NodeKind::kSequence: return Make(kSequence, {{"items", Children(node)}});
      case NodeKind::kAlternation: return Make(kAlternation, {{"items", Children(node)}});
      case NodeKind::kLiteral: {
        py::tuple cps(node.codepoints.size());
        for (size_t i = 0; i < node.codepoints.size(); ++i) cps[i] = py::int_(node.codepoints[i]);
        return Make(kLiteral, {{"codepoints", Untracked(std::move(cps))}});
      }
      case NodeKind::kCharClass: {
        py::tuple ranges(node.ranges.size());
        for (size_t i = 0; i < node.ranges.size(); ++i) {
          ranges[i] = Untracked(py::make_tuple(node.ranges[i].lo, node.ranges[i].hi));
        }
        return Make(kCharClass, {{"ranges", Untracked(std::move(ranges))},
                                 {"negated", py::bool_(node.negated)}});
      }
      case NodeKind::kAnyChar: return Make(kAnyChar, {});
      case NodeKind::kRuleRef: return Make(kRuleRef, {{"name", py::str(g_.rule(node.rule).name)}});
      case NodeKind::kTokenRef: {
        py::object token_id = node.token_by_id ? py::object(py::int_(node.token_id)) : py::none();
        py::object text = node.token_by_id ? py::none() : py::object(py::str(node.token_text.data(), node.token_text.size()));
        return Make(kTokenRef,
                    {{"token_id", token_id}, {"text", text}, {"negated", py::bool_(node.negated)}});
      }
      case NodeKind::kRepeat: {
        py::object max = node.max == kUnbounded ? py::none() : py::object(py::int_(node.max));
        return Make(kRepeat, {{"item", Build(node.children[0])},
                              {"min", py::int_(node.min)},
                              {"max", max}});
      }
    }
    return Make(kSequence, {{"items", py::tuple()}});
  }

 private:
  // The order of the classes handed in (gbnf_sampler.grammar._NODE_CLASSES).
  enum : size_t {
    kLiteral, kCharClass, kAnyChar, kRuleRef, kTokenRef, kRepeat, kSequence, kAlternation,
    kClasses
  };

  py::tuple Children(const Node& node) {
    py::tuple items(node.children.size());
    for (size_t i = 0; i < node.children.size(); ++i) items[i] = Build(node.children[i]);
    return Untracked(std::move(items));
  }

  template <typename T>
  static T Untracked(T obj) {
    if (PyObject_IS_GC(obj.ptr())) PyObject_GC_UnTrack(obj.ptr());
    return obj;
  }

  py::object Make(size_t cls, std::initializer_list<std::pair<const char*, py::object>> fields) {
    auto* type = reinterpret_cast<PyTypeObject*>(classes_[cls].ptr());
    py::object obj = py::reinterpret_steal<py::object>(
        PyBaseObject_Type.tp_new(type, no_args_.ptr(), nullptr));  // object.__new__(cls)
    if (!obj) throw py::error_already_set();
    for (const auto& [name, value] : fields) {
      if (PyObject_GenericSetAttr(obj.ptr(), Name(name), value.ptr()) != 0) {
        throw py::error_already_set();
      }
    }
    return Untracked(std::move(obj));
  }

  // The field name as an interned str, made once per builder (a handful of distinct names).
  PyObject* Name(const char* name) {
    for (const auto& [known, str] : names_) {
      if (known == name) return str.ptr();
    }
    PyObject* interned = PyUnicode_InternFromString(name);
    if (interned == nullptr) throw py::error_already_set();
    names_.emplace_back(name, py::reinterpret_steal<py::object>(interned));
    return names_.back().second.ptr();
  }

  const Grammar& g_;
  py::object classes_[kClasses];
  py::tuple no_args_;
  std::vector<std::pair<const char*, py::object>> names_;  // keyed by the literal's address
};

}  // namespace

py::list RulesNodes(const Grammar& g, const py::tuple& classes) {
  NodeBuilder builder(g, classes);
  py::list rules;
  for (const Rule& r : g.rules()) rules.append(py::make_tuple(r.name, builder.Build(r.body)));
  return rules;
}

py::object RuleNode(const Grammar& g, const std::string& name, const py::tuple& classes) {
  const int64_t r = g.FindRule(name);
  if (r < 0) throw py::key_error(name);
  return NodeBuilder(g, classes).Build(g.rule(static_cast<RuleId>(r)).body);
}

py::list RulesAst(const Grammar& g) {
  py::list rules;
  for (const Rule& r : g.rules()) rules.append(py::make_tuple(r.name, NodeToTuple(g, r.body)));
  return rules;
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

MatcherLimits ToMatcherLimits(uint32_t max_state_size, uint32_t max_rollback,
                              size_t max_history_bytes, int64_t max_whitespace) {
  MatcherLimits limits;
  limits.max_state_size = max_state_size;
  limits.max_rollback = max_rollback;
  limits.max_history_bytes = max_history_bytes;
  if (max_whitespace >= 0) {
    if (max_whitespace >= kNoWhitespaceLimit) throw py::value_error("max_whitespace too large");
    limits.max_whitespace = static_cast<uint32_t>(max_whitespace);
  }
  return limits;
}

std::pair<size_t, size_t> StateMaskSizes(const CompiledGrammar& compiled, StateId state) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  const detail::StateMask* mask = nullptr;
  {
    py::gil_scoped_release release;  // the first use fills the entry (milliseconds)
    mask = &compiled.mask_cache().StateMaskOf(state);
  }
  return {mask->accepted.size(), mask->dependent.size()};
}

std::shared_ptr<Vocab> VocabFromLlama(uintptr_t vocab, uintptr_t n_tokens, uintptr_t to_piece,
                                      uintptr_t get_attr, uintptr_t is_eog,
                                      uint32_t special_attrs) {
  LlamaVocabApi api;
  api.vocab = reinterpret_cast<const void*>(vocab);
  api.n_tokens = FromAddress<decltype(api.n_tokens)>(n_tokens);
  api.token_to_piece = FromAddress<decltype(api.token_to_piece)>(to_piece);
  api.get_attr = FromAddress<decltype(api.get_attr)>(get_attr);
  api.is_eog = FromAddress<decltype(api.is_eog)>(is_eog);
  py::gil_scoped_release release;
  return std::const_pointer_cast<Vocab>(ExtractLlamaVocab(api, special_attrs));
}

py::dict LlamaHookAddresses() {
  py::dict out;
  out["name"] = FunctionAddress(&llama::HookName);
  out["accept"] = FunctionAddress(&llama::HookAccept);
  out["apply"] = FunctionAddress(&llama::HookApply);
  out["reset"] = FunctionAddress(&llama::HookReset);
  out["clone"] = FunctionAddress(&llama::HookClone);
  out["free"] = FunctionAddress(&llama::HookFree);
  return out;
}

uintptr_t NewSamplerContext(Exclusive<TokenMatcher>& matcher, uintptr_t init_address,
                            uintptr_t iface_address) {
  if (init_address == 0 || iface_address == 0) {
    throw py::value_error("llama_sampler_init and the function table must be non-null");
  }
  auto init = reinterpret_cast<llama::SamplerInitFn>(init_address);
  TokenMatcher fork = [&] {
    ExclusiveUse<TokenMatcher> use(matcher);
    TokenMatcher copy = matcher.Fork();
    copy.set_prefetch(true);  // the sampler's own matcher, not a probe
    return copy;
  }();
  auto* ctx =
      llama::CreateContext(std::move(fork), init, reinterpret_cast<const void*>(iface_address));
  return reinterpret_cast<uintptr_t>(ctx);
}

llama::SamplerContext& SamplerContextAt(uintptr_t address) {
  if (address == 0) throw py::value_error("null sampler context");
  return *reinterpret_cast<llama::SamplerContext*>(address);
}

}  // namespace gbnf::bindings
