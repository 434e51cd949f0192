// Python bindings of the compiled grammar and the token-level matcher. Ergonomics (argument
// checks, defaults, the compile cache) live in python/gbnf_sampler/compiled.py and matcher.py.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "gbnf_sampler/batch.h"
#include "gbnf_sampler/compiled_grammar.h"
#include "gbnf_sampler/token_matcher.h"
#include "mask/state_mask.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

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
                                         uint32_t max_rollback) {
  MatcherLimits limits;
  limits.max_state_size = max_state_size;
  limits.max_rollback = max_rollback;
  py::gil_scoped_release release;
  return std::const_pointer_cast<CompiledGrammar>(
      CompiledGrammar::Compile(std::move(automaton), std::move(vocab), limits));
}

void FillMask(TokenMatcher& m, py::array& bitmask, int64_t index, bool reference) {
  Row row = BitmaskRow(bitmask, index);
  py::gil_scoped_release release;
  if (reference) {
    m.FillMaskReference(row.words, row.num_words);
  } else {
    m.FillMask(row.words, row.num_words);
  }
}

py::array_t<int32_t> AllowedTokens(TokenMatcher& m) {
  std::vector<TokenId> ids;
  {
    py::gil_scoped_release release;
    ids = m.AllowedTokens();
  }
  py::array_t<int32_t> out(static_cast<py::ssize_t>(ids.size()));
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

bool AcceptBytes(TokenMatcher& m, const py::bytes& data) {
  char* ptr = nullptr;
  Py_ssize_t len = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &ptr, &len) != 0) throw py::error_already_set();
  return m.AcceptBytes(std::string_view(ptr, static_cast<size_t>(len)));
}

void CheckDistinct(const std::vector<TokenMatcher*>& matchers) {
  for (size_t i = 0; i < matchers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (matchers[i] == matchers[j]) {
        throw py::value_error("matchers " + std::to_string(j) + " and " + std::to_string(i) +
                              " are the same object (fork() one)");
      }
    }
  }
}

void FillMasksBatch(const std::vector<TokenMatcher*>& matchers, py::array& bitmask) {
  if (bitmask.ndim() != 2) throw py::value_error("fill_masks needs a 2-D bitmask");
  if (static_cast<size_t>(bitmask.shape(0)) < matchers.size()) {
    throw py::value_error("bitmask has " + std::to_string(bitmask.shape(0)) + " rows for " +
                          std::to_string(matchers.size()) + " matchers");
  }
  CheckDistinct(matchers);
  Row row = BitmaskRow(bitmask, 0);
  if (bitmask.strides(0) % 4 != 0) throw py::value_error("bitmask rows must be word-aligned");
  const size_t stride = static_cast<size_t>(bitmask.strides(0) / 4);
  py::gil_scoped_release release;
  FillMasks(matchers, row.words, stride, row.num_words);
}

std::vector<bool> AcceptTokensBatch(const std::vector<TokenMatcher*>& matchers,
                                    const std::vector<TokenId>& token_ids) {
  CheckDistinct(matchers);
  std::vector<uint8_t> accepted;
  {
    py::gil_scoped_release release;
    accepted = AcceptTokens(matchers, token_ids);
  }
  return std::vector<bool>(accepted.begin(), accepted.end());
}

}  // namespace

void BindMask(py::module_& m) {
  m.def("fill_masks", &FillMasksBatch, py::arg("matchers"), py::arg("bitmask"));
  m.def("accept_tokens", &AcceptTokensBatch, py::arg("matchers"), py::arg("token_ids"));
  py::class_<CompiledGrammar, std::shared_ptr<CompiledGrammar>>(m, "CompiledGrammar")
      .def_static("compile", &Compile, py::arg("automaton"), py::arg("vocab"),
                  py::arg("max_state_size"), py::arg("max_rollback"))
      .def_property_readonly("vocab_size",
                             [](const CompiledGrammar& c) { return c.vocab().size(); })
      .def_property_readonly("cache_bytes", &CompiledGrammar::CacheBytes)
      .def_property_readonly("cached_states", &CompiledGrammar::CachedStates)
      .def("state_mask_sizes",
           [](const CompiledGrammar& c, StateId s) {
             if (s >= c.automaton().num_states()) throw py::value_error("state out of range");
             const detail::StateMask& m = c.StateMaskOf(s);
             return py::make_tuple(m.accepted.size(), m.dependent.size());
           })
      .def_property_readonly("num_states",
                             [](const CompiledGrammar& c) { return c.automaton().num_states(); });

  py::class_<TokenMatcher>(m, "TokenMatcher")
      .def(py::init([](std::shared_ptr<CompiledGrammar> c) {
             return std::make_unique<TokenMatcher>(std::move(c));
           }),
           py::arg("compiled"))
      .def("accept_token", &TokenMatcher::AcceptToken, py::arg("token_id"))
      .def("accept_bytes", &AcceptBytes, py::arg("data"))
      .def("can_terminate", &TokenMatcher::CanTerminate)
      .def("is_terminated", &TokenMatcher::IsTerminated)
      .def("rollback", &TokenMatcher::Rollback, py::arg("n"))
      .def_property_readonly("rollback_available", &TokenMatcher::RollbackAvailable)
      .def("fork", &TokenMatcher::Fork)
      .def("reset", &TokenMatcher::Reset)
      .def("forced_bytes", [](TokenMatcher& self) { return py::bytes(self.ForcedBytes()); })
      .def("fill_mask",
           [](TokenMatcher& self, py::array& bitmask, int64_t index) {
             FillMask(self, bitmask, index, false);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("fill_mask_reference",
           [](TokenMatcher& self, py::array& bitmask, int64_t index) {
             FillMask(self, bitmask, index, true);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("allowed_tokens", &AllowedTokens)
      .def("item_states", &TokenMatcher::ItemStates)
      .def_property_readonly("mask_words", &TokenMatcher::MaskWords)
      .def_property_readonly("state_size",
                             [](const TokenMatcher& self) {
                               return self.byte_matcher().StateSize();
                             });
}

}  // namespace gbnf::bindings
