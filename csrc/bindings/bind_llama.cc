// Python bindings of the native llama.cpp sampler hook: the addresses of the hook functions
// (Python builds llama.cpp's function table from them) and access to a live sampler's context.
#include <cstdint>
#include <string>

#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/exclusive.h"
#include "gbnf_sampler/token_matcher.h"
#include "llama/sampler_hook.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

template <typename F>
uintptr_t FunctionAddress(F* f) {
  return reinterpret_cast<uintptr_t>(f);
}

llama::SamplerContext* ContextAt(uintptr_t address) {
  if (address == 0) throw py::value_error("null sampler context");
  return reinterpret_cast<llama::SamplerContext*>(address);
}

}  // namespace

void BindLlama(py::module_& m) {
  m.def("llama_hook_functions", [] {
    py::dict out;
    out["name"] = FunctionAddress(&llama::HookName);
    out["accept"] = FunctionAddress(&llama::HookAccept);
    out["apply"] = FunctionAddress(&llama::HookApply);
    out["reset"] = FunctionAddress(&llama::HookReset);
    out["clone"] = FunctionAddress(&llama::HookClone);
    out["free"] = FunctionAddress(&llama::HookFree);
    return out;
  });
  // Creates a sampler context holding a fork of `matcher`; llama_sampler_init takes ownership
  // (HookFree releases it). Returns its address.
  m.def("_unsafe_new_sampler_context",
        [](Exclusive<TokenMatcher>& matcher, uintptr_t init_address, uintptr_t iface_address) {
          if (init_address == 0 || iface_address == 0) {
            throw py::value_error("llama_sampler_init and the function table must be non-null");
          }
          auto init = reinterpret_cast<llama::SamplerInitFn>(init_address);
          TokenMatcher fork = [&] {
            ExclusiveUse<TokenMatcher> use(matcher);
            return matcher.Fork();
          }();
          auto* ctx = llama::CreateContext(std::move(fork), init,
                                           reinterpret_cast<const void*>(iface_address));
          return reinterpret_cast<uintptr_t>(ctx);
        });
  // Raw-pointer entry points: the address must be a live context created by this module.
  m.def("_unsafe_sampler_error",
        [](uintptr_t ctx) { return ContextAt(ctx)->error; });
  m.def("_unsafe_sampler_accepted",
        [](uintptr_t ctx) { return ContextAt(ctx)->accepted; });
  m.def("_unsafe_sampler_forced_bytes",
        [](uintptr_t ctx) { return py::bytes(ContextAt(ctx)->matcher.ForcedBytes()); });
  m.def("_unsafe_sampler_acceptable_prefix", [](uintptr_t ctx, const std::vector<int32_t>& t) {
    llama::SamplerContext* context = ContextAt(ctx);
    py::gil_scoped_release release;  // accepts up to t.size() tokens on a copy of the state
    return llama::AcceptablePrefix(*context, t.data(), t.size());
  });
  m.def("_unsafe_sampler_is_terminated",
        [](uintptr_t ctx) { return ContextAt(ctx)->matcher.IsTerminated(); });
  m.def("_unsafe_destroy_sampler_context",
        [](uintptr_t ctx) { llama::DestroyContext(ContextAt(ctx)); });
}

}  // namespace gbnf::bindings
