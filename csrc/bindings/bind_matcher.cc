// Python bindings of the automaton and the byte-level matcher. Ergonomics (argument checking,
// defaults, caching) live in python/gbnf_sampler/matcher.py.
#include <memory>
#include <string_view>
#include <utility>

#include <pybind11/stl.h>

#include "automaton/assembler.h"
#include "automaton/nfa_builder.h"
#include "grammar/rule_facts.h"
#include "bindings/arrays.h"
#include "bindings/bindings.h"
#include "bindings/exclusive.h"
#include "bindings/shims.h"
#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/matcher.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

using PyMatcher = Exclusive<Matcher>;

// `root`: a rule to start from instead of the grammar's root (empty: the grammar's).
std::shared_ptr<Automaton> BuildAutomaton(std::shared_ptr<Grammar> grammar,
                                          size_t max_automaton_size, uint32_t max_nesting_depth,
                                          const std::string& root) {
  AutomatonLimits limits;
  limits.max_automaton_size = max_automaton_size;
  limits.max_nesting_depth = max_nesting_depth;
  RuleId start = grammar->root();
  if (!root.empty()) {
    const int64_t found = grammar->FindRule(root);
    if (found < 0) throw py::key_error("no rule named '" + root + "'");
    start = static_cast<RuleId>(found);
  }
  py::gil_scoped_release release;
  return std::const_pointer_cast<Automaton>(Automaton::Build(std::move(grammar), limits, start));
}

std::unique_ptr<PyMatcher> NewMatcher(std::shared_ptr<Automaton> automaton,
                                      uint32_t max_state_size, uint32_t max_rollback,
                                      size_t max_history_bytes, int64_t max_whitespace) {
  return PyMatcher::Wrap(
      Matcher(std::move(automaton),
              ToMatcherLimits(max_state_size, max_rollback, max_history_bytes, max_whitespace)));
}

// Test support: the per-rule facts the automaton builder starts from, by rule name.
py::dict RuleFactsByName(const std::shared_ptr<Grammar>& grammar, uint32_t max_nesting_depth) {
  const detail::RuleFacts facts = detail::AnalyzeRules(*grammar, max_nesting_depth);
  py::dict out;
  for (RuleId r = 0; r < grammar->rules().size(); ++r) {
    out[py::str(grammar->rule(r).name)] =
        py::make_tuple(facts.productive[r] != 0, facts.nullable[r] != 0, facts.inlinable[r] != 0,
                       facts.depth[r]);
  }
  return out;
}

// Test support: the facts an automaton with this nesting limit builds from, all seven per rule
// name, and whether they are the parser's (`reuse`: allowed to be).
py::tuple AutomatonFactsByName(const std::shared_ptr<Grammar>& grammar,
                               uint32_t max_nesting_depth, bool reuse) {
  bool reused = false;
  const detail::RuleFacts facts =
      reuse ? detail::AutomatonRuleFacts(*grammar, max_nesting_depth, &reused)
            : detail::AnalyzeRules(*grammar, max_nesting_depth);
  py::dict out;
  for (RuleId r = 0; r < grammar->rules().size(); ++r) {
    out[py::str(grammar->rule(r).name)] =
        py::make_tuple(facts.productive[r] != 0, facts.nullable[r] != 0, facts.inlinable[r] != 0,
                       facts.depth[r], facts.min_size[r], facts.reachable[r] != 0,
                       facts.inlined_height[r]);
  }
  return py::make_tuple(reused, out);
}

// Test support: per rule name, the facts' lower bound on its NFA's states plus edges, and the
// size of the NFA the builder makes (None past `budget`, or nested past the limit).
py::dict RuleSizesByName(const std::shared_ptr<Grammar>& grammar, uint32_t max_nesting_depth,
                         size_t budget) {
  const detail::RuleFacts facts = detail::AnalyzeRules(*grammar, max_nesting_depth);
  detail::RulePlan plan;
  plan.inlinable = facts.inlinable;
  plan.depth = facts.depth;
  AutomatonLimits limits;
  limits.max_automaton_size = budget;
  limits.max_nesting_depth = max_nesting_depth;
  py::dict out;
  for (RuleId r = 0; r < grammar->rules().size(); ++r) {
    py::object size = py::none();
    try {
      const detail::Nfa nfa = detail::BuildRuleNfa(*grammar, limits, plan, r, budget);
      size = py::int_(size_t{nfa.num_states} + nfa.num_edges());
    } catch (const LimitError&) {
    }
    out[py::str(grammar->rule(r).name)] = py::make_tuple(facts.min_size[r], size);
  }
  return out;
}

// Test support: one rule's FSM as the assembler leaves it, per state (final kind, byte edges as
// (lo, hi, target) in order, calls as (rule, target), tokens as (node, target), twin period,
// twin agreement), how many states were emitted by shifting and how many copies were kept as
// replicas (NfaReplica); `replicate`: whether long repetitions replicate a copy (NfaBuilder).
py::tuple AssembledRuleByName(const std::shared_ptr<Grammar>& grammar, const std::string& name,
                             uint32_t max_nesting_depth, bool replicate) {
  const int64_t found = grammar->FindRule(name);
  if (found < 0) throw py::key_error("no rule named '" + name + "'");
  const auto rule = static_cast<RuleId>(found);
  const detail::RuleFacts facts = detail::AutomatonRuleFacts(*grammar, max_nesting_depth);
  detail::RulePlan plan;
  plan.inlinable = facts.inlinable;
  plan.depth = facts.depth;
  plan.recursion = facts.recursion;
  AutomatonLimits limits;
  limits.max_nesting_depth = max_nesting_depth;
  const size_t budget = limits.max_automaton_size;
  const detail::Nfa nfa = detail::BuildRuleNfa(*grammar, limits, plan, rule, budget, replicate);
  AssembledRule fsm;
  AutomatonAssembler(nfa, facts.productive, limits, budget, &fsm).Run(plan.recursion, rule);
  py::list states;
  for (size_t s = 0; s < fsm.num_states(); ++s) {
    py::list bytes, calls, tokens;
    for (uint32_t k = fsm.byte_begin[s]; k < fsm.byte_begin[s + 1]; ++k) {
      bytes.append(py::make_tuple(fsm.bytes[k].lo, fsm.bytes[k].hi, fsm.bytes[k].target));
    }
    for (uint32_t k = fsm.call_begin[s]; k < fsm.call_begin[s + 1]; ++k) {
      calls.append(py::make_tuple(fsm.calls[k].rule, fsm.calls[k].target));
    }
    for (uint32_t k = fsm.token_begin[s]; k < fsm.token_begin[s + 1]; ++k) {
      tokens.append(py::make_tuple(fsm.tokens[k].node, fsm.tokens[k].target));
    }
    const bool twins = !fsm.twin_period.empty();
    states.append(py::make_tuple(fsm.final[s], bytes, calls, tokens,
                                 twins ? fsm.twin_period[s] : 0, twins ? fsm.twin_agree[s] : 0));
  }
  size_t replica_copies = 0;
  for (const detail::NfaReplica& replica : nfa.replicas) replica_copies += replica.count;
  return py::make_tuple(states, fsm.shifted_states, replica_copies);
}

bool AcceptBytes(PyMatcher& m, const py::bytes& data) {
  const std::string_view view = BytesView(data);
  return Run(m, view.size(), [view](Matcher& self) { return self.AcceptBytes(view); });
}

}  // namespace

void BindMatcher(py::module_& m) {
  py::class_<Automaton, std::shared_ptr<Automaton>>(m, "Automaton")
      .def_static("build", &BuildAutomaton, py::arg("grammar"), py::arg("max_automaton_size"),
                  py::arg("max_nesting_depth"), py::arg("root") = "")
      // Of the whole automaton: every rule the root reaches is built first.
      .def_property_readonly("num_states",
                             [](const Automaton& a) {
                               a.BuildAll();
                               return a.num_states();
                             })
      .def_property_readonly("num_edges", [](const Automaton& a) {
        a.BuildAll();
        return a.num_edges();
      });

  m.def("_rule_facts", &RuleFactsByName, py::arg("grammar"), py::arg("max_nesting_depth"));
  m.def("_automaton_facts", &AutomatonFactsByName, py::arg("grammar"),
        py::arg("max_nesting_depth"), py::arg("reuse"));
  m.def("_rule_sizes", &RuleSizesByName, py::arg("grammar"), py::arg("max_nesting_depth"),
        py::arg("budget"));
  m.def("_assembled_rule", &AssembledRuleByName, py::arg("grammar"), py::arg("rule"),
        py::arg("max_nesting_depth"), py::arg("replicate"));

  py::class_<PyMatcher>(m, "Matcher")
      .def(py::init(&NewMatcher), py::arg("automaton"), py::arg("max_state_size"),
           py::arg("max_rollback"), py::arg("max_history_bytes"), py::arg("max_whitespace") = -1)
      .def("accept_bytes", &AcceptBytes, py::arg("data"))
      .def("accept_eos",
           [](PyMatcher& self) { return Run(self, 0, [](Matcher& m) { return m.AcceptEos(); }); })
      .def("accept_token_ref",
           [](PyMatcher& self, uint32_t token_id) {
             return Run(self, 1, [token_id](Matcher& m) { return m.AcceptTokenRef(token_id); });
           },
           py::arg("token_id"))
      .def("can_terminate",
           [](PyMatcher& self) {
             return Run(self, 0, [](Matcher& m) { return m.CanTerminate(); });
           })
      .def("is_terminated",
           [](PyMatcher& self) {
             return Run(self, 0, [](Matcher& m) { return m.IsTerminated(); });
           })
      .def("rollback",
           [](PyMatcher& self, size_t n) {
             Run(self, 1, [n](Matcher& m) { m.Rollback(n); });
           },
           py::arg("n"))
      .def_property_readonly("rollback_available",
                             [](PyMatcher& self) {
                               return Run(self, 0,
                                          [](Matcher& m) { return m.RollbackAvailable(); });
                             })
      .def("fork",
           [](PyMatcher& self) {
             return PyMatcher::Wrap(
                 Run(self, kReleaseGilWork, [](Matcher& m) { return m.Fork(); }));
           })
      .def("reset", [](PyMatcher& self) { Run(self, 0, [](Matcher& m) { m.Reset(); }); })
      .def("forced_bytes",
           [](PyMatcher& self) {
             return py::bytes(
                 Run(self, kReleaseGilWork, [](Matcher& m) { return m.ForcedBytes(); }));
           })
      .def_property_readonly("whitespace_run",
                             [](PyMatcher& self) {
                               return Run(self, 0,
                                          [](Matcher& m) { return m.WhitespaceRun(); });
                             })
      .def("rule_stacks",
           [](PyMatcher& self, size_t limit) {
             return Run(self, 0, [limit](Matcher& m) { return m.RuleStacks(limit); });
           },
           py::arg("limit"))
      .def_property_readonly("state_size", [](PyMatcher& self) {
        return Run(self, 0, [](Matcher& m) { return m.StateSize(); });
      });
}

}  // namespace gbnf::bindings
