#include "gbnf_sampler/batch.h"

#include <stdexcept>

#include "mask/thread_pool.h"

namespace gbnf {

void FillMasks(const std::vector<TokenMatcher*>& matchers, uint32_t* bitmask, size_t row_stride,
               size_t num_words) {
  detail::ThreadPool::Shared().ParallelFor(matchers.size(), [&](size_t i) {
    matchers[i]->FillMask(bitmask + i * row_stride, num_words);
  });
}

std::vector<uint8_t> AcceptTokens(const std::vector<TokenMatcher*>& matchers,
                                  const std::vector<TokenId>& token_ids) {
  if (matchers.size() != token_ids.size()) {
    throw std::invalid_argument("accept_tokens: " + std::to_string(matchers.size()) +
                                " matchers but " + std::to_string(token_ids.size()) + " tokens");
  }
  std::vector<uint8_t> accepted(matchers.size());
  detail::ThreadPool::Shared().ParallelFor(matchers.size(), [&](size_t i) {
    accepted[i] = matchers[i]->AcceptToken(token_ids[i]) ? 1 : 0;
  });
  return accepted;
}

}  // namespace gbnf
