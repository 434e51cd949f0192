// The optional _cuda extension module: the CUDA bitmask kernel on raw device pointers, and the
// few CUDA runtime calls its tests need to run without torch or cupy. Pointers and streams
// travel as Python ints; the Python wrapper (gbnf_sampler.cuda) checks shapes and arguments.
#include <cuda_runtime.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "gbnf_sampler/bitmask.h"
#include "kernels/apply_bitmask_cuda.h"

namespace py = pybind11;

namespace {

void Check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(code));
  }
}

gbnf::LogitsDtype ParseDtype(const std::string& name) {
  if (name == "float32") return gbnf::LogitsDtype::kFloat32;
  if (name == "float16") return gbnf::LogitsDtype::kFloat16;
  if (name == "bfloat16") return gbnf::LogitsDtype::kBFloat16;
  throw py::type_error("dtype must be 'float32', 'float16' or 'bfloat16', got '" + name + "'");
}

void ApplyBitmask(uintptr_t logits_ptr, const std::string& dtype, int64_t rows, int64_t cols,
                  int64_t row_stride, int64_t col_stride, uintptr_t bitmask_ptr, int64_t words,
                  int64_t bitmask_row_stride, int64_t vocab_size, uintptr_t indices_ptr,
                  int64_t num_indices, uintptr_t stream) {
  const gbnf::LogitsView logits{reinterpret_cast<void*>(logits_ptr), ParseDtype(dtype), rows,
                                cols, row_stride, col_stride};
  const gbnf::BitmaskView bitmask{reinterpret_cast<const int32_t*>(bitmask_ptr), rows, words,
                                  bitmask_row_stride, 1};
  const int code = gbnf::ApplyBitmaskCuda(logits, bitmask, vocab_size,
                                          reinterpret_cast<const int64_t*>(indices_ptr),
                                          num_indices, stream);
  if (code != 0) {
    throw std::runtime_error(std::string("apply_bitmask_cuda: kernel launch failed: ") +
                             gbnf::CudaErrorString(code));
  }
}

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver / no device" error
    return 0;
  }
  return n;
}

uintptr_t Malloc(size_t nbytes) {
  void* p = nullptr;
  Check(cudaMalloc(&p, nbytes), "cudaMalloc");
  return reinterpret_cast<uintptr_t>(p);
}

void Free(uintptr_t p) { Check(cudaFree(reinterpret_cast<void*>(p)), "cudaFree"); }

// cudaMemcpyDefault: the direction follows from the pointers (unified addressing).
void Memcpy(uintptr_t dst, uintptr_t src, size_t nbytes) {
  Check(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), nbytes,
                   cudaMemcpyDefault),
        "cudaMemcpy");
}

void Synchronize() { Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // namespace

PYBIND11_MODULE(_cuda, m) {
  m.doc() = "gbnf-sampler CUDA bitmask kernel (raw device pointers)";
  m.def("apply_bitmask", &ApplyBitmask, py::arg("logits_ptr"), py::arg("dtype"), py::arg("rows"),
        py::arg("cols"), py::arg("row_stride"), py::arg("col_stride"), py::arg("bitmask_ptr"),
        py::arg("words"), py::arg("bitmask_row_stride"), py::arg("vocab_size"),
        py::arg("indices_ptr"), py::arg("num_indices"), py::arg("stream"),
        py::call_guard<py::gil_scoped_release>());
  m.def("device_count", &DeviceCount);
  m.def("_malloc", &Malloc, py::arg("nbytes"));
  m.def("_free", &Free, py::arg("ptr"));
  m.def("_memcpy", &Memcpy, py::arg("dst"), py::arg("src"), py::arg("nbytes"),
        py::call_guard<py::gil_scoped_release>());
  m.def("synchronize", &Synchronize, py::call_guard<py::gil_scoped_release>());
}
