#include "bindings/doctor_facts.h"

#include <vector>

#include "grammar/doctor_facts.h"
#include "grammar/choice_survey.h"
#include "grammar/shortest_derivation.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

// One str per rule name, shared by every container (a 5 MB grammar has ~40k rules).
py::list NamesList(const std::vector<py::str>& names, const RuleId* first, const RuleId* last) {
  py::list out(static_cast<size_t>(last - first));
  for (size_t i = 0; first != last; ++first, ++i) {
    PyList_SET_ITEM(out.ptr(), i, names[*first].inc_ref().ptr());
  }
  return out;
}

py::set NamesSet(const std::vector<py::str>& names, const std::vector<uint8_t>& marked) {
  py::set out;
  for (size_t r = 0; r < marked.size(); ++r) {
    if (marked[r] != 0) out.add(names[r]);
  }
  return out;
}

py::dict EdgesDict(const std::vector<py::str>& names, const detail::RuleEdges& edges) {
  py::dict out;
  for (RuleId r = 0; r < edges.rules(); ++r) {
    out[names[r]] = NamesList(names, edges.first(r), edges.last(r));
  }
  return out;
}

}  // namespace

py::dict DoctorFactsOf(const Grammar& g) {
  detail::DoctorFacts facts;
  {
    py::gil_scoped_release release;
    facts = detail::AnalyzeForDoctor(g);
  }
  std::vector<py::str> names;
  names.reserve(g.rules().size());
  for (const Rule& rule : g.rules()) names.emplace_back(rule.name);
  py::dict out;
  py::list all(names.size());
  for (size_t r = 0; r < names.size(); ++r) {
    PyList_SET_ITEM(all.ptr(), r, names[r].inc_ref().ptr());
  }
  out["names"] = all;
  out["graph"] = EdgesDict(names, facts.references);
  py::list components(facts.components.size());
  py::dict component_of;
  for (size_t c = 0; c < facts.components.size(); ++c) {
    const std::vector<RuleId>& members = facts.components[c];
    py::int_ index(c);
    for (RuleId m : members) component_of[names[m]] = index;
    PyList_SET_ITEM(components.ptr(), c,
                    NamesList(names, members.data(), members.data() + members.size())
                        .release()
                        .ptr());
  }
  out["components"] = components;
  out["component_of"] = component_of;
  out["recursive"] = NamesSet(names, facts.recursive);
  out["nullable"] = NamesSet(names, facts.nullable);
  out["reachable"] = NamesSet(names, facts.reachable);
  out["invisible"] = NamesSet(names, facts.invisible);
  out["tokens"] = NamesSet(names, facts.tokens);
  return out;
}

py::dict ShortestDerivationsOf(const Grammar& g) {
  std::vector<detail::Derivation> table;
  {
    py::gil_scoped_release release;
    table = detail::ShortestDerivations(g, detail::RuleReferences(g.nodes(), g.rules()));
  }
  py::dict out;
  for (size_t r = 0; r < table.size(); ++r) {
    if (table[r].length >= detail::kNoDerivation) continue;
    out[py::str(g.rules()[r].name)] = py::make_tuple(table[r].length, table[r].height);
  }
  return out;
}

py::list ChoiceSurveyOf(const Grammar& g) {
  std::vector<detail::ChoiceSurvey> surveys;
  {
    py::gil_scoped_release release;
    surveys = detail::SurveyChoices(g);
  }
  py::list out;
  for (const detail::ChoiceSurvey& survey : surveys) {
    py::dict duplicates;
    for (const auto& [later, first] : survey.duplicates) duplicates[py::int_(later)] = first;
    out.append(py::make_tuple(g.rule(survey.rule).name, survey.ordinal, duplicates));
  }
  return out;
}

}  // namespace gbnf::bindings
