#include "llama/sampler_hook.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "support/bits.h"

namespace gbnf::llama {
namespace {

SamplerContext* Ctx(const llama_sampler* smpl) {
  return static_cast<SamplerContext*>(smpl->ctx);
}

bool Allowed(const std::vector<uint32_t>& words, int32_t token) {
  if (token < 0) return false;
  const auto index = static_cast<size_t>(token);
  if (detail::WordOf(index) >= words.size()) return false;
  return detail::TestBit(words.data(), index);
}

// llama.cpp may hand any id: one outside the vocabulary is refused, never a VocabError.
bool InVocab(const TokenMatcher& matcher, int32_t token) {
  return token >= 0 && static_cast<size_t>(token) < matcher.compiled().vocab().size();
}

// Records a failure. No exception may cross into llama.cpp's C frames.
void Fail(SamplerContext* ctx, const char* what) {
  if (ctx->error.empty()) ctx->error = what;
}

}  // namespace

SamplerContext::SamplerContext(TokenMatcher m, SamplerInitFn init_fn, const void* iface_table)
    : matcher(std::move(m)), words(matcher.MaskWords(), 0), init(init_fn), iface(iface_table) {}

SamplerContext* CreateContext(TokenMatcher matcher, SamplerInitFn init, const void* iface) {
  return new SamplerContext(std::move(matcher), init, iface);
}

void DestroyContext(SamplerContext* ctx) { delete ctx; }

size_t AcceptablePrefix(const SamplerContext& ctx, const int32_t* tokens, size_t count) {
  TokenMatcher probe = ctx.matcher.Fork();
  for (size_t i = 0; i < count; ++i) {
    if (!InVocab(probe, tokens[i]) || !probe.AcceptToken(tokens[i])) return i;
  }
  return count;
}

extern "C" {

const char* HookName(const llama_sampler* /*smpl*/) { return "gbnf-sampler"; }

void HookAccept(llama_sampler* smpl, int32_t token) {
  SamplerContext* ctx = Ctx(smpl);
  try {
    if (InVocab(ctx->matcher, token) && ctx->matcher.AcceptToken(token)) {
      ++ctx->accepted;
    } else {
      Fail(ctx, "a token outside the grammar was accepted (was the grammar sampler first in "
                "the chain?)");
    }
  } catch (const std::exception& e) {
    Fail(ctx, e.what());
  }
}

void HookApply(llama_sampler* smpl, llama_token_data_array* candidates) {
  SamplerContext* ctx = Ctx(smpl);
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  bool ok = ctx->error.empty();
  if (ok) {
    try {
      ctx->matcher.FillMask(ctx->words.data(), ctx->words.size());
    } catch (const std::exception& e) {
      Fail(ctx, e.what());
      ok = false;
    }
  }
  if (!ok) std::fill(ctx->words.begin(), ctx->words.end(), 0);  // allow nothing
  for (size_t i = 0; i < candidates->size; ++i) {
    llama_token_data& c = candidates->data[i];
    if (!Allowed(ctx->words, c.id)) c.logit = kMinusInf;
  }
}

void HookReset(llama_sampler* smpl) {
  SamplerContext* ctx = Ctx(smpl);
  ctx->matcher.Reset();
  ctx->error.clear();
  ctx->accepted = 0;
}

llama_sampler* HookClone(const llama_sampler* smpl) {
  const SamplerContext* ctx = Ctx(smpl);
  if (ctx->init == nullptr) return nullptr;
  SamplerContext* copy = nullptr;
  try {
    copy = CreateContext(ctx->matcher.Fork(), ctx->init, ctx->iface);
  } catch (const std::exception&) {
    return nullptr;
  }
  copy->error = ctx->error;
  copy->accepted = ctx->accepted;
  llama_sampler* clone = ctx->init(ctx->iface, copy);
  if (clone == nullptr) DestroyContext(copy);
  return clone;
}

void HookFree(llama_sampler* smpl) {
  DestroyContext(Ctx(smpl));
  smpl->ctx = nullptr;  // llama.cpp deletes the llama_sampler itself
}

}  // extern "C"
}  // namespace gbnf::llama
