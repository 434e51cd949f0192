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
      parts_(num_chunks_),
      chunk_done_(num_chunks_, 0) {}

size_t ClassifyJob::ChunksFor(size_t positions, size_t threads) {
  return std::max<size_t>(
      1, std::min({threads, positions / kMinChunkPositions, size_t{kMaxChunks}}));
}

void ClassifyJob::Help() {
  for (size_t c = next_.fetch_add(1); c < num_chunks_; c = next_.fetch_add(1)) {
    if (!ChunkDone(c)) RunChunk(c);
  }
}

void ClassifyJob::Rescue() {
  for (size_t c = 0; c < num_chunks_; ++c) {
    if (!ChunkDone(c)) RunChunk(c);
  }
}

bool ClassifyJob::ChunkDone(size_t c) {
  std::lock_guard<std::mutex> lock(mutex_);
  return complete_ || chunk_done_[c] != 0;
}

void ClassifyJob::RunChunk(size_t c) {
  const TokenTrie& trie = vocab_->trie();
  const size_t n = num_chunks_;
  StateMaskPart part;
  std::exception_ptr error;
  try {
    if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
      throw std::runtime_error("mask classification cancelled: its grammar was released");
    }
    ClassifyRange(automaton_, trie, state_, max_state_size_, trie.size() * c / n,
                  trie.size() * (c + 1) / n, &part);
  } catch (...) {
    error = std::current_exception();
  }
  Install(c, std::move(part), std::move(error));
}

void ClassifyJob::Install(size_t c, StateMaskPart part, std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (complete_ || chunk_done_[c] != 0) return;  // another thread's copy was first
    chunk_done_[c] = 1;
    parts_[c] = std::move(part);
    if (error && !error_) error_ = std::move(error);
    if (++finished_ != num_chunks_) return;
  }
  Finish();
}

// Runs on the thread that installed the last chunk, once: every part was written under the
// mutex, which this thread took after them, and no part is written after its chunk is done.
void ClassifyJob::Finish() {
  bool failed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed = error_ != nullptr;
  }
  if (!failed) {
    try {
      std::vector<StateId> met;
      for (const StateMaskPart& part : parts_) {
        met.insert(met.end(), part.states_met.begin(), part.states_met.end());
      }
      done_(std::make_shared<const StateMask>(MergeParts(parts_, vocab_->trie())), met);
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

bool ClassifyJob::WaitFor(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return complete_; });
}

void ClassifyJob::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return complete_; });
  if (error_) std::rethrow_exception(error_);
}

}  // namespace gbnf::detail
