#include "mask/background.h"

#include <algorithm>
#include <utility>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gbnf::detail {
namespace {

void LowerPriority() {
#if defined(__linux__)
  // Per-thread on Linux (best effort: an error leaves the default priority).
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, BackgroundPool::kBackgroundNice);
#endif
}

}  // namespace

BackgroundPool& BackgroundPool::Shared() {
  static BackgroundPool pool(std::max<size_t>(2, std::thread::hardware_concurrency()) - 1);
  return pool;
}

BackgroundPool::BackgroundPool(size_t workers) {
  for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

BackgroundPool::~BackgroundPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BackgroundPool::Help(const std::shared_ptr<ClassifyJob>& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    urgent_.push_back(job);
  }
  cv_.notify_one();
}

void BackgroundPool::AddPlan(const std::shared_ptr<BackgroundPlan>& plan) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.push_back(plan);
  }
  cv_.notify_one();
}

void BackgroundPool::AddTask(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

size_t BackgroundPool::plans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& p : plans_) n += p.expired() ? 0 : 1;
  return n;
}

void BackgroundPool::WorkerLoop() {
  LowerPriority();
  for (;;) {
    std::shared_ptr<ClassifyJob> job;
    std::function<void()> task;
    std::shared_ptr<BackgroundPlan> plan;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] {
        return stop_ || !urgent_.empty() || !tasks_.empty() || !plans_.empty();
      });
      if (stop_) return;
      if (!urgent_.empty()) {
        job = urgent_.front().lock();
        urgent_.pop_front();
      } else if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
      } else {
        plan = plans_.back().lock();
        if (!plan) plans_.pop_back();
      }
    }
    if (job) {
      job->Help();
    } else if (task) {
      task();
    } else if (plan && !plan->RunOne()) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = std::find_if(plans_.begin(), plans_.end(),
                             [&](const std::weak_ptr<BackgroundPlan>& p) {
                               return !p.owner_before(plan) && !plan.owner_before(p);
                             });
      if (it != plans_.end()) plans_.erase(it);
    }
  }
}

}  // namespace gbnf::detail
