#include "mask/cache_core.h"

#include <algorithm>
#include <chrono>

#include "mask/precompute_order.h"
#include "mask/shared_cache.h"

namespace gbnf::detail {
namespace {

std::atomic<size_t> g_live_entry_bytes{0};
std::atomic<size_t> g_budget{size_t{256} << 20};

bool OverBudget() {
  return g_live_entry_bytes.load(std::memory_order_relaxed) +
             SharedMaskCache::Instance().bytes() >=
         g_budget.load(std::memory_order_relaxed);
}

}  // namespace

size_t LiveEntryBytes() { return g_live_entry_bytes.load(std::memory_order_relaxed); }

CacheCore::CacheCore(std::shared_ptr<const Automaton> automaton,
                     std::shared_ptr<const Vocab> vocab, uint32_t max_state_size)
    : automaton_(std::move(automaton)),
      vocab_(std::move(vocab)),
      max_state_size_(max_state_size),
      cancelled_(std::make_shared<std::atomic<bool>>(false)) {
  const size_t longest = vocab_->max_token_length();
  twin_radius_ = KeyRadius(TopKeyLevel(longest), longest);
}

CacheCore::~CacheCore() {
  g_live_entry_bytes.fetch_sub(stats_.bytes - stats_.mapped_bytes, std::memory_order_relaxed);
}

void CacheCore::Cancel() { cancelled_->store(true, std::memory_order_relaxed); }

bool CacheCore::Publish(StateId state, std::shared_ptr<const StateMask> mask, EntryOrigin origin,
                        bool in_shared, size_t mapped_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.erase(state);
  if (IsPublished(state)) return false;
  // A twin's entry is its twin's: held, and counted, once.
  const size_t owned = origin == EntryOrigin::kTwin ? 0 : mask->MemoryBytes();
  ++stats_.filled;
  stats_.bytes += owned + mapped_bytes;
  if (in_shared) stats_.shared_bytes += owned;
  stats_.mapped_bytes += mapped_bytes;
  g_live_entry_bytes.fetch_add(owned, std::memory_order_relaxed);
  switch (origin) {
    case EntryOrigin::kBackground:
      ++stats_.background;
      ++stats_.classified;
      break;
    case EntryOrigin::kPrefetched:
      ++stats_.prefetched;
      ++stats_.classified;
      break;
    case EntryOrigin::kClassified:
      ++stats_.classified;
      break;
    case EntryOrigin::kShared:
      ++stats_.shared;
      break;
    case EntryOrigin::kLoaded:
      ++stats_.loaded;
      break;
    case EntryOrigin::kTwin:
      ++stats_.twins;
      break;
    case EntryOrigin::kNone:
      break;
  }
  const StateMask* entry = mask.get();
  if (origin != EntryOrigin::kTwin) owners_.emplace(state, std::move(mask));
  published_.Ensure(state).store(entry, std::memory_order_release);
  return true;
}

// Fills `state` from the shared cache when it holds an entry under one of the state's keys:
// the ladder's levels that hold entries, from the smallest radius up, while an entry above may
// still match.
bool CacheCore::TryShared(StateId state) {
  SharedMaskCache& shared = SharedMaskCache::Instance();
  const uint32_t held = shared.LevelsHeld();
  if (held == 0) return false;
  const std::atomic<uint8_t>* unkeyed = unkeyed_.Find(state);
  if (unkeyed != nullptr && unkeyed->load(std::memory_order_relaxed) != 0) return false;
  StateKeyWriter writer(*automaton_, state, kMaxKeyStates, vocab_->max_token_length());
  int top = kKeyLevels - 1;
  while ((held >> top & 1) == 0) --top;
  for (int level = 0; level <= top; ++level) {
    if (!writer.WriteTo(level)) {
      if (level == 0 && !writer.met_unbuilt_rule()) {
        unkeyed_.Ensure(state).store(1, std::memory_order_relaxed);
      }
      return false;
    }
    if ((held >> level & 1) != 0) {
      if (std::shared_ptr<const StateMask> hit =
              shared.Find(*vocab_, max_state_size_, writer.key())) {
        SetReach(state, level);
        Publish(state, std::move(hit), EntryOrigin::kShared, true, 0);
        return true;
      }
    }
    if (level < top && !shared.MayHoldAbove(level, writer.key().hash)) return false;
  }
  return false;
}

std::shared_ptr<const StateMask> CacheCore::Share(StateId state,
                                                  std::shared_ptr<const StateMask> mask,
                                                  const std::vector<StateId>& met,
                                                  bool* shared) {
  *shared = false;
  SharedMaskCache& cache = SharedMaskCache::Instance();
  const std::atomic<uint8_t>* unkeyed = unkeyed_.Find(state);
  if (cache.limit_bytes() == 0 ||
      (unkeyed != nullptr && unkeyed->load(std::memory_order_relaxed) != 0)) {
    return mask;
  }
  StoredKey key;
  if (!ComputeStoredKey(*automaton_, state, kMaxKeyStates, vocab_->max_token_length(), met,
                        &key)) {
    return mask;
  }
  SetReach(state, key.level);
  *shared = true;
  return cache.Insert(vocab_, max_state_size_, key, std::move(mask));
}

// The job classifying `state`: the one in flight, or a new one (*owner) when the entry is still
// empty; null when the entry is filled. A new job's result goes to the shared cache when keyed.
std::shared_ptr<ClassifyJob> CacheCore::StartJob(StateId state, EntryOrigin origin, bool* owner) {
  *owner = false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (IsPublished(state)) return nullptr;
  auto it = jobs_.find(state);
  if (it != jobs_.end()) return it->second;
  std::weak_ptr<CacheCore> self = weak_from_this();
  auto done = [self, state, origin](std::shared_ptr<const StateMask> mask,
                                    const std::vector<StateId>& met) {
    std::shared_ptr<CacheCore> core = self.lock();
    if (!core) return;
    bool shared = false;
    mask = core->Share(state, std::move(mask), met, &shared);
    core->Publish(state, std::move(mask), origin, shared, 0);
  };
  const size_t chunks = ClassifyJob::ChunksFor(vocab_->trie().size(),
                                               BackgroundPool::Shared().workers() + 1);
  auto job = std::make_shared<ClassifyJob>(automaton_, vocab_, state,
                                           max_state_size_, chunks, cancelled_, std::move(done));
  jobs_.emplace(state, job);
  *owner = true;
  return job;
}

void CacheCore::DropJob(StateId state, const std::shared_ptr<ClassifyJob>& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(state);
  if (it != jobs_.end() && it->second == job) jobs_.erase(it);
}

void CacheCore::SetReach(StateId state, int level) {
  const size_t longest = vocab_->max_token_length();
  reach_.Ensure(state).store(1 + KeyRadius(level, longest), std::memory_order_relaxed);
}

StateId CacheCore::TwinFor(StateId state) const {
  StateId s = state;
  for (StateId below = automaton_->TwinOf(s, twin_radius_); below != s;
       below = automaton_->TwinOf(s, twin_radius_)) {
    if (IsPublished(below)) return below;
    s = below;
  }
  return s;
}

bool CacheCore::TryTwin(StateId state, bool fill) {
  const StateId twin = TwinFor(state);
  if (twin == state) return false;
  if (fill) {
    Fill(twin);
  } else if (!IsPublished(twin)) {
    return false;
  }
  // The twin's classification read within twin_radius_ bytes when it has a reach at all (the
  // ladder's radii go no further), and the two states agree that far.
  const std::atomic<uint32_t>* reach = reach_.Find(twin);
  const uint32_t r = reach == nullptr ? 0 : reach->load(std::memory_order_relaxed);
  const StateMask* entry = FilledMaskOf(twin);
  if (r == 0 || entry == nullptr) return false;
  reach_.Ensure(state).store(r, std::memory_order_relaxed);
  // Not owned: the twin's owner holds the entry as long as the cache lives.
  Publish(state, std::shared_ptr<const StateMask>(std::shared_ptr<const StateMask>(), entry),
          EntryOrigin::kTwin, false, 0);
  return true;
}

const StateMask& CacheCore::Fill(StateId state) {
  for (;;) {
    if (const StateMask* m = FilledMaskOf(state)) return *m;
    if (TryTwin(state, true)) continue;
    if (TryShared(state)) continue;
    bool owner = false;
    std::shared_ptr<ClassifyJob> job = StartJob(state, EntryOrigin::kClassified, &owner);
    if (!job) continue;
    if (owner && job->HasWork() && BackgroundPool::Shared().workers() > 0) {
      BackgroundPool::Shared().Help(job);
    }
    const auto helping = std::chrono::steady_clock::now();
    job->Help();
    const auto helped = std::chrono::steady_clock::now() - helping;
    try {
      if (!job->WaitFor(std::max<std::chrono::nanoseconds>(helped, ClassifyJob::kRescueAfter))) {
        job->Rescue();  // chunks another thread holds and has not finished: classified here too
      }
      job->Wait();
    } catch (...) {
      DropJob(state, job);  // a later fill tries again
      throw;
    }
  }
}

void CacheCore::Prefetch(StateId state) {
  if (!prefetch_ || IsPublished(state) || BackgroundPool::Shared().workers() == 0) return;
  if (prefetch_queued_.Ensure(state).exchange(1, std::memory_order_relaxed) != 0) return;
  std::weak_ptr<CacheCore> self = weak_from_this();
  BackgroundPool::Shared().AddTask([self, state] {
    if (std::shared_ptr<CacheCore> core = self.lock()) core->RunPrefetch(state);
  });
}

void CacheCore::RunPrefetch(StateId state) {
  if (cancelled_->load(std::memory_order_relaxed) || IsPublished(state)) return;
  // Best effort, as a plan step: the fill that needs the state reports what went wrong.
  try {
    const StateId twin = TwinFor(state);
    if (twin != state) {
      if (!IsPublished(twin)) RunPrefetch(twin);
      TryTwin(state, false);
      return;
    }
    if (TryShared(state)) return;
    bool owner = false;
    std::shared_ptr<ClassifyJob> job = StartJob(state, EntryOrigin::kPrefetched, &owner);
    if (!job || !owner) return;  // filled, or a fill is on it already
    job->Help();
  } catch (...) {
  }
}

void CacheCore::BuildPlan() {
  for (const auto& entry : PrecomputeOrder(*automaton_)) plan_.push_back(entry.first);
  plan_over_.store(plan_.empty(), std::memory_order_relaxed);
}

void CacheCore::StartPrecompute() {
  plan_over_.store(false, std::memory_order_relaxed);
  BackgroundPool::Shared().AddPlan(shared_from_this());
}

bool CacheCore::RunOne() {
  // Best effort: a rule the plan or a key builds may exceed an automaton limit; the step that
  // needs that rule reports it, background work just stops.
  try {
    return RunPlanStep();
  } catch (...) {
    plan_over_.store(true, std::memory_order_relaxed);
    return false;
  }
}

bool CacheCore::RunPlanStep() {
  std::call_once(plan_once_, [&] { BuildPlan(); });
  for (;;) {
    const size_t i = plan_next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= plan_.size() || cancelled_->load(std::memory_order_relaxed) || OverBudget()) {
      plan_over_.store(true, std::memory_order_relaxed);
      return false;
    }
    const StateId planned = plan_[i];
    if (IsPublished(planned) || TryTwin(planned, false)) continue;
    // A state with a twin whose entry is not there yet: the twin is classified in its place.
    const StateId state = TwinFor(planned);
    if (IsPublished(state)) continue;
    if (TryShared(state)) return true;
    bool owner = false;
    std::shared_ptr<ClassifyJob> job = StartJob(state, EntryOrigin::kBackground, &owner);
    if (!job || !owner) continue;  // filled, or another thread is on it
    job->Help();
    return true;
  }
}

bool CacheCore::Adopt(StateId state, std::shared_ptr<const StateMask> mask, size_t mapped_bytes) {
  return Publish(state, std::move(mask), EntryOrigin::kLoaded, false, mapped_bytes);
}

std::vector<std::pair<StateId, std::shared_ptr<const StateMask>>> CacheCore::Filled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<StateId, std::shared_ptr<const StateMask>>> out;
  out.assign(owners_.begin(), owners_.end());
  std::sort(out.begin(), out.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

MaskCacheStats CacheCore::Stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MaskCacheStats out = stats_;
  out.states = automaton_->num_states();
  out.masks_filled_ahead = masks_filled_ahead_.load(std::memory_order_relaxed);
  out.precompute_running = !plan_over_.load(std::memory_order_relaxed) &&
                           !cancelled_->load(std::memory_order_relaxed);
  return out;
}

void SetMaskBudget(size_t bytes) { g_budget.store(bytes, std::memory_order_relaxed); }
size_t MaskBudget() { return g_budget.load(std::memory_order_relaxed); }

}  // namespace gbnf::detail
