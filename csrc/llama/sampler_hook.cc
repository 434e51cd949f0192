#include "llama/sampler_hook.h"

#include <cmath>
#include <exception>
#include <limits>

#include "support/bits.h"

namespace gbnf::llama {
namespace {

SamplerContext* Ctx(const llama_sampler* smpl) {
  return static_cast<SamplerContext*>(smpl->ctx);
}

bool Allowed(const std::vector<int32_t>& words, int32_t token) {
  if (token < 0) return false;
  const auto index = static_cast<size_t>(token);
  if (detail::WordOf(index) >= words.size()) return false;
  return detail::TestBit(reinterpret_cast<const uint32_t*>(words.data()), index);
}

// Records a failure. No exception may cross into llama.cpp's C frames.
void Fail(SamplerContext* ctx, const char* what) {
  if (ctx->error.empty()) ctx->error = what;
}

}  // namespace

SamplerContext* CreateContext(std::unique_ptr<TokenConstraint> constraint, SamplerInitFn init,
                              const void* iface) {
  auto* ctx = new SamplerContext();
  ctx->words.assign(constraint->WordCount(), 0);
  ctx->constraint = std::move(constraint);
  ctx->init = init;
  ctx->iface = iface;
  return ctx;
}

void DestroyContext(SamplerContext* ctx) { delete ctx; }

extern "C" {

const char* HookName(const llama_sampler* /*smpl*/) { return "gbnf-sampler"; }

void HookAccept(llama_sampler* smpl, int32_t token) {
  SamplerContext* ctx = Ctx(smpl);
  try {
    if (ctx->constraint->AcceptToken(token)) {
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
      ctx->constraint->FillMask(ctx->words.data());
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
  ctx->constraint->Reset();
  ctx->error.clear();
  ctx->accepted = 0;
}

llama_sampler* HookClone(const llama_sampler* smpl) {
  const SamplerContext* ctx = Ctx(smpl);
  if (ctx->init == nullptr) return nullptr;
  SamplerContext* copy = nullptr;
  try {
    copy = CreateContext(ctx->constraint->Clone(), ctx->init, ctx->iface);
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
