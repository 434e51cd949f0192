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

  // A dict: "names" (the rules, in rule order), the sets "recursive", "nullable", "reachable",
  // "invisible", "tokens" (rules whose own body holds a token reference), and
  // "growth_candidates" (the components ambiguous_growth measures, as lists of names).
  pybind11::dict Facts() const;
  // Name -> the names it references (few checks need it: made on request).
  pybind11::dict Graph() const;
  // (components as lists of names, name -> its component's index).
  pybind11::tuple Components() const;
  // The names of the rules `root` reaches (itself included).
  pybind11::set ReachedFrom(const std::string& root) const;

  // Rule name -> (length, height) of its shortest derivation, for the rules `roots` reach that
  // have one: the doctor's sample.shortest.
  pybind11::dict ShortestDerivations(const std::vector<std::string>& roots) const;

  // (rule name, ordinal, {alternative: first equal earlier alternative}) for each choice
  // SurveyChoices finds work in: the doctor's shadow.py.
  pybind11::list ChoiceSurvey() const;

 private:
  // Marks `roots` and the rules they reach (KeyError for an unknown root).
  void MarkReached(const std::vector<std::string>& roots, std::vector<uint8_t>* seen) const;

  std::shared_ptr<const Grammar> grammar_;
  detail::DoctorFacts facts_;
  std::vector<pybind11::str> names_;  // one str per rule, shared by every container
};

}  // namespace gbnf::bindings
