// Python bindings of the compiled grammar and the token-level matcher. Ergonomics (argument
// checks, defaults, the compile cache) live in python/gbnf_sampler/compiled.py and matcher.py.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/exclusive.h"
#include "gbnf_sampler/batch.h"
#include "gbnf_sampler/compiled_grammar.h"
#include "gbnf_sampler/token_matcher.h"
#include "mask/mask_cache.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

using PyTokenMatcher = Exclusive<TokenMatcher>;
using Use = ExclusiveUse<TokenMatcher>;

// Runs fn(matcher) holding the matcher; without the GIL when the work, `steps` byte steps over
// the live parser items, is large (kReleaseGilWork steps: always).
template <typename Fn>
auto Run(PyTokenMatcher& m, size_t steps, Fn&& fn) {
  Use use(m);
  if (steps < kReleaseGilWork &&
      steps * (m.byte_matcher().StateSize() + 1) < kReleaseGilWork) {
    return fn(static_cast<TokenMatcher&>(m));
  }
  py::gil_scoped_release release;
  return fn(static_cast<TokenMatcher&>(m));
}

// Shim: the row `index` of an int32 bitmask (1-D: the array itself) as a word pointer and count.
struct Row {
  uint32_t* words = nullptr;
  size_t num_words = 0;
};

Row BitmaskRow(py::array& bitmask, int64_t index) {
  if (!py::isinstance<py::array_t<int32_t>>(bitmask) || bitmask.itemsize() != 4) {
    throw py::type_error("bitmask must be an int32 array, got dtype " +
                         std::string(py::str(bitmask.dtype())));
  }
  if (!bitmask.writeable()) throw py::value_error("bitmask is read-only");
  const int64_t ndim = bitmask.ndim();
  if (ndim != 1 && ndim != 2) {
    throw py::value_error("bitmask must be 1-D or 2-D, got " + std::to_string(ndim) + "-D");
  }
  const int64_t rows = ndim == 1 ? 1 : bitmask.shape(0);
  if (index < 0 || index >= rows) {
    throw py::value_error("index " + std::to_string(index) + " is outside the bitmask's " +
                          std::to_string(rows) + " rows");
  }
  if (bitmask.strides(ndim - 1) != 4) throw py::value_error("bitmask rows must be contiguous");
  auto* base = static_cast<char*>(bitmask.mutable_data());
  Row row;
  row.words = reinterpret_cast<uint32_t*>(base + (ndim == 1 ? 0 : index * bitmask.strides(0)));
  row.num_words = static_cast<size_t>(bitmask.shape(ndim - 1));
  return row;
}

std::shared_ptr<CompiledGrammar> Compile(std::shared_ptr<Automaton> automaton,
                                         std::shared_ptr<Vocab> vocab, uint32_t max_state_size,
                                         uint32_t max_rollback, size_t max_history_bytes) {
  MatcherLimits limits;
  limits.max_state_size = max_state_size;
  limits.max_rollback = max_rollback;
  limits.max_history_bytes = max_history_bytes;
  py::gil_scoped_release release;
  return std::const_pointer_cast<CompiledGrammar>(
      CompiledGrammar::Compile(std::move(automaton), std::move(vocab), limits));
}

void FillMask(PyTokenMatcher& m, py::array& bitmask, int64_t index, bool reference) {
  Row row = BitmaskRow(bitmask, index);
  Run(m, kReleaseGilWork, [&](TokenMatcher& self) {
    if (reference) {
      self.FillMaskReference(row.words, row.num_words);
    } else {
      self.FillMask(row.words, row.num_words);
    }
  });
}

py::array_t<int32_t> AllowedTokens(PyTokenMatcher& m) {
  const std::vector<TokenId> ids =
      Run(m, kReleaseGilWork, [](TokenMatcher& self) { return self.AllowedTokens(); });
  py::array_t<int32_t> out(static_cast<py::ssize_t>(ids.size()));
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

bool AcceptBytes(PyTokenMatcher& m, const py::bytes& data) {
  char* ptr = nullptr;
  Py_ssize_t len = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &ptr, &len) != 0) throw py::error_already_set();
  const std::string_view view(ptr, static_cast<size_t>(len));
  return Run(m, view.size(), [view](TokenMatcher& self) { return self.AcceptBytes(view); });
}

bool AcceptToken(PyTokenMatcher& m, TokenId token_id) {
  const Vocab& vocab = m.compiled().vocab();
  const size_t length = vocab.Token(token_id).size();  // throws VocabError when out of range
  return Run(m, length, [token_id](TokenMatcher& self) { return self.AcceptToken(token_id); });
}

// Holds every matcher of a batch (distinct objects, none in use elsewhere) for its duration.
struct BatchUse {
  explicit BatchUse(const std::vector<PyTokenMatcher*>& matchers) {
    CheckDistinct(matchers);
    uses.reserve(matchers.size());
    for (PyTokenMatcher* m : matchers) {
      uses.emplace_back(*m);
      cores.push_back(m);
    }
  }
  static void CheckDistinct(const std::vector<PyTokenMatcher*>& matchers);
  std::vector<Use> uses;
  std::vector<TokenMatcher*> cores;
};

void BatchUse::CheckDistinct(const std::vector<PyTokenMatcher*>& matchers) {
  for (size_t i = 0; i < matchers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (matchers[i] == matchers[j]) {
        throw py::value_error("matchers " + std::to_string(j) + " and " + std::to_string(i) +
                              " are the same object (fork() one)");
      }
    }
  }
}

void FillMasksBatch(const std::vector<PyTokenMatcher*>& matchers, py::array& bitmask) {
  if (bitmask.ndim() != 2) throw py::value_error("fill_masks needs a 2-D bitmask");
  if (static_cast<size_t>(bitmask.shape(0)) < matchers.size()) {
    throw py::value_error("bitmask has " + std::to_string(bitmask.shape(0)) + " rows for " +
                          std::to_string(matchers.size()) + " matchers");
  }
  Row row = BitmaskRow(bitmask, 0);
  if (bitmask.strides(0) % 4 != 0) throw py::value_error("bitmask rows must be word-aligned");
  const size_t stride = static_cast<size_t>(bitmask.strides(0) / 4);
  BatchUse batch(matchers);
  py::gil_scoped_release release;
  FillMasks(batch.cores, row.words, stride, row.num_words);
}

std::vector<bool> AcceptTokensBatch(const std::vector<PyTokenMatcher*>& matchers,
                                    const std::vector<TokenId>& token_ids) {
  BatchUse batch(matchers);
  std::vector<uint8_t> accepted;
  {
    py::gil_scoped_release release;
    accepted = AcceptTokens(batch.cores, token_ids);
  }
  return std::vector<bool>(accepted.begin(), accepted.end());
}

}  // namespace

void BindMask(py::module_& m) {
  m.def("fill_masks", &FillMasksBatch, py::arg("matchers"), py::arg("bitmask"));
  m.def("accept_tokens", &AcceptTokensBatch, py::arg("matchers"), py::arg("token_ids"));
  py::class_<CompiledGrammar, std::shared_ptr<CompiledGrammar>>(m, "CompiledGrammar")
      .def_static("compile", &Compile, py::arg("automaton"), py::arg("vocab"),
                  py::arg("max_state_size"), py::arg("max_rollback"),
                  py::arg("max_history_bytes"))
      .def_property_readonly("vocab_size",
                             [](const CompiledGrammar& c) { return c.vocab().size(); })
      .def_property_readonly("cache_bytes", &CompiledGrammar::CacheBytes)
      .def_property_readonly("cached_states", &CompiledGrammar::CachedStates)
      .def("state_mask_sizes",
           [](const CompiledGrammar& c, StateId s) {
             if (s >= c.automaton().num_states()) throw py::value_error("state out of range");
             const detail::StateMask* m = nullptr;
             {
               py::gil_scoped_release release;  // the first use fills the entry (milliseconds)
               m = &c.mask_cache().StateMaskOf(s);
             }
             return py::make_tuple(m->accepted.size(), m->dependent.size());
           })
      .def_property_readonly("num_states",
                             [](const CompiledGrammar& c) { return c.automaton().num_states(); });

  py::class_<PyTokenMatcher>(m, "TokenMatcher")
      .def(py::init([](std::shared_ptr<CompiledGrammar> c) {
             return PyTokenMatcher::Wrap(TokenMatcher(std::move(c)));
           }),
           py::arg("compiled"))
      .def("accept_token", &AcceptToken, py::arg("token_id"))
      .def("accept_bytes", &AcceptBytes, py::arg("data"))
      .def("can_terminate",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& m) { return m.CanTerminate(); });
           })
      .def("is_terminated",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& m) { return m.IsTerminated(); });
           })
      .def("rollback",
           [](PyTokenMatcher& self, size_t n) {
             Run(self, 1, [n](TokenMatcher& m) { m.Rollback(n); });
           },
           py::arg("n"))
      .def_property_readonly("rollback_available",
                             [](PyTokenMatcher& self) {
                               return Run(self, 0, [](TokenMatcher& m) {
                                 return m.RollbackAvailable();
                               });
                             })
      .def("fork",
           [](PyTokenMatcher& self) {
             return PyTokenMatcher::Wrap(
                 Run(self, kReleaseGilWork, [](TokenMatcher& m) { return m.Fork(); }));
           })
      .def("reset", [](PyTokenMatcher& self) { Run(self, 0, [](TokenMatcher& m) { m.Reset(); }); })
      .def("forced_bytes",
           [](PyTokenMatcher& self) {
             return py::bytes(
                 Run(self, kReleaseGilWork, [](TokenMatcher& m) { return m.ForcedBytes(); }));
           })
      .def("fill_mask",
           [](PyTokenMatcher& self, py::array& bitmask, int64_t index) {
             FillMask(self, bitmask, index, false);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("fill_mask_reference",
           [](PyTokenMatcher& self, py::array& bitmask, int64_t index) {
             FillMask(self, bitmask, index, true);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("allowed_tokens", &AllowedTokens)
      .def("item_states",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& m) { return m.ItemStates(); });
           })
      .def_property_readonly("mask_words", &TokenMatcher::MaskWords)
      .def_property_readonly("state_size", [](PyTokenMatcher& self) {
        return Run(self, 0, [](TokenMatcher& m) { return m.byte_matcher().StateSize(); });
      });
}

}  // namespace gbnf::bindings
