#include "bindings/doctor_facts.h"

#include <utility>
#include <vector>

#include "grammar/choice_survey.h"
#include "grammar/shortest_derivation.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

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

DoctorAnalysis::DoctorAnalysis(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  {
    py::gil_scoped_release release;
    facts_ = detail::AnalyzeForDoctor(*grammar_);
  }
  names_.reserve(grammar_->rules().size());
  for (const Rule& rule : grammar_->rules()) names_.emplace_back(rule.name);
}

py::dict DoctorAnalysis::Facts() const {
  py::dict out;
  py::list all(names_.size());
  for (size_t r = 0; r < names_.size(); ++r) {
    PyList_SET_ITEM(all.ptr(), r, names_[r].inc_ref().ptr());
  }
  out["names"] = all;
  out["recursive"] = NamesSet(names_, facts_.recursive);
  out["nullable"] = NamesSet(names_, facts_.nullable);
  out["reachable"] = NamesSet(names_, facts_.reachable);
  out["invisible"] = NamesSet(names_, facts_.invisible);
  out["tokens"] = NamesSet(names_, facts_.tokens);
  py::list candidates;
  for (uint32_t c : facts_.growth_candidates) {
    const std::vector<RuleId>& members = facts_.components[c];
    candidates.append(NamesList(names_, members.data(), members.data() + members.size()));
  }
  out["growth_candidates"] = candidates;
  return out;
}

py::dict DoctorAnalysis::Graph() const { return EdgesDict(names_, facts_.references); }

py::tuple DoctorAnalysis::Components() const {
  py::list components(facts_.components.size());
  py::dict component_of;
  for (size_t c = 0; c < facts_.components.size(); ++c) {
    const std::vector<RuleId>& members = facts_.components[c];
    py::int_ index(c);
    for (RuleId m : members) component_of[names_[m]] = index;
    PyList_SET_ITEM(components.ptr(), c,
                    NamesList(names_, members.data(), members.data() + members.size())
                        .release()
                        .ptr());
  }
  return py::make_tuple(components, component_of);
}

py::set DoctorAnalysis::ReachedFrom(const std::string& root) const {
  std::vector<uint8_t> seen(names_.size(), 0);
  MarkReached({root}, &seen);
  return NamesSet(names_, seen);
}

void DoctorAnalysis::MarkReached(const std::vector<std::string>& roots,
                                 std::vector<uint8_t>* seen) const {
  for (const std::string& root : roots) {
    const int64_t r = grammar_->FindRule(root);
    if (r < 0) throw py::key_error("no rule named '" + root + "'");
    (*seen)[r] = 1;
  }
  detail::SpreadMarks(facts_.references, seen);
}

py::dict DoctorAnalysis::ShortestDerivations(const std::vector<std::string>& roots) const {
  std::vector<uint8_t> wanted(names_.size(), 0);
  MarkReached(roots, &wanted);
  std::vector<detail::Derivation> table;
  {
    py::gil_scoped_release release;
    table = detail::ShortestDerivations(*grammar_, facts_.references, facts_.users, &wanted);
  }
  py::dict out;
  for (size_t r = 0; r < table.size(); ++r) {
    if (table[r].length >= detail::kNoDerivation) continue;
    out[names_[r]] = py::make_tuple(table[r].length, table[r].height);
  }
  return out;
}

py::list DoctorAnalysis::ChoiceSurvey() const {
  std::vector<detail::ChoiceSurvey> surveys;
  {
    py::gil_scoped_release release;
    surveys = detail::SurveyChoices(*grammar_);
  }
  py::list out;
  for (const detail::ChoiceSurvey& survey : surveys) {
    py::dict duplicates;
    for (const auto& [later, first] : survey.duplicates) duplicates[py::int_(later)] = first;
    out.append(py::make_tuple(names_[survey.rule], survey.ordinal, duplicates));
  }
  return out;
}

}  // namespace gbnf::bindings
