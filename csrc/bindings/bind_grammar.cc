// Python bindings of the grammar front end.
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings/bindings.h"
#include "bindings/doctor_facts.h"
#include "bindings/shims.h"
#include "bindings/source_layout.h"

namespace py = pybind11;

namespace gbnf::bindings {

void BindGrammar(py::module_& m) {
  py::class_<GrammarLimits>(m, "GrammarLimits")
      .def(py::init<>())
      .def_readwrite("max_text_bytes", &GrammarLimits::max_text_bytes)
      .def_readwrite("max_rules", &GrammarLimits::max_rules)
      .def_readwrite("max_nesting_depth", &GrammarLimits::max_nesting_depth)
      .def_readwrite("max_repetition_bound", &GrammarLimits::max_repetition_bound)
      .def_readwrite("max_nodes", &GrammarLimits::max_nodes);

  py::class_<Grammar, std::shared_ptr<Grammar>>(m, "Grammar")
      .def_property_readonly("root_name",
                             [](const Grammar& g) { return g.rule(g.root()).name; })
      .def("rules_ast", &RulesAst)
      .def("rules_nodes", &RulesNodes)
      .def("rule_node", &RuleNode, py::arg("name"), py::arg("classes"))
      .def("rule_names",
           [](const Grammar& g) {
             py::list names;
             for (const Rule& rule : g.rules()) names.append(py::str(rule.name));
             return names;
           })
      .def("source_layout", &SourceLayoutOf)
      .def("source", [](const Grammar& g) { return py::bytes(g.source()); })
      .def("warnings", [](const Grammar& g) { return DiagnosticsToList(g.warnings()); })
      .def("distinct_item_rules",
           [](const Grammar& g) {
             py::list names;
             const std::vector<uint8_t>& marked = g.DistinctItemRules();
             for (size_t r = 0; r < marked.size(); ++r) {
               if (marked[r] != 0) names.append(g.rule(static_cast<RuleId>(r)).name);
             }
             return names;
           })
      // Immutable: printing and comparing run without the GIL (milliseconds on large grammars).
      .def("to_gbnf", &PrintGrammar, py::call_guard<py::gil_scoped_release>())
      .def("same_as", &Grammar::SameAs, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("rule_count", [](const Grammar& g) { return g.rules().size(); })
      .def_property_readonly("node_count", [](const Grammar& g) { return g.nodes().size(); });

  m.def(
      "parse_grammar",
      [](const py::bytes& text, const std::string& root, const GrammarLimits& limits) {
        std::string source = text;
        py::gil_scoped_release release;
        return std::make_shared<Grammar>(ParseGrammar(source, root, limits));
      },
      py::arg("text"), py::arg("root") = "root", py::arg("limits") = GrammarLimits());

  py::class_<DoctorAnalysis>(m, "DoctorAnalysis")
      .def(py::init<std::shared_ptr<const Grammar>>(), py::arg("grammar"))
      .def("facts", &DoctorAnalysis::Facts)
      .def("graph", &DoctorAnalysis::Graph)
      .def("components", &DoctorAnalysis::Components)
      .def("reached_from", &DoctorAnalysis::ReachedFrom, py::arg("root"))
      .def("shortest_derivations", &DoctorAnalysis::ShortestDerivations, py::arg("roots"))
      .def("choice_survey", &DoctorAnalysis::ChoiceSurvey)
      .def("measure_growth", &DoctorAnalysis::MeasureGrowth, py::arg("automaton"),
           py::arg("root"), py::arg("cycle"), py::arg("settings"), py::arg("seed") = 0)
      .def("sample_sentences", &DoctorAnalysis::SampleSentences, py::arg("root"),
           py::arg("targets"), py::arg("cycle"), py::arg("wind_down"), py::arg("seed") = 0);
}

}  // namespace gbnf::bindings
