#include "mask/classify_job.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gbnf::detail {
ClassifyJob::ClassifyJob(std::shared_ptr<const Automaton> automaton,
                         std::shared_ptr<const Vocab> vocab,
                         StateId state,
                         uint32_t max_state_size, size_t chunks,
                         std::shared_ptr<const std::atomic<bool>> cancelled, Done done)
    : automaton_(std::move(automaton)),
      vocab_(std::move(vocab)),
      state_(state),
      max_state_size_(max_state_size),
      cancelled_(std::move(cancelled)),
      done_(std::move(done)),
      num_chunks_(std::max<size_t>(1, chunks)),
      parts_(num_chunks_) {}

size_t ClassifyJob::ChunksFor(size_t positions, size_t threads) {
  return std::max<size_t>(
      1, std::min({threads, positions / kMinChunkPositions, size_t{kMaxChunks}}));
}

void ClassifyJob::Help() {
  const TokenTrie& trie = vocab_->trie();
  const size_t n = num_chunks_;
  for (size_t c = next_.fetch_add(1); c < n; c = next_.fetch_add(1)) {
    try {
      if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
        throw std::runtime_error("mask classification cancelled: its grammar was released");
      }
      ClassifyRange(automaton_, trie, state_, max_state_size_, trie.size() * c / n,
                    trie.size() * (c + 1) / n, &parts_[c]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) Finish();
  }
}

// Runs on the thread that finished the last chunk: every other chunk's writes happened before
// its fetch_add, which this thread's acq_rel fetch_add synchronizes with.
void ClassifyJob::Finish() {
  bool failed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed = error_ != nullptr;
  }
  if (!failed) {
    try {
      done_(std::make_shared<const StateMask>(MergeParts(parts_, vocab_->trie())));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
  }
  for (StateMaskPart& part : parts_) part = StateMaskPart();  // no chunk is running any more
  {
    std::lock_guard<std::mutex> lock(mutex_);
    complete_ = true;
  }
  cv_.notify_all();
}

void ClassifyJob::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return complete_; });
  if (error_) std::rethrow_exception(error_);
}

}  // namespace gbnf::detail
