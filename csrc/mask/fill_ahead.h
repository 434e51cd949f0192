// The next mask of a matcher, filled by a background worker on a fork of the matcher taken right
// after an accept, while the model decodes the accepted token (TokenMatcher::PrefetchNext). The
// matcher's next fill takes it when it is done, waits a little when it is in progress, and fills
// the mask itself when the worker has not started (or is slow, or failed): the mask is the one
// the matcher would fill, since the fork is in the same state and masks depend on nothing else.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gbnf_sampler/token_matcher.h"

namespace gbnf::detail {

class FillAhead {
 public:
  // How long a fill waits for a worker's mask in progress before it fills its own.
  static constexpr std::chrono::microseconds kPatience{500};

  // `fork` is in the state whose mask is wanted; `generation` tells the owner's state apart.
  FillAhead(TokenMatcher fork, uint64_t generation);
  FillAhead(const FillAhead&) = delete;
  FillAhead& operator=(const FillAhead&) = delete;

  uint64_t generation() const { return generation_; }
  // Worker: fills the mask unless the owner claimed it first.
  void Run();
  // Owner: true with the mask written to words[0, num_words) (num_words >= the fork's
  // MaskWords()) when the worker filled it, waiting up to kPatience for one in progress; false
  // when the owner is to fill the mask itself (the worker then never starts).
  bool TakeInto(uint32_t* words, size_t num_words);

 private:
  enum Status : int { kQueued, kRunning, kDone, kFailed, kClaimed };

  TokenMatcher fork_;
  const uint64_t generation_;
  std::vector<uint32_t> words_;  // written by Run, read by TakeInto once kDone is seen
  std::atomic<int> status_{kQueued};
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace gbnf::detail
