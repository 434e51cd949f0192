// placeholder
#include "bindings/bindings.h"
namespace gbnf::bindings {
void BindGrammar(pybind11::module_& /*m*/) {}
}  // namespace gbnf::bindings
