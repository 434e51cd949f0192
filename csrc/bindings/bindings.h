// Registration functions of the extension module, one per area, called from module.cc.
#pragma once

#include <pybind11/pybind11.h>

namespace gbnf::bindings {

void BindGrammar(pybind11::module_& m);
void BindMatcher(pybind11::module_& m);
void BindVocab(pybind11::module_& m);
void BindKernels(pybind11::module_& m);
void BindLlama(pybind11::module_& m);

}  // namespace gbnf::bindings
