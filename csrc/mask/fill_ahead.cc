#include "mask/fill_ahead.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace gbnf::detail {

FillAhead::FillAhead(TokenMatcher fork, uint64_t generation)
    : fork_(std::move(fork)), generation_(generation) {}

void FillAhead::Run() {
  int expected = kQueued;
  if (!status_.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel)) return;
  int result = kDone;
  try {
    words_.resize(fork_.MaskWords());
    fork_.FillMask(words_.data(), words_.size());
  } catch (...) {
    result = kFailed;  // the owner's own fill reports the error
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    status_.store(result, std::memory_order_release);
  }
  cv_.notify_all();
}

bool FillAhead::TakeInto(uint32_t* words, size_t num_words) {
  int status = kQueued;
  if (status_.compare_exchange_strong(status, kClaimed, std::memory_order_acq_rel)) return false;
  if (status == kRunning) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kPatience,
                 [&] { return status_.load(std::memory_order_acquire) != kRunning; });
    status = status_.load(std::memory_order_acquire);
  }
  if (status != kDone || num_words < words_.size()) return false;
  std::copy(words_.begin(), words_.end(), words);
  std::memset(words + words_.size(), 0, (num_words - words_.size()) * sizeof(uint32_t));
  return true;
}

}  // namespace gbnf::detail
