// A small persistent thread pool for batch mask fills: ParallelFor runs fn(0..n-1) on the pool's
// workers and the calling thread, and returns when all are done (rethrowing the first exception).
// One batch at a time (calls are serialized); tasks are claimed with an atomic counter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gbnf::detail {

class ThreadPool {
 public:
  // The process-wide pool: hardware_concurrency() - 1 workers (at least 1), started on first use.
  static ThreadPool& Shared();

  explicit ThreadPool(size_t workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);
  size_t workers() const { return threads_.size(); }

 private:
  void WorkerLoop();
  void RunTasks();

  std::mutex call_mutex_;  // one batch at a time
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  std::atomic<size_t> next_{0};
  size_t busy_ = 0;       // workers inside the current batch
  uint64_t batch_ = 0;    // generation of the current batch
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace gbnf::detail
