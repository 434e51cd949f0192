// Matchers are not thread-safe, and the bindings release the GIL while they work, so two Python
// threads could otherwise run one matcher at once (a data race, possibly a crash). Exclusive<T>
// is the bound type: it adds a busy flag, and every binding that touches the matcher holds an
// ExclusiveUse, which turns that misuse into a RuntimeError (Run and ExclusiveBatch below).
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// Runs fn(target) holding `target` (a Matcher or TokenMatcher); without the GIL when the work,
// `steps` byte steps over the live parser items, is large (kReleaseGilWork steps: always).
template <typename T, typename Fn>
auto Run(Exclusive<T>& target, size_t steps, Fn&& fn) {
  ExclusiveUse<T> use(target);
  if (steps < kReleaseGilWork && steps * (target.StateSize() + 1) < kReleaseGilWork) {
    return fn(static_cast<T&>(target));
  }
  pybind11::gil_scoped_release release;
  return fn(static_cast<T&>(target));
}

// Runs fn(target) holding `target`, with the GIL unless cheap(target) says the call is short.
template <typename T, typename Cheap, typename Fn>
auto RunUnless(Exclusive<T>& target, Cheap&& cheap, Fn&& fn) {
  ExclusiveUse<T> use(target);
  if (cheap(static_cast<const T&>(target))) return fn(static_cast<T&>(target));
  pybind11::gil_scoped_release release;
  return fn(static_cast<T&>(target));
}

// Holds every matcher of a batch (distinct objects, none in use elsewhere) for its lifetime.
template <typename T>
class ExclusiveBatch {
 public:
  explicit ExclusiveBatch(const std::vector<Exclusive<T>*>& targets) {
    CheckDistinct(targets);
    uses_.reserve(targets.size());
    for (Exclusive<T>* t : targets) {
      uses_.emplace_back(*t);
      values_.push_back(t);
    }
  }
  const std::vector<T*>& values() const { return values_; }

 private:
  static void CheckDistinct(const std::vector<Exclusive<T>*>& targets) {
    for (size_t i = 0; i < targets.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (targets[i] == targets[j]) {
          throw pybind11::value_error("matchers " + std::to_string(j) + " and " +
                                      std::to_string(i) + " are the same object (fork() one)");
        }
      }
    }
  }

  std::vector<ExclusiveUse<T>> uses_;
  std::vector<T*> values_;
};

}  // namespace gbnf::bindings
