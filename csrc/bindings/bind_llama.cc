// Python bindings of the native llama.cpp sampler hook: the addresses of the hook functions
// (Python builds llama.cpp's function table from them) and access to a live sampler's context.
// The address conversions live in shims.cc.
#include <cstdint>
#include <memory>
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
  m.def("_unsafe_sampler_allowed_count", [](uintptr_t ctx) {
    llama::SamplerContext& context = SamplerContextAt(ctx);
    py::gil_scoped_release release;  // may fill the mask of a state met for the first time
    return llama::AllowedCount(&context);
  });
  // The acceptable prefix of a jump-forward draft, as one flag per token: true where the token
  // is the only one the grammar allows at its position.
  m.def("_unsafe_sampler_plan_draft", [](uintptr_t ctx, const std::vector<int32_t>& t) {
    const llama::SamplerContext& context = SamplerContextAt(ctx);
    std::unique_ptr<bool[]> only(new bool[t.size()]());
    size_t n = 0;
    {
      py::gil_scoped_release release;  // fills a mask per token on a copy of the state
      n = llama::PlanDraft(context, t.data(), t.size(), only.get());
    }
    return std::vector<bool>(only.get(), only.get() + n);
  });
  // llama::Sample: (get_logits_ith, sampler_apply, sampler_accept) addresses, a llama_context,
  // the row, the chain (whose first sampler is this context's). Returns -1 on failure (error).
  m.def("_unsafe_sampler_sample", [](uintptr_t ctx, uintptr_t get_logits_ith, uintptr_t apply,
                                     uintptr_t accept, uintptr_t llama_context, int32_t row,
                                     uintptr_t chain) {
    llama::LlamaSampleApi api;
    api.get_logits_ith = reinterpret_cast<decltype(api.get_logits_ith)>(get_logits_ith);
    api.apply = reinterpret_cast<decltype(api.apply)>(apply);
    api.accept = reinterpret_cast<decltype(api.accept)>(accept);
    if (api.get_logits_ith == nullptr || api.apply == nullptr || api.accept == nullptr ||
        llama_context == 0 || chain == 0) {
      throw py::value_error("null llama.cpp function, context or chain");
    }
    return llama::Sample(&SamplerContextAt(ctx), api, reinterpret_cast<void*>(llama_context), row,
                         reinterpret_cast<llama_sampler*>(chain));
  });
  m.def("_unsafe_sampler_is_terminated",
        [](uintptr_t ctx) { return SamplerContextAt(ctx).matcher.IsTerminated(); });
  m.def("_unsafe_destroy_sampler_context",
        [](uintptr_t ctx) { llama::DestroyContext(&SamplerContextAt(ctx)); });
}

}  // namespace gbnf::bindings
