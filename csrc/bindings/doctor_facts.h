// The doctor's analyses of a grammar (csrc/grammar/doctor_facts.h, shortest_derivation.h,
// choice_survey.h) for Python (python/gbnf_sampler/doctor/facts.py): made once per diagnosed
// grammar, so that its reference graph is walked once for all of them.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "gbnf_sampler/grammar.h"
#include "grammar/doctor_facts.h"

namespace gbnf::bindings {

class DoctorAnalysis {
 public:
  explicit DoctorAnalysis(std::shared_ptr<const Grammar> grammar);

  // A dict: "names" (the rules, in rule order), "graph" (name -> the names it references),
  // "components" (lists of names), "component_of" (name -> its component's index), and the sets
  // "recursive", "nullable", "reachable", "invisible", "tokens" (rules whose own body holds a
  // token reference), and "growth_candidates" (the components ambiguous_growth measures, the
  // same list objects as in "components").
  pybind11::dict Facts() const;

  // Rule name -> (length, height) of its shortest derivation, for the rules `roots` reach that
  // have one: the doctor's sample.shortest.
  pybind11::dict ShortestDerivations(const std::vector<std::string>& roots) const;

  // (rule name, ordinal, {alternative: first equal earlier alternative}) for each choice
  // SurveyChoices finds work in: the doctor's shadow.py.
  pybind11::list ChoiceSurvey() const;

 private:
  std::shared_ptr<const Grammar> grammar_;
  detail::DoctorFacts facts_;
  std::vector<pybind11::str> names_;  // one str per rule, shared by every container
};

}  // namespace gbnf::bindings
