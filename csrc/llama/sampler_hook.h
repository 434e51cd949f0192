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

// The llama.cpp functions Sample calls, by address (the hook does not link libllama):
// llama_get_logits_ith, llama_sampler_apply, llama_sampler_accept.
struct LlamaSampleApi {
  const float* (*get_logits_ith)(void* llama_context, int32_t i) = nullptr;
  void (*apply)(llama_sampler* smpl, llama_token_data_array* candidates) = nullptr;
  void (*accept)(llama_sampler* smpl, int32_t token) = nullptr;
};

// The sampler's ctx. Owned by the llama_sampler once created: freed by HookFree.
struct SamplerContext {
  SamplerContext(TokenMatcher m, SamplerInitFn init_fn, const void* iface_table);

  TokenMatcher matcher;
  std::vector<uint32_t> words;  // the mask (MaskWords() words), reused every step
  bool mask_current = false;    // `words` holds the mask of the matcher's present state
  SamplerInitFn init = nullptr;
  const void* iface = nullptr;
  std::string error;  // set when the matcher failed; the generation loop reports it
  int64_t accepted = 0;
  std::vector<llama_token_data> candidates;  // Sample's candidate array, reused every step
};

// Creates a context; the caller hands it to llama_sampler_init (or frees it with
// DestroyContext if that never happens).
SamplerContext* CreateContext(TokenMatcher matcher, SamplerInitFn init, const void* iface);
void DestroyContext(SamplerContext* ctx);

// How many leading tokens would be accepted in order from the context's current state (left
// unchanged). Ids outside the vocabulary end the prefix.
size_t AcceptablePrefix(const SamplerContext& ctx, const int32_t* tokens, size_t count);

// How many tokens the grammar allows at the context's current state: its mask is filled (and
// kept for the next apply, as apply would fill it). 0 when the matcher failed (error recorded).
size_t AllowedCount(SamplerContext* ctx);

// A jump-forward draft checked against the grammar from the context's current state (left
// unchanged): the length of the acceptable prefix of `tokens`, and for each of those tokens
// whether it is the only token the grammar allows at its position (written to only[i]; such a
// token needs no verification by the model).
size_t PlanDraft(const SamplerContext& ctx, const int32_t* tokens, size_t count, bool* only);

// Keeps the candidates whose token the mask `words` allows, in their order, at the front of the
// array and shrinks it to them (the array's `selected` and `sorted` stay valid: the order is
// kept; a selected refused candidate leaves `selected` at -1). When none is allowed, every logit
// becomes -inf instead and the size is kept (a sampler chain asserts a non-empty array; the
// token it then picks is refused by accept). `vocab_size` enables the fast paths for
// llama_sampler_sample's layout (data[i].id == i for all i): a mask allowing at most half the
// vocabulary visits only the allowed tokens; one allowing more sets the refused tokens' logits
// to -inf in place, without moving or removing anything. Candidate ids are unique, as
// llama.cpp guarantees.
void FilterCandidates(const std::vector<uint32_t>& words, size_t vocab_size,
                      llama_token_data_array* candidates);

// llama_sampler_sample(chain, llama_context, row) for a chain whose first sampler is this
// context's: the same token, drawn the same way, without the candidate array of the whole
// vocabulary. The array holds the allowed tokens only (what this sampler's apply would leave),
// in id order, in a buffer reused every step; the chain applies to it and accepts the token
// it selects. Returns the token, or -1 with `error` set (the constraint failed, the row has no
// logits, or the chain selected nothing).
int32_t Sample(SamplerContext* ctx, const LlamaSampleApi& api, void* llama_context, int32_t row,
               llama_sampler* chain);

extern "C" {
const char* HookName(const llama_sampler* smpl);
void HookAccept(llama_sampler* smpl, int32_t token);
void HookApply(llama_sampler* smpl, llama_token_data_array* candidates);
void HookReset(llama_sampler* smpl);
llama_sampler* HookClone(const llama_sampler* smpl);
void HookFree(llama_sampler* smpl);
}

}  // namespace gbnf::llama
