// Python bindings of the vocabulary and token trie.
#include "bindings/bindings.h"

namespace gbnf::bindings {

void BindVocab(pybind11::module_& /*m*/) {}

}  // namespace gbnf::bindings
