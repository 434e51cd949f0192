#include "mask/thread_pool.h"

#include <algorithm>

namespace gbnf::detail {

ThreadPool& ThreadPool::Shared() {
  static ThreadPool pool(std::max<size_t>(2, std::thread::hardware_concurrency()) - 1);
  return pool;
}

ThreadPool::ThreadPool(size_t workers) {
  for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::RunTasks() {
  for (size_t i = next_.fetch_add(1); i < n_; i = next_.fetch_add(1)) {
    try {
      (*fn_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || batch_ != seen; });
      if (stop_) return;
      seen = batch_;
      ++busy_;
    }
    RunTasks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
    }
    done_cv_.notify_all();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n == 1 || threads_.empty()) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> call(call_mutex_);
  {
    // A worker that woke late may still be finishing the previous batch's (empty) task loop.
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = &fn;
    n_ = n;
    next_.store(0);
    error_ = nullptr;
    ++batch_;
  }
  start_cv_.notify_all();
  RunTasks();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace gbnf::detail
