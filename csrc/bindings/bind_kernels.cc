// Python bindings of the bitmask kernels. The numpy checks live in arrays.cc.
#include "bindings/arrays.h"
#include "bindings/bindings.h"

namespace py = pybind11;

namespace gbnf::bindings {

void BindKernels(py::module_& m) {
  m.def("bitmask_words", &CheckedBitmaskWords, py::arg("vocab_size"));
  m.def("apply_bitmask", &ApplyBitmaskNumpy, py::arg("logits"), py::arg("bitmask"), py::kw_only(),
        py::arg("indices") = py::none(), py::arg("vocab_size") = py::none(),
        "Sets disallowed logits to -inf in place (numpy float32/float16/bfloat16).");
  m.def("_unsafe_apply_bitmask", &UnsafeApplyBitmask, py::arg("logits_ptr"), py::arg("dtype"),
        py::arg("rows"), py::arg("cols"), py::arg("row_stride"), py::arg("col_stride"),
        py::arg("bitmask_ptr"), py::arg("words"), py::arg("bitmask_row_stride"),
        py::arg("vocab_size"), py::arg("indices_ptr") = 0, py::arg("num_indices") = 0);
  // Test hooks of the C++ bit helpers, on one bitmask row.
  m.def("_bitmask_test", &BitmaskRowTest);
  m.def("_bitmask_set", &BitmaskRowSet);
  m.def("_bitmask_fill", &BitmaskRowFill);
  m.def("_bitmask_count_allowed", &BitmaskRowCountAllowed);
}

}  // namespace gbnf::bindings
