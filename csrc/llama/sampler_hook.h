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
#include <string>
#include <vector>

#include "gbnf_sampler/token_matcher.h"

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

using SamplerInitFn = llama_sampler* (*)(const void* iface, void* ctx);

// The sampler's ctx. Owned by the llama_sampler once created: freed by HookFree.
struct SamplerContext {
  SamplerContext(TokenMatcher m, SamplerInitFn init_fn, const void* iface_table);

  TokenMatcher matcher;
  std::vector<uint32_t> words;  // the mask (MaskWords() words), reused every step
  SamplerInitFn init = nullptr;
  const void* iface = nullptr;
  std::string error;  // set when the matcher failed; the generation loop reports it
  int64_t accepted = 0;
};

// Creates a context; the caller hands it to llama_sampler_init (or frees it with
// DestroyContext if that never happens).
SamplerContext* CreateContext(TokenMatcher matcher, SamplerInitFn init, const void* iface);
void DestroyContext(SamplerContext* ctx);

// How many leading tokens would be accepted in order from the context's current state (left
// unchanged). Ids outside the vocabulary end the prefix.
size_t AcceptablePrefix(const SamplerContext& ctx, const int32_t* tokens, size_t count);

extern "C" {
const char* HookName(const llama_sampler* smpl);
void HookAccept(llama_sampler* smpl, int32_t token);
void HookApply(llama_sampler* smpl, llama_token_data_array* candidates);
void HookReset(llama_sampler* smpl);
llama_sampler* HookClone(const llama_sampler* smpl);
void HookFree(llama_sampler* smpl);
}

}  // namespace gbnf::llama
