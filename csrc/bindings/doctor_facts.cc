#include "bindings/doctor_facts.h"

#include <pybind11/stl.h>

#include <utility>
#include <vector>

#include "grammar/choice_survey.h"
#include "grammar/sentence_sampler.h"
#include "grammar/shortest_derivation.h"
#include "matcher/growth_probe.h"

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
    detail::ShortestDerivations(*grammar_, facts_.components, facts_.users, wanted, &table);
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

RuleId DoctorAnalysis::RuleNamed(const std::string& name) const {
  const int64_t r = grammar_->FindRule(name);
  if (r < 0) throw py::key_error("no rule named '" + name + "'");
  return static_cast<RuleId>(r);
}

std::vector<uint8_t> DoctorAnalysis::Members(const std::vector<std::string>& names) const {
  std::vector<uint8_t> members(names_.size(), 0);
  for (const std::string& name : names) members[RuleNamed(name)] = 1;
  return members;
}

const std::vector<detail::Derivation>& DoctorAnalysis::Minimums(RuleId root) const {
  if (minimums_known_.empty()) minimums_known_.assign(names_.size(), 0);
  if (minimums_known_[root]) return minimums_;  // and every rule it reaches
  std::vector<uint8_t> wanted(names_.size(), 0);
  wanted[root] = 1;
  detail::SpreadMarks(facts_.references, &wanted);
  for (size_t r = 0; r < wanted.size(); ++r) {
    if (minimums_known_[r]) wanted[r] = 0;  // whole components: the known part is closed
  }
  detail::ShortestDerivations(*grammar_, facts_.components, facts_.users, wanted, &minimums_);
  for (size_t r = 0; r < wanted.size(); ++r) minimums_known_[r] |= wanted[r];
  return minimums_;
}

py::object DoctorAnalysis::MeasureGrowth(std::shared_ptr<const Automaton> automaton,
                                         const std::string& root,
                                         const std::vector<std::string>& cycle,
                                         const py::tuple& settings, uint64_t seed) const {
  const RuleId r = RuleNamed(root);
  std::vector<uint8_t> members = Members(cycle);
  detail::GrowthSettings s;
  s.lengths = settings[0].cast<std::vector<int64_t>>();
  s.samples = settings[1].cast<uint32_t>();
  s.chunk = settings[2].cast<uint32_t>();
  s.min_growth = settings[3].cast<int64_t>();
  s.ratio = settings[4].cast<double>();
  s.wind_down = settings[5].cast<int64_t>();
  s.state_cap = settings[6].cast<uint32_t>();
  s.history_bytes = settings[7].cast<size_t>();
  if (s.chunk == 0) throw py::value_error("chunk must be at least 1");
  const std::vector<detail::Derivation>& minimums = Minimums(r);  // with the GIL
  detail::GrowthMeasurement m;
  bool sampled = true;
  {
    py::gil_scoped_release release;
    try {
      m = detail::MeasureGrowth(std::move(automaton), *grammar_, minimums, r, std::move(members),
                                s, seed);
    } catch (const detail::UnsampledSentence&) {
      sampled = false;
    }
  }
  if (!sampled) return py::none();
  return py::make_tuple(py::tuple(py::cast(m.sizes)), py::tuple(py::cast(m.fed)),
                        py::tuple(py::cast(m.lengths)));
}

py::object DoctorAnalysis::SampleSentences(const std::string& root,
                                           const std::vector<int64_t>& targets,
                                           const std::vector<std::string>& cycle,
                                           int64_t wind_down, uint64_t seed) const {
  const RuleId r = RuleNamed(root);
  detail::SentenceSampler sampler(*grammar_, Minimums(r), seed, Members(cycle), wind_down);
  py::list out;
  std::string text;
  try {
    for (int64_t target : targets) {
      if (sampler.Sentence(r, target, &text)) {
        out.append(py::bytes(text));
      } else {
        out.append(py::none());
      }
    }
  } catch (const detail::UnsampledSentence&) {
    return py::none();
  }
  return std::move(out);
}

}  // namespace gbnf::bindings
