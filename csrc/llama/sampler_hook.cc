#include "llama/sampler_hook.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "mask/draft_plan.h"
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

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

void DisallowAll(llama_token_data_array* candidates) {
  for (size_t i = 0; i < candidates->size; ++i) candidates->data[i].logit = kMinusInf;
}

size_t CountAllowed(const std::vector<uint32_t>& words) {
  size_t n = 0;
  for (uint32_t w : words) n += static_cast<size_t>(detail::PopCount(w));
  return n;
}

// Calls visit(id) for every allowed id below `limit`, in increasing order, until it returns false.
// Returns false when a visit did.
template <typename Visit>
bool ForEachAllowed(const std::vector<uint32_t>& words, size_t limit, Visit visit) {
  const size_t num_words = std::min(words.size(), detail::WordsFor(limit));
  for (size_t w = 0; w < num_words; ++w) {
    for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
      const size_t id = w * detail::kWordBits + static_cast<size_t>(detail::CountTrailingZeros(bits));
      if (id >= limit) return true;
      if (!visit(id)) return false;
    }
  }
  return true;
}

// Calls visit(id) for every refused id below `limit`, in increasing order, until it returns
// false. Returns false when a visit did.
template <typename Visit>
bool ForEachRefused(const std::vector<uint32_t>& words, size_t limit, Visit visit) {
  const size_t num_words = detail::WordsFor(limit);
  for (size_t w = 0; w < num_words; ++w) {
    uint32_t bits = w < words.size() ? ~words[w] : ~uint32_t{0};
    if (w == num_words - 1) bits &= detail::LowBits(static_cast<uint32_t>(limit - w * 32));
    for (; bits != 0; bits &= bits - 1) {
      const size_t id = w * detail::kWordBits + static_cast<size_t>(detail::CountTrailingZeros(bits));
      if (!visit(id)) return false;
    }
  }
  return true;
}

// A fast path of FilterCandidates for a mask that allows most of the vocabulary: when every
// refused token sits at its own index, only the refused entries are read, and their logits
// become -inf (moving the allowed ones would cost more than later samplers skipping -inf); a
// selected refused entry is deselected.
// Returns false, with the array untouched, otherwise.
bool MarkInPlaceOfIds(const std::vector<uint32_t>& words, llama_token_data_array* candidates) {
  llama_token_data* data = candidates->data;
  const size_t size = candidates->size;
  const bool own_places = ForEachRefused(
      words, size, [&](size_t id) { return data[id].id == static_cast<int32_t>(id); });
  if (!own_places) return false;
  ForEachRefused(words, size, [&](size_t id) {
    data[id].logit = kMinusInf;
    if (static_cast<int64_t>(id) == candidates->selected) candidates->selected = -1;
    return true;
  });
  return true;
}

// The fast path of FilterCandidates for other masks: when every allowed token sits at its own
// index (llama_sampler_sample's layout), only the allowed entries are read and moved. Returns
// false, with the array untouched, otherwise.
bool CompactInPlaceOfIds(const std::vector<uint32_t>& words, llama_token_data_array* candidates) {
  llama_token_data* data = candidates->data;
  const size_t size = candidates->size;
  size_t allowed = 0;
  const bool own_places = ForEachAllowed(words, size, [&](size_t id) {
    ++allowed;
    return data[id].id == static_cast<int32_t>(id);
  });
  if (!own_places) return false;
  if (allowed == 0) {
    DisallowAll(candidates);
    return true;
  }
  size_t kept = 0;
  int64_t selected = -1;
  ForEachAllowed(words, size, [&](size_t id) {
    if (static_cast<int64_t>(id) == candidates->selected) selected = static_cast<int64_t>(kept);
    data[kept++] = data[id];  // kept <= id: nothing still to be read is overwritten
    return true;
  });
  candidates->size = kept;
  candidates->selected = selected;
  return true;
}

}  // namespace

void FilterCandidates(const std::vector<uint32_t>& words, size_t vocab_size,
                      llama_token_data_array* candidates) {
  const size_t size = candidates->size;
  llama_token_data* data = candidates->data;
  if (size == 0) return;
  if (size == vocab_size && data[0].id == 0 &&
      data[size - 1].id == static_cast<int32_t>(size - 1)) {
    const bool most_allowed = 2 * CountAllowed(words) > size;
    if (most_allowed ? MarkInPlaceOfIds(words, candidates)
                     : CompactInPlaceOfIds(words, candidates)) {
      return;
    }
  }
  size_t kept = 0;
  int64_t selected = -1;
  for (size_t i = 0; i < size; ++i) {
    if (!Allowed(words, data[i].id)) continue;
    if (static_cast<int64_t>(i) == candidates->selected) selected = static_cast<int64_t>(kept);
    if (kept != i) data[kept] = data[i];
    ++kept;
  }
  if (kept == 0) {  // nothing moved
    DisallowAll(candidates);
    return;
  }
  candidates->size = kept;
  candidates->selected = selected;
}

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

size_t PlanDraft(const SamplerContext& ctx, const int32_t* tokens, size_t count, bool* only) {
  return gbnf::PlanDraft(ctx.matcher, tokens, count, only);
}

namespace {

// Fills the context's mask for the matcher's present state unless it is current. False (with
// the error recorded) when the matcher failed.
bool MaskReady(SamplerContext* ctx) {
  if (!ctx->error.empty()) return false;
  if (ctx->mask_current) return true;
  try {
    ctx->matcher.FillMask(ctx->words.data(), ctx->words.size());
  } catch (const std::exception& e) {
    Fail(ctx, e.what());
    return false;
  }
  ctx->mask_current = true;
  return true;
}

}  // namespace

size_t AllowedCount(SamplerContext* ctx) {
  if (!MaskReady(ctx)) return 0;
  const size_t vocab_size = ctx->matcher.compiled().vocab().size();
  const size_t num_words = std::min(ctx->words.size(), detail::WordsFor(vocab_size));
  size_t n = 0;
  for (size_t w = 0; w < num_words; ++w) n += static_cast<size_t>(detail::PopCount(ctx->words[w]));
  return n;
}

namespace {

// Writes the allowed tokens, in id order, with their logits, at the front of the context's
// candidate buffer (kept at the vocabulary's size); returns how many. Words of 32 allowed
// tokens (inside strings, most of them) are copied without looking at single bits.
size_t BuildAllowed(SamplerContext* ctx, const float* logits) {
  const size_t vocab_size = ctx->matcher.compiled().vocab().size();
  if (ctx->candidates.size() != vocab_size) ctx->candidates.resize(vocab_size);
  llama_token_data* out = ctx->candidates.data();
  const std::vector<uint32_t>& words = ctx->words;
  const size_t num_words = std::min(words.size(), detail::WordsFor(vocab_size));
  size_t count = 0;
  for (size_t w = 0; w < num_words; ++w) {
    uint32_t bits = words[w];
    const size_t base = w * detail::kWordBits;
    if (bits == ~uint32_t{0} && base + detail::kWordBits <= vocab_size) {
      for (size_t id = base; id < base + detail::kWordBits; ++id) {
        out[count++] = llama_token_data{static_cast<int32_t>(id), logits[id], 0.0f};
      }
      continue;
    }
    for (; bits != 0; bits &= bits - 1) {
      const size_t id = base + static_cast<size_t>(detail::CountTrailingZeros(bits));
      if (id >= vocab_size) break;
      out[count++] = llama_token_data{static_cast<int32_t>(id), logits[id], 0.0f};
    }
  }
  return count;
}

}  // namespace

int32_t Sample(SamplerContext* ctx, const LlamaSampleApi& api, void* llama_context, int32_t row,
               llama_sampler* chain) {
  if (!MaskReady(ctx)) return -1;
  const float* logits = api.get_logits_ith(llama_context, row);
  if (logits == nullptr) {
    Fail(ctx, "llama.cpp has no logits for the row to sample");
    return -1;
  }
  const size_t count = BuildAllowed(ctx, logits);
  if (count == 0) {
    Fail(ctx, "the grammar allows no token here");
    return -1;
  }
  llama_token_data_array array{ctx->candidates.data(), count, -1, false};
  api.apply(chain, &array);
  if (array.selected < 0 || static_cast<size_t>(array.selected) >= array.size) {
    Fail(ctx, "the sampler chain selected no token");
    return -1;
  }
  const int32_t token = array.data[array.selected].id;
  api.accept(chain, token);
  return ctx->error.empty() ? token : -1;
}

extern "C" {

const char* HookName(const llama_sampler* /*smpl*/) { return "gbnf-sampler"; }

void HookAccept(llama_sampler* smpl, int32_t token) {
  SamplerContext* ctx = Ctx(smpl);
  try {
    if (InVocab(ctx->matcher, token) && ctx->matcher.AcceptToken(token)) {
      ctx->mask_current = false;
      ++ctx->accepted;
    } else {
      Fail(ctx, "a token outside the grammar was accepted (was the grammar sampler first in "
                "the chain?)");
    }
  } catch (const std::exception& e) {
    Fail(ctx, e.what());
  }
}

// Filters the candidates down to the allowed tokens (FilterCandidates). The mask is filled once
// per matcher state: verifying a draft or a second apply before accept reuses it.
void HookApply(llama_sampler* smpl, llama_token_data_array* candidates) {
  SamplerContext* ctx = Ctx(smpl);
  if (!MaskReady(ctx)) {  // allow nothing
    DisallowAll(candidates);
    return;
  }
  if (candidates->data == ctx->candidates.data() && candidates->size <= ctx->candidates.size()) {
    return;  // Sample built it from this mask: it holds allowed tokens only
  }
  FilterCandidates(ctx->words, ctx->matcher.compiled().vocab().size(), candidates);
}

void HookReset(llama_sampler* smpl) {
  SamplerContext* ctx = Ctx(smpl);
  ctx->matcher.Reset();
  ctx->mask_current = false;
  ctx->error.clear();
  ctx->accepted = 0;
}

llama_sampler* HookClone(const llama_sampler* smpl) {
  const SamplerContext* ctx = Ctx(smpl);
  if (ctx->init == nullptr) return nullptr;
  SamplerContext* copy = nullptr;
  try {
    TokenMatcher matcher = ctx->matcher.Fork();
    matcher.set_prefetch(ctx->matcher.prefetch());
    copy = CreateContext(std::move(matcher), ctx->init, ctx->iface);
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
