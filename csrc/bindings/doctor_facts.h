// The doctor's analyses of a grammar (csrc/grammar/doctor_facts.h, shortest_derivation.h,
// choice_survey.h) for Python (python/gbnf_sampler/doctor/facts.py): made once per diagnosed
// grammar, so that its reference graph is walked once for all of them.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/grammar.h"
#include "grammar/doctor_facts.h"
#include "grammar/shortest_derivation.h"

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

  // The doctor's growth.py `_measure` (csrc/matcher/growth_probe.h): sentences of `root` fed to
  // `automaton` (of this grammar or of a part of it holding what `root` reaches); `cycle`: the
  // names of the cycle's rules; `settings`: (lengths, samples, chunk, min_growth, ratio,
  // wind_down, state_cap, history_bytes). (sizes, fed, lengths), or None where the sampler cannot
  // follow the reference (growth.py then measures).
  pybind11::object MeasureGrowth(std::shared_ptr<const Automaton> automaton,
                                 const std::string& root, const std::vector<std::string>& cycle,
                                 const pybind11::tuple& settings, uint64_t seed) const;
  // Test support: the sentences MeasureGrowth's sampler draws for `targets` in turn (bytes), as
  // python/gbnf_sampler/doctor/sample.py's Sampler with the same seed and favour; None for a
  // rule without one, and the whole result None where the sampler cannot follow the reference.
  pybind11::object SampleSentences(const std::string& root, const std::vector<int64_t>& targets,
                                   const std::vector<std::string>& cycle, int64_t wind_down,
                                   uint64_t seed) const;

 private:
  RuleId RuleNamed(const std::string& name) const;  // KeyError for an unknown name
  std::vector<uint8_t> Members(const std::vector<std::string>& names) const;
  // The shortest derivations of `root` and the rules it reaches (computed once per rule).
  const std::vector<detail::Derivation>& Minimums(RuleId root) const;
  // Marks `roots` and the rules they reach (KeyError for an unknown root).
  void MarkReached(const std::vector<std::string>& roots, std::vector<uint8_t>* seen) const;

  std::shared_ptr<const Grammar> grammar_;
  detail::DoctorFacts facts_;
  mutable std::vector<detail::Derivation> minimums_;  // by rule, where minimums_known_ says
  mutable std::vector<uint8_t> minimums_known_;
  std::vector<pybind11::str> names_;  // one str per rule, shared by every container
};

}  // namespace gbnf::bindings
