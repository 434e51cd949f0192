// One classification in flight (state_mask.h): the token trie split into ranges ("chunks") that
// any number of threads claim with an atomic counter and classify apart (ClassifyRange), merged
// by whichever thread finishes the last chunk. A thread that needs the result helps with the
// chunks left, then waits for the ones other threads hold, but not for long: a chunk still held
// after that (its thread preempted, or a low-priority worker starved by a busy machine) is
// classified again by the waiter (Rescue), and whichever copy is done first is kept. Chunks are
// deterministic, so both copies are equal; a chunk's result is installed once, under the mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/vocab.h"
#include "mask/state_mask.h"

namespace gbnf::detail {

class ClassifyJob {
 public:
  // Called once with the merged classification and the states its walks met (chunk by chunk,
  // duplicates kept), by the thread that finishes the last chunk, before any waiter returns.
  using Done =
      std::function<void(std::shared_ptr<const StateMask>, const std::vector<StateId>& met)>;
  // A chunk below this many trie positions costs more in setup (a fresh walk memo) than it saves.
  static constexpr size_t kMinChunkPositions = 32768;
  static constexpr size_t kMaxChunks = 8;
  // A thread that needs the result and helped for t waits max(t, this) for chunks held by other
  // threads before it classifies them again itself.
  static constexpr std::chrono::microseconds kRescueAfter{500};

  ClassifyJob(std::shared_ptr<const Automaton> automaton, std::shared_ptr<const Vocab> vocab,
              StateId state, uint32_t max_state_size,
              size_t chunks, std::shared_ptr<const std::atomic<bool>> cancelled, Done done);

  // Chunks for a trie of `positions` tokens when `threads` threads may work on it.
  static size_t ChunksFor(size_t positions, size_t threads);

  StateId state() const { return state_; }
  bool HasWork() const { return next_.load(std::memory_order_relaxed) < num_chunks_; }
  // Classifies unclaimed chunks until none is left (stops early once cancelled).
  void Help();
  // Until every chunk is done or `timeout` has passed; true when done.
  bool WaitFor(std::chrono::nanoseconds timeout);
  // Classifies the chunks not done yet (claimed or not), one at a time, until the job is done.
  void Rescue();
  // Until every chunk is done; rethrows a chunk's exception.
  void Wait();

 private:
  // Classifies chunk c into a part of its own and installs it.
  void RunChunk(size_t c);
  // Keeps `part` as chunk c's result unless the chunk is done already; the thread that installs
  // the last chunk merges them (Finish).
  void Install(size_t c, StateMaskPart part, std::exception_ptr error);
  bool ChunkDone(size_t c);
  void Finish();

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const Vocab> vocab_;
  StateId state_;
  uint32_t max_state_size_;
  std::shared_ptr<const std::atomic<bool>> cancelled_;
  Done done_;
  const size_t num_chunks_;
  std::vector<StateMaskPart> parts_;  // one per chunk, written under mutex_ by Install
  std::atomic<size_t> next_{0};
  std::mutex mutex_;
  std::vector<uint8_t> chunk_done_;  // per chunk, under mutex_: its part is installed
  size_t finished_ = 0;        // under mutex_: chunks installed
  std::condition_variable cv_;
  bool complete_ = false;
  std::exception_ptr error_;
};

}  // namespace gbnf::detail
