#include "mask/mask_cache.h"

#include <utility>

#include "mask/shared_cache.h"

namespace gbnf {

CompiledGrammar::MaskCache::MaskCache(std::shared_ptr<const Automaton> automaton,
                                      std::shared_ptr<const Vocab> vocab, uint32_t max_state_size,
                                      const MaskCacheOptions& options)
    : core_(std::make_shared<detail::CacheCore>(std::move(automaton), std::move(vocab),
                                                max_state_size)) {
  core_->set_prefetch(options.prefetch);
  if (options.precompute) core_->StartPrecompute();
}

CompiledGrammar::MaskCache::~MaskCache() { core_->Cancel(); }

void SetMaskMemoryBudget(size_t bytes) {
  detail::SetMaskBudget(bytes);
  detail::SharedMaskCache::Instance().SetLimitBytes(bytes);
}

size_t MaskMemoryBudget() { return detail::MaskBudget(); }

SharedMaskCacheStats GetSharedMaskCacheStats() {
  detail::SharedMaskCache& cache = detail::SharedMaskCache::Instance();
  SharedMaskCacheStats out;
  out.entries = cache.entries();
  out.bytes = cache.bytes();
  out.limit_bytes = cache.limit_bytes();
  out.hits = cache.hits();
  return out;
}

void ClearSharedMaskCache() { detail::SharedMaskCache::Instance().Clear(); }

}  // namespace gbnf
