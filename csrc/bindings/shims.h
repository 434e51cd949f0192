// Conversions between core types and Python objects, used by the binding files.
#pragma once

#include <pybind11/pybind11.h>

#include "gbnf_sampler/error.h"
#include "gbnf_sampler/grammar.h"

namespace gbnf::bindings {

pybind11::dict DiagnosticToDict(const Diagnostic& d);
pybind11::list DiagnosticsToList(const std::vector<Diagnostic>& diagnostics);
// A rule body as nested tuples: ("seq", [..]), ("alt", [..]), ("lit", [cp..]),
// ("class", [(lo, hi)..], negated), ("any",), ("ref", name), ("token", id|None, text|None,
// negated), ("repeat", child, min, max|None).
pybind11::tuple NodeToTuple(const Grammar& g, NodeId id);
// Installs the translation of core exceptions into gbnf_sampler's Python exceptions.
void RegisterExceptionTranslators();

}  // namespace gbnf::bindings
