#include "bindings/mask_shims.h"

#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mask/cache_core.h"
#include "mask/classify_job.h"
#include "mask/config_walker.h"
#include "mask/fill_ahead.h"
#include "mask/loop_bytes.h"
#include "mask/mask_cache.h"
#include "mask/mask_file.h"
#include "mask/state_key.h"
#include "mask/state_mask.h"

namespace py = pybind11;

namespace gbnf::bindings {

py::dict CacheStatsDict(const CompiledGrammar& compiled) {
  const MaskCacheStats s = compiled.CacheStats();
  py::dict d;
  d["states"] = s.states;
  d["filled"] = s.filled;
  d["classified"] = s.classified;
  d["background"] = s.background;
  d["prefetched"] = s.prefetched;
  d["masks_filled_ahead"] = s.masks_filled_ahead;
  d["shared"] = s.shared;
  d["loaded"] = s.loaded;
  d["twins"] = s.twins;
  d["bytes"] = s.bytes;
  d["shared_bytes"] = s.shared_bytes;
  d["mapped_bytes"] = s.mapped_bytes;
  d["precompute_running"] = s.precompute_running;
  return d;
}

py::dict SharedCacheStatsDict() {
  const SharedMaskCacheStats s = GetSharedMaskCacheStats();
  py::dict d;
  d["entries"] = s.entries;
  d["bytes"] = s.bytes;
  d["limit_bytes"] = s.limit_bytes;
  d["hits"] = s.hits;
  d["live_entry_bytes"] = detail::LiveEntryBytes();
  return d;
}

py::dict MaskLimitsDict() {
  py::dict d;
  d["max_key_states"] = detail::kMaxKeyStates;
  d["max_walk_configs"] = detail::ConfigWalker::kMaxConfigs;
  d["max_walk_scopes"] = detail::ConfigWalker::kMaxScopes;
  d["max_classify_chunks"] = detail::ClassifyJob::kMaxChunks;
  d["fill_ahead_patience_us"] = detail::FillAhead::kPatience.count();
  d["max_class_runs"] = TokenTrie::kMaxClassRuns;
  d["min_chunk_positions"] = detail::ClassifyJob::kMinChunkPositions;
  d["mask_file_version"] = detail::kMaskFileVersion;
  d["background_nice"] = detail::BackgroundPool::kBackgroundNice;
  d["background_workers"] = detail::BackgroundPool::Shared().workers();
  return d;
}

size_t SaveCacheFile(const CompiledGrammar& compiled, const std::string& path) {
  try {
    py::gil_scoped_release release;
    return detail::SaveMaskFile(compiled, path);
  } catch (const std::runtime_error& e) {
    throw py::value_error(e.what());  // re-raised as OSError by the Python layer
  }
}

std::pair<size_t, std::string> LoadCacheFile(const CompiledGrammar& compiled,
                                             const std::string& path) {
  py::gil_scoped_release release;
  detail::MaskFileLoad r = detail::LoadMaskFile(compiled, path);
  return {r.loaded, r.error};
}

std::string CacheFileName(const CompiledGrammar& compiled) {
  py::gil_scoped_release release;
  return detail::MaskFileName(compiled);
}

py::tuple ClassifyForTest(const CompiledGrammar& compiled, StateId state, bool reference,
                          size_t chunks) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  if (chunks == 0) throw py::value_error("chunks must be >= 1");
  detail::StateMask mask;
  {
    py::gil_scoped_release release;
    const TokenTrie& trie = compiled.vocab().trie();
    const uint32_t mss = compiled.limits().max_state_size;
    if (reference) {
      mask = detail::ClassifyState(compiled.automaton_ptr(), trie, state, mss);
    } else {
      std::vector<detail::StateMaskPart> parts(chunks);
      for (size_t c = 0; c < chunks; ++c) {
        detail::ClassifyRange(compiled.automaton_ptr(), trie, state, mss,
                              trie.size() * c / chunks, trie.size() * (c + 1) / chunks, &parts[c]);
      }
      mask = detail::MergeParts(parts, trie);
    }
  }
  return py::make_tuple(mask.accepted.Members(), mask.dependent.Members());
}

py::tuple LoopBytesForTest(const CompiledGrammar& compiled, StateId state) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  detail::Recognizer recognizer(compiled.automaton_ptr(), compiled.limits().max_state_size);
  recognizer.ResetIsolated(state);
  detail::ConfigWalker walker;
  walker.Begin(&recognizer, compiled.vocab().max_token_length());
  detail::LoopFinder finder;
  const detail::LoopBytes loops = finder.At(walker, 0);
  walker.End();
  std::string ascii;
  for (uint32_t b = 0; b < 128; ++b) {
    if ((loops.ascii[b >> 6] >> (b & 63)) & 1) ascii.push_back(static_cast<char>(b));
  }
  const py::object budget = loops.budget == detail::LoopBytes::kUnbounded
                                ? py::object(py::none())
                                : py::object(py::int_(loops.budget));
  return py::make_tuple(py::bytes(ascii), loops.non_ascii, budget);
}

double ClassifyNanosForBench(const CompiledGrammar& compiled, StateId state, bool reference,
                             size_t repeat) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  if (repeat == 0) throw py::value_error("repeat must be >= 1");
  py::gil_scoped_release release;
  const TokenTrie& trie = compiled.vocab().trie();
  const uint32_t mss = compiled.limits().max_state_size;
  double best = 0;
  for (size_t r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const detail::StateMask mask =
        reference ? detail::ClassifyState(compiled.automaton_ptr(), trie, state, mss)
                  : detail::ClassifyStateFast(compiled.automaton_ptr(), trie, state, mss);
    const double ns = std::chrono::duration<double, std::nano>(
                          std::chrono::steady_clock::now() - t0).count();
    if (r == 0 || ns < best) best = ns;
  }
  return best;
}

py::tuple ClassifyJobForTest(const CompiledGrammar& compiled, StateId state, size_t chunks,
                             size_t helpers, size_t rescuers) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  if (chunks == 0 || chunks > detail::ClassifyJob::kMaxChunks) {
    throw py::value_error("chunks must be in [1, ClassifyJob::kMaxChunks]");
  }
  if (helpers + rescuers > 16) throw py::value_error("at most 16 helper and rescuer threads");
  std::shared_ptr<const detail::StateMask> mask;
  {
    py::gil_scoped_release release;
    auto job = std::make_shared<detail::ClassifyJob>(
        compiled.automaton_ptr(), compiled.vocab_ptr(), state, compiled.limits().max_state_size,
        chunks, nullptr,
        [&mask](std::shared_ptr<const detail::StateMask> m, const std::vector<StateId>&) {
          mask = m;
        });
    std::vector<std::thread> threads;
    for (size_t i = 0; i < helpers + rescuers; ++i) {
      threads.emplace_back([&job, rescue = i >= helpers] {
        if (rescue) {
          job->Rescue();
        } else {
          job->Help();
        }
      });
    }
    job->Rescue();  // this thread too: the job is done when it returns
    job->Wait();
    for (std::thread& t : threads) t.join();
  }
  return py::make_tuple(mask->accepted.Members(), mask->dependent.Members());
}

py::object StateKeyForTest(const CompiledGrammar& compiled, StateId state, int level) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  if (level < 0 || level >= detail::kKeyLevels) throw py::value_error("level out of range");
  detail::StateKey key;
  if (!detail::ComputeStateKey(compiled.automaton(), state, detail::kMaxKeyStates,
                               compiled.vocab().max_token_length(), level, &key)) {
    return py::none();
  }
  return py::bytes(reinterpret_cast<const char*>(key.code.data()), key.code.size() * 4);
}

py::object StoredStateKeyForTest(const CompiledGrammar& compiled, StateId state) {
  if (state >= compiled.automaton().num_states()) throw py::value_error("state out of range");
  // As a classification job stores it: the states a fast classification met give the level.
  const TokenTrie& trie = compiled.vocab().trie();
  detail::StateMaskPart part;
  detail::ClassifyRange(compiled.automaton_ptr(), trie, state, compiled.limits().max_state_size,
                        0, trie.size(), &part);
  detail::StoredKey stored;
  if (!detail::ComputeStoredKey(compiled.automaton(), state, detail::kMaxKeyStates,
                                compiled.vocab().max_token_length(), part.states_met, &stored)) {
    return py::none();
  }
  const std::vector<uint32_t>& code = stored.key.code;
  return py::make_tuple(
      stored.level,
      py::bytes(reinterpret_cast<const char*>(code.data()), code.size() * 4));
}

}  // namespace gbnf::bindings
