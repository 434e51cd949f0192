// Python bindings of the bitmask kernels.
#include "bindings/bindings.h"

namespace gbnf::bindings {

void BindKernels(pybind11::module_& /*m*/) {}

}  // namespace gbnf::bindings
