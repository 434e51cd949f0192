// Python bindings of the matcher (filled in by the Matcher issue).
#include "bindings/bindings.h"

namespace gbnf::bindings {

void BindMatcher(pybind11::module_& /*m*/) {}

}  // namespace gbnf::bindings
