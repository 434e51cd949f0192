// Python bindings of the automaton and the byte-level matcher. Ergonomics (argument checking,
// defaults, caching) live in python/gbnf_sampler/matcher.py.
#include <string_view>

#include "bindings/bindings.h"
#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/matcher.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

// Inputs at least this long are matched with the GIL released.
constexpr size_t kReleaseGilBytes = 4096;

std::shared_ptr<Automaton> BuildAutomaton(std::shared_ptr<Grammar> grammar,
                                          size_t max_automaton_size, uint32_t max_nesting_depth) {
  AutomatonLimits limits;
  limits.max_automaton_size = max_automaton_size;
  limits.max_nesting_depth = max_nesting_depth;
  return std::const_pointer_cast<Automaton>(Automaton::Build(std::move(grammar), limits));
}

std::unique_ptr<Matcher> NewMatcher(std::shared_ptr<Automaton> automaton, uint32_t max_state_size,
                                    uint32_t max_rollback) {
  MatcherLimits limits;
  limits.max_state_size = max_state_size;
  limits.max_rollback = max_rollback;
  return std::make_unique<Matcher>(std::move(automaton), limits);
}

bool AcceptBytes(Matcher& m, const py::bytes& data) {
  char* ptr = nullptr;
  Py_ssize_t len = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &ptr, &len) != 0) throw py::error_already_set();
  std::string_view view(ptr, static_cast<size_t>(len));
  if (view.size() < kReleaseGilBytes) return m.AcceptBytes(view);
  py::gil_scoped_release release;
  return m.AcceptBytes(view);
}

}  // namespace

void BindMatcher(py::module_& m) {
  py::class_<Automaton, std::shared_ptr<Automaton>>(m, "Automaton")
      .def_static("build", &BuildAutomaton, py::arg("grammar"), py::arg("max_automaton_size"),
                  py::arg("max_nesting_depth"))
      .def_property_readonly("num_states", &Automaton::num_states)
      .def_property_readonly("num_edges", &Automaton::num_edges);

  py::class_<Matcher>(m, "Matcher")
      .def(py::init(&NewMatcher), py::arg("automaton"), py::arg("max_state_size"),
           py::arg("max_rollback"))
      .def("accept_bytes", &AcceptBytes, py::arg("data"))
      .def("accept_eos", &Matcher::AcceptEos)
      .def("accept_token_ref", &Matcher::AcceptTokenRef, py::arg("token_id"))
      .def("can_terminate", &Matcher::CanTerminate)
      .def("is_terminated", &Matcher::IsTerminated)
      .def("rollback", &Matcher::Rollback, py::arg("n"))
      .def_property_readonly("rollback_available", &Matcher::RollbackAvailable)
      .def("fork", &Matcher::Fork)
      .def("reset", &Matcher::Reset)
      .def("forced_bytes", [](Matcher& self) { return py::bytes(self.ForcedBytes()); })
      .def_property_readonly("state_size", &Matcher::StateSize);
}

}  // namespace gbnf::bindings
