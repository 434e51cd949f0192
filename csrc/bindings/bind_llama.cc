// Python bindings of the native llama.cpp sampler hook: the addresses of the hook functions
// (Python builds llama.cpp's function table from them) and access to a live sampler's context.
// The address conversions live in shims.cc.
#include <cstdint>
#include <vector>

#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/shims.h"
#include "llama/sampler_hook.h"

namespace py = pybind11;

namespace gbnf::bindings {

void BindLlama(py::module_& m) {
  m.def("llama_hook_functions", &LlamaHookAddresses);
  // Creates a sampler context holding a fork of `matcher`; llama_sampler_init takes ownership
  // (HookFree releases it). Returns its address.
  m.def("_unsafe_new_sampler_context", &NewSamplerContext);
  // Raw-pointer entry points: the address must be a live context created by this module.
  m.def("_unsafe_sampler_error", [](uintptr_t ctx) { return SamplerContextAt(ctx).error; });
  m.def("_unsafe_sampler_accepted", [](uintptr_t ctx) { return SamplerContextAt(ctx).accepted; });
  m.def("_unsafe_sampler_forced_bytes",
        [](uintptr_t ctx) { return py::bytes(SamplerContextAt(ctx).matcher.ForcedBytes()); });
  m.def("_unsafe_sampler_acceptable_prefix", [](uintptr_t ctx, const std::vector<int32_t>& t) {
    const llama::SamplerContext& context = SamplerContextAt(ctx);
    py::gil_scoped_release release;  // accepts up to t.size() tokens on a copy of the state
    return llama::AcceptablePrefix(context, t.data(), t.size());
  });
  m.def("_unsafe_sampler_is_terminated",
        [](uintptr_t ctx) { return SamplerContextAt(ctx).matcher.IsTerminated(); });
  m.def("_unsafe_destroy_sampler_context",
        [](uintptr_t ctx) { llama::DestroyContext(&SamplerContextAt(ctx)); });
}

}  // namespace gbnf::bindings
