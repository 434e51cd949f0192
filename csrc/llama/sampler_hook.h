// A llama.cpp `llama_sampler` whose apply and accept run here, in C++, with no Python per token.
//
// We do not link against libllama. The few C structs of llama.h that a sampler touches are
// declared below (they have been stable across llama.cpp versions); the function table
// (`llama_sampler_i`, whose layout changes between versions) is built in Python from
// llama-cpp-python's own ctypes types, pointing at the plain functions exported here. The
// sampler is created with llama.cpp's `llama_sampler_init`, whose address Python passes in so
// that clone() can create copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" {
struct llama_token_data {
  int32_t id;
  float logit;
  float p;
};
struct llama_token_data_array {
  llama_token_data* data;
  size_t size;
  int64_t selected;
  bool sorted;
};
struct llama_sampler {
  const void* iface;
  void* ctx;
};
}

namespace gbnf::llama {

// What the hook needs from a token-level matcher; the mask engine provides the implementation.
class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Fills `words` (xgrammar layout, WordCount() int32 words) with the allowed tokens.
  virtual void FillMask(int32_t* words) = 0;
  virtual size_t WordCount() const = 0;
  virtual bool AcceptToken(int32_t token) = 0;
  virtual void Reset() = 0;
  virtual std::unique_ptr<TokenConstraint> Clone() const = 0;
  virtual std::string ForcedBytes() = 0;
  // How many leading tokens would be accepted in order from the current state (unchanged).
  virtual size_t AcceptablePrefix(const int32_t* tokens, size_t count) = 0;
  virtual bool IsTerminated() const = 0;
};

using SamplerInitFn = llama_sampler* (*)(const void* iface, void* ctx);

// The sampler's ctx. Owned by the llama_sampler once created: freed by HookFree.
struct SamplerContext {
  std::unique_ptr<TokenConstraint> constraint;
  std::vector<int32_t> words;  // the mask, reused every step
  SamplerInitFn init = nullptr;
  const void* iface = nullptr;
  std::string error;  // set when the constraint failed; the generation loop reports it
  int64_t accepted = 0;
};

// Creates a context; the caller hands it to llama_sampler_init (or frees it with
// DestroyContext if that never happens).
SamplerContext* CreateContext(std::unique_ptr<TokenConstraint> constraint, SamplerInitFn init,
                              const void* iface);
void DestroyContext(SamplerContext* ctx);

extern "C" {
const char* HookName(const llama_sampler* smpl);
void HookAccept(llama_sampler* smpl, int32_t token);
void HookApply(llama_sampler* smpl, llama_token_data_array* candidates);
void HookReset(llama_sampler* smpl);
llama_sampler* HookClone(const llama_sampler* smpl);
void HookFree(llama_sampler* smpl);
}

}  // namespace gbnf::llama
