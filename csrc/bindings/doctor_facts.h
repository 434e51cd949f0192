// The doctor's rule facts (csrc/grammar/doctor_facts.h) as the Python containers its Facts class
// holds (python/gbnf_sampler/doctor/facts.py), keyed by rule name.
#pragma once

#include <pybind11/pybind11.h>

#include "gbnf_sampler/grammar.h"

namespace gbnf::bindings {

// A dict: "names" (the rules, in rule order), "graph" (name -> the names it references),
// "components" (lists of names), "component_of" (name -> its component's index), and the sets
// "recursive", "nullable", "reachable", "invisible", "tokens" (rules whose own body holds a
// token reference).
pybind11::dict DoctorFactsOf(const Grammar& g);

// Rule name -> (length, height) of its shortest derivation (csrc/grammar/shortest_derivation.h),
// for the rules that have one: the doctor's sample.shortest.
pybind11::dict ShortestDerivationsOf(const Grammar& g);

// (rule name, ordinal, {alternative: first equal earlier alternative}) for each choice
// SurveyChoices (csrc/grammar/choice_survey.h) finds work in: the doctor's shadow.py.
pybind11::list ChoiceSurveyOf(const Grammar& g);

}  // namespace gbnf::bindings
