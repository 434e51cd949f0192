// Matchers are not thread-safe, and the bindings release the GIL while they work, so two Python
// threads could otherwise run one matcher at once (a data race, possibly a crash). Exclusive<T>
// is the bound type: it adds a busy flag, and every binding that touches the matcher holds an
// ExclusiveUse, which turns that misuse into a RuntimeError.
#pragma once

#include <atomic>
#include <memory>
#include <stdexcept>
#include <utility>

namespace gbnf::bindings {

template <typename T>
class Exclusive : public T {
 public:
  explicit Exclusive(T&& value) : T(std::move(value)) {}
  static std::unique_ptr<Exclusive> Wrap(T&& value) {
    return std::make_unique<Exclusive>(std::move(value));
  }

 private:
  template <typename U>
  friend class ExclusiveUse;
  std::atomic<bool> busy_{false};
};

template <typename T>
class ExclusiveUse {
 public:
  explicit ExclusiveUse(Exclusive<T>& target) : target_(&target) {
    if (target.busy_.exchange(true, std::memory_order_acquire)) {
      target_ = nullptr;
      throw std::runtime_error(
          "this Matcher is in use by another thread; a matcher belongs to one thread at a time "
          "(give each thread its own: matcher.fork())");
    }
  }
  ~ExclusiveUse() {
    if (target_ != nullptr) target_->busy_.store(false, std::memory_order_release);
  }
  ExclusiveUse(ExclusiveUse&& other) noexcept : target_(std::exchange(other.target_, nullptr)) {}
  ExclusiveUse(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(ExclusiveUse&&) = delete;

 private:
  Exclusive<T>* target_;
};

// Releasing the GIL costs little, but reacquiring it can wait for another thread's switch
// interval, so per-token calls keep it for small steps. Work is estimated as input bytes times
// live parser items; past this the step can take more than a few microseconds.
inline constexpr size_t kReleaseGilWork = 4096;

}  // namespace gbnf::bindings
