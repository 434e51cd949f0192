// The background workers of the mask cache: threads that use idle cores to classify automaton
// states before a matcher needs them (each compiled grammar's precompute plan), to help with the
// chunks of a classification someone is waiting for, and to build what the classifications of
// every grammar share. Process-wide, started on first use, hardware_concurrency() - 1 threads
// (at least one) at a lower scheduling priority (nice kBackgroundNice on Linux), so that they
// take cores the caller's own work leaves idle.
// A plan or a job is held by weak reference: dropping the grammar ends its work.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mask/classify_job.h"

namespace gbnf::detail {

// A compiled grammar's precompute plan, run by background workers.
class BackgroundPlan {
 public:
  virtual ~BackgroundPlan() = default;
  // Classifies the plan's next state; false once the plan is over (nothing left, cancelled or
  // over the memory budget).
  virtual bool RunOne() = 0;
};

class BackgroundPool {
 public:
  static constexpr int kBackgroundNice = 10;

  static BackgroundPool& Shared();
  explicit BackgroundPool(size_t workers);
  ~BackgroundPool();
  BackgroundPool(const BackgroundPool&) = delete;
  BackgroundPool& operator=(const BackgroundPool&) = delete;

  size_t workers() const { return threads_.size(); }
  // Idle workers help with `job`'s chunks (ahead of any plan).
  void Help(const std::shared_ptr<ClassifyJob>& job);
  // Workers run the plan (newest plans first) until it is over or dropped.
  void AddPlan(const std::shared_ptr<BackgroundPlan>& plan);
  // A short piece of work that serves every grammar (a vocabulary's list of the tokens of a
  // byte class), run once, after the jobs being waited for and before any plan. `task` owns
  // what it uses.
  void AddTask(std::function<void()> task);
  // Plans queued or running (tests).
  size_t plans() const;

 private:
  void WorkerLoop();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::weak_ptr<ClassifyJob>> urgent_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::weak_ptr<BackgroundPlan>> plans_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace gbnf::detail
