// The state of one compiled grammar's token-mask cache, shared (std::shared_ptr) by the grammar
// and by the background workers and classification jobs working for it, so that work in flight
// never outlives what it reads: it holds the automaton, the vocabulary and the trie bytes, and
// a dropped grammar only marks it cancelled.
//
// An entry is filled once, by the first of:
//   * the shared cache (level 2, shared_cache.h): a classification of an equal state key;
//   * a classification job (classify_job.h), started by the first thread that needs the entry
//     (a matcher's fill, or a background worker running the precompute plan); any other thread
//     that needs it meanwhile joins the job (helps with its chunks, then waits), so no entry is
//     classified twice;
//   * a cache file (Adopt).
// and published with one release store: the warm path is one acquire load (mask_cache.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gbnf_sampler/compiled_grammar.h"
#include "mask/background.h"
#include "mask/classify_job.h"
#include "mask/segmented_table.h"
#include "mask/state_key.h"
#include "mask/state_mask.h"

namespace gbnf::detail {

enum class EntryOrigin : uint8_t {
  kNone,
  kClassified,
  kBackground,
  kPrefetched,
  kShared,
  kLoaded,
  kTwin,
};

// States a key may span before a state is classified on its own (state_key.h).
inline constexpr size_t kMaxKeyStates = 4096;

class CacheCore : public BackgroundPlan, public std::enable_shared_from_this<CacheCore> {
 public:
  CacheCore(std::shared_ptr<const Automaton> automaton, std::shared_ptr<const Vocab> vocab,
            uint32_t max_state_size);
  ~CacheCore() override;
  CacheCore(const CacheCore&) = delete;
  CacheCore& operator=(const CacheCore&) = delete;

  // The entry of `state` if it is filled, else nullptr (one acquire load once its segment exists).
  const StateMask* FilledMaskOf(StateId state) const {
    const std::atomic<const StateMask*>* slot = published_.Find(state);
    return slot == nullptr ? nullptr : slot->load(std::memory_order_acquire);
  }
  const Automaton& automaton() const { return *automaton_; }
  const Vocab& vocab() const { return *vocab_; }
  uint32_t max_state_size() const { return max_state_size_; }

  // The entry of `state`, filled first if needed (foreground).
  const StateMask& Fill(StateId state);
  // Background: classifies the precompute plan's next state.
  bool RunOne() override;
  // Queues the precompute plan on the background workers.
  void StartPrecompute();
  // Prefetch (MaskCacheOptions::prefetch): set before any matcher uses the cache.
  void set_prefetch(bool on) { prefetch_ = on; }
  bool prefetch() const { return prefetch_; }
  // Queues the classification of `state` on a background worker, after the jobs being waited
  // for and before any plan, unless it was queued before: a matcher calls it after an accept
  // for each entry its next fill needs and lacks, and that fill then finds the entry filled
  // or joins the job in flight.
  void Prefetch(StateId state);
  // A matcher's fill took the mask a worker filled ahead (stats).
  void CountMaskFilledAhead() { masks_filled_ahead_.fetch_add(1, std::memory_order_relaxed); }
  // The grammar is gone: background work and unfinished jobs stop.
  void Cancel();

  // Fills `state` with a mask from elsewhere (a cache file, `mapped_bytes` of it in a mapping);
  // false if the state was filled already.
  bool Adopt(StateId state, std::shared_ptr<const StateMask> mask, size_t mapped_bytes);
  // Every filled entry, by state.
  std::vector<std::pair<StateId, std::shared_ptr<const StateMask>>> Filled() const;
  MaskCacheStats Stats() const;

 private:
  bool Publish(StateId state, std::shared_ptr<const StateMask> mask, EntryOrigin origin,
               bool in_shared, size_t mapped_bytes);
  bool TryShared(StateId state);
  // Fills `state` with the entry of its twin in an earlier copy of a repetition
  // (Automaton::TwinBelow), filling the twin first when `fill`; false when it has none, or the
  // twin's entry is not there (and not `fill`) or says nothing of how far its walk read.
  bool TryTwin(StateId state, bool fill);
  // The twin `state` takes its entry from: the nearest one below whose entry is there (a walk
  // as long as the text moved since), else the lowest; `state` itself when it has none.
  StateId TwinFor(StateId state) const;
  void SetReach(StateId state, int level);
  std::shared_ptr<ClassifyJob> StartJob(StateId state, EntryOrigin origin, bool* owner);
  // Stores a classification of `state` in the shared cache under its key; the stored one.
  std::shared_ptr<const StateMask> Share(StateId state, std::shared_ptr<const StateMask> mask,
                                         const std::vector<StateId>& met, bool* shared);
  void DropJob(StateId state, const std::shared_ptr<ClassifyJob>& job);
  void RunPrefetch(StateId state);
  void BuildPlan();
  bool RunPlanStep();
  bool IsPublished(StateId state) const { return FilledMaskOf(state) != nullptr; }

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const Vocab> vocab_;
  uint32_t max_state_size_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  // Per state (grows with the automaton, which builds rules on first reach): null at first.
  SegmentedTable<std::atomic<const StateMask*>> published_;
  SegmentedTable<std::atomic<uint8_t>> unkeyed_;  // 1: the state has no shared key
  SegmentedTable<std::atomic<uint8_t>> prefetch_queued_;  // 1: Prefetch queued the state once
  // Per filled state: 1 + the key-ladder radius its classification read within (0: unknown).
  SegmentedTable<std::atomic<uint32_t>> reach_;
  uint32_t twin_radius_ = 0;  // the ladder's largest radius: no walk reads further
  bool prefetch_ = false;
  std::atomic<size_t> masks_filled_ahead_{0};

  mutable std::mutex mutex_;  // the fields below
  std::unordered_map<StateId, std::shared_ptr<const StateMask>> owners_;
  std::unordered_map<StateId, std::shared_ptr<ClassifyJob>> jobs_;
  MaskCacheStats stats_;

  std::once_flag plan_once_;
  std::vector<StateId> plan_;
  std::atomic<size_t> plan_next_{0};
  std::atomic<bool> plan_over_{true};
};

// Bytes of every live grammar's filled entries (mapped ones aside): with the shared cache's, what
// the memory budget bounds.
size_t LiveEntryBytes();
void SetMaskBudget(size_t bytes);
size_t MaskBudget();

}  // namespace gbnf::detail
