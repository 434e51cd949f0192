// The _core extension module: registration and exception translation only.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "bindings/shims.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "gbnf-sampler C++ core";
  gbnf::bindings::RegisterExceptionTranslators();
  gbnf::bindings::BindGrammar(m);
  gbnf::bindings::BindMatcher(m);
  gbnf::bindings::BindVocab(m);
  gbnf::bindings::BindKernels(m);
  gbnf::bindings::BindMask(m);
  gbnf::bindings::BindLlama(m);
}
