// Python bindings of the compiled grammar and the token-level matcher. Ergonomics (argument
// checks, defaults, the compile cache) live in python/gbnf_sampler/compiled.py and matcher.py;
// bitmask checks in arrays.cc.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings/arrays.h"
#include "bindings/bindings.h"
#include "bindings/exclusive.h"
#include "bindings/mask_shims.h"
#include "bindings/shims.h"
#include "gbnf_sampler/batch.h"
#include "gbnf_sampler/compiled_grammar.h"
#include "gbnf_sampler/token_matcher.h"
#include "mask/draft_plan.h"
#include "mask/state_key.h"
#include "mask/mask_cache.h"
#include "mask/precompute_order.h"
#include "mask/thread_pool.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

using PyTokenMatcher = Exclusive<TokenMatcher>;

std::shared_ptr<CompiledGrammar> Compile(std::shared_ptr<Automaton> automaton,
                                         std::shared_ptr<Vocab> vocab, uint32_t max_state_size,
                                         uint32_t max_rollback, size_t max_history_bytes,
                                         int64_t max_whitespace, bool precompute,
                                         bool prefetch) {
  const MatcherLimits limits =
      ToMatcherLimits(max_state_size, max_rollback, max_history_bytes, max_whitespace);
  MaskCacheOptions options;
  options.precompute = precompute;
  options.prefetch = prefetch;
  py::gil_scoped_release release;
  return std::const_pointer_cast<CompiledGrammar>(
      CompiledGrammar::Compile(std::move(automaton), std::move(vocab), limits, options));
}

enum class FillKind { kCached, kReference, kTimed };

// Fills row `index`; kTimed returns the nanoseconds of TokenMatcher::FillMask alone (what the
// native llama.cpp sampler pays per step, without this call's argument checks), else 0.
double FillMask(PyTokenMatcher& m, const py::object& bitmask_obj, int64_t index, FillKind kind) {
  py::array bitmask = BitmaskArray(bitmask_obj, "fill_mask");
  const MaskRows row = MaskRowAt(bitmask, index);
  // A fill from cached entries is a copy of a row or two: the GIL stays held (releasing and
  // taking it back costs about as much as the copy).
  const auto cheap = [kind](const TokenMatcher& self) {
    return kind != FillKind::kReference && self.FillIsCached();
  };
  return RunUnless(m, cheap, [&](TokenMatcher& self) {
    if (kind == FillKind::kReference) {
      self.FillMaskReference(row.words, row.num_words);
      return 0.0;
    }
    if (kind == FillKind::kCached) {
      self.FillMask(row.words, row.num_words);
      return 0.0;
    }
    const auto start = std::chrono::steady_clock::now();
    self.FillMask(row.words, row.num_words);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
        .count();
  });
}

bool AcceptToken(PyTokenMatcher& m, TokenId token_id) {
  const size_t length = m.compiled().vocab().Token(token_id).size();  // VocabError if outside
  return Run(m, length, [token_id](TokenMatcher& self) { return self.AcceptToken(token_id); });
}

std::vector<bool> PlanDraftFor(PyTokenMatcher& m, const std::vector<int32_t>& tokens) {
  std::unique_ptr<bool[]> only(new bool[tokens.size() + 1]());
  const size_t n = Run(m, kReleaseGilWork, [&](TokenMatcher& self) {
    return PlanDraft(self, tokens.data(), tokens.size(), only.get());
  });
  return std::vector<bool>(only.get(), only.get() + n);
}

// Cores this process may run on (its CPU affinity; the shared pool is sized by the machine).
size_t UsableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
#endif
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

// matchers[i] fills targets[i] on the shared pool; in the calling thread when there is one
// matcher or one usable core (a hand-off to a worker on the same core only adds switches).
void FillRows(const std::vector<TokenMatcher*>& matchers, const std::vector<uint32_t*>& targets,
              size_t num_words) {
  if (matchers.size() <= 1 || UsableCores() <= 1) {
    for (size_t i = 0; i < matchers.size(); ++i) matchers[i]->FillMask(targets[i], num_words);
    return;
  }
  detail::ThreadPool::Shared().ParallelFor(
      matchers.size(), [&](size_t i) { matchers[i]->FillMask(targets[i], num_words); });
}

// rows: None fills row i for matchers[i]; else row rows[i] (the rows an engine's batch uses).
void FillMasksBatch(const std::vector<PyTokenMatcher*>& matchers, const py::object& bitmask_obj,
                    const std::optional<std::vector<int64_t>>& rows) {
  py::array bitmask = BitmaskArray(bitmask_obj, "fill_masks");
  std::vector<uint32_t*> targets;
  if (rows.has_value()) {
    if (rows->size() != matchers.size()) {
      throw py::value_error("fill_masks: " + std::to_string(matchers.size()) +
                            " matchers but " + std::to_string(rows->size()) + " rows");
    }
    targets = MaskRowPointers(bitmask, *rows);
  } else {
    const MaskRows mask_rows = MaskRowsFor(bitmask, matchers.size());
    for (size_t i = 0; i < matchers.size(); ++i) {
      targets.push_back(mask_rows.words + i * mask_rows.stride);
    }
  }
  if (targets.empty()) return;
  const size_t num_words = static_cast<size_t>(bitmask.shape(bitmask.ndim() - 1));
  ExclusiveBatch<TokenMatcher> batch(matchers);
  py::gil_scoped_release release;
  FillRows(batch.values(), targets, num_words);
}

std::vector<bool> AcceptTokensBatch(const std::vector<PyTokenMatcher*>& matchers,
                                    const std::vector<TokenId>& token_ids) {
  ExclusiveBatch<TokenMatcher> batch(matchers);
  std::vector<uint8_t> accepted;
  {
    py::gil_scoped_release release;
    accepted = AcceptTokens(batch.values(), token_ids);
  }
  return std::vector<bool>(accepted.begin(), accepted.end());
}

}  // namespace

void BindMask(py::module_& m) {
  m.def("fill_masks", &FillMasksBatch, py::arg("matchers"), py::arg("bitmask"),
        py::arg("rows") = py::none());
  m.def("bitmask_array",
        [](const py::object& bitmask, const std::string& fn) {
          return BitmaskArray(bitmask, fn.c_str());
        },
        py::arg("bitmask"), py::arg("fn") = "bitmask");
  m.def("accept_tokens", &AcceptTokensBatch, py::arg("matchers"), py::arg("token_ids"));
  m.def("set_mask_memory_budget", &SetMaskMemoryBudget, py::arg("bytes"));
  m.def("mask_memory_budget", &MaskMemoryBudget);
  m.def("shared_mask_cache_stats", &SharedCacheStatsDict);
  m.def("clear_shared_mask_cache", &ClearSharedMaskCache);
  m.attr("MASK_LIMITS") = MaskLimitsDict();
  py::class_<CompiledGrammar, std::shared_ptr<CompiledGrammar>>(m, "CompiledGrammar")
      .def_static("compile", &Compile, py::arg("automaton"), py::arg("vocab"),
                  py::arg("max_state_size"), py::arg("max_rollback"),
                  py::arg("max_history_bytes"), py::arg("max_whitespace"),
                  py::arg("precompute"), py::arg("prefetch"))
      .def_property_readonly("vocab_size",
                             [](const CompiledGrammar& c) { return c.vocab().size(); })
      .def_property_readonly("cache_bytes", &CompiledGrammar::CacheBytes)
      .def_property_readonly("cached_states", &CompiledGrammar::CachedStates)
      .def("state_mask_sizes", &StateMaskSizes)
      .def("_state_filled",
           [](const CompiledGrammar& c, StateId state) {
             return c.mask_cache().FilledMaskOf(state) != nullptr;
           })
      .def("cache_stats", &CacheStatsDict)
      .def(
          "precompute",
          [](const CompiledGrammar& c, double seconds) {
            if (!(seconds >= 0) || seconds > 86400) {
              throw py::value_error("precompute: seconds must be in [0, 86400], got " +
                                    std::to_string(seconds));
            }
            const auto budget = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::duration<double>(seconds));
            py::gil_scoped_release release;
            return c.Precompute(budget);
          },
          py::arg("seconds"))
      .def("_precompute_plan",
           [](const CompiledGrammar& c) { return detail::PrecomputeOrder(c.automaton()); })
      .def("save_cache", &SaveCacheFile, py::arg("path"))
      .def("load_cache", &LoadCacheFile, py::arg("path"))
      .def_property_readonly("cache_file_name", &CacheFileName)
      .def("_classify", &ClassifyForTest, py::arg("state"), py::arg("reference"),
           py::arg("chunks"))
      .def("_loop_bytes", &LoopBytesForTest, py::arg("state"))
      .def("_classify_ns", &ClassifyNanosForBench, py::arg("state"), py::arg("reference"),
           py::arg("repeat"))
      .def("_classify_job", &ClassifyJobForTest, py::arg("state"), py::arg("chunks"),
           py::arg("helpers"), py::arg("rescuers"))
      .def("_state_key", &StateKeyForTest, py::arg("state"), py::arg("level"))
      .def("_stored_state_key", &StoredStateKeyForTest, py::arg("state"))
      .def("_twin_below",
           [](const CompiledGrammar& c, StateId state, uint32_t radius) {
             if (state >= c.automaton().num_states()) {
               throw py::value_error("state out of range");
             }
             return c.automaton().TwinBelow(state, radius);
           },
           py::arg("state"), py::arg("radius"))
      .def_property_readonly("_key_radii", [](const CompiledGrammar& c) {
        const size_t longest = c.vocab().max_token_length();
        std::vector<uint32_t> radii;
        for (int l = 0; l <= detail::TopKeyLevel(longest); ++l) {
          radii.push_back(detail::KeyRadius(l, longest));
        }
        return radii;
      })
      .def_property_readonly("num_states", [](const CompiledGrammar& c) {
        c.automaton().BuildAll();  // the whole automaton's states
        return c.automaton().num_states();
      });

  py::class_<PyTokenMatcher>(m, "TokenMatcher")
      .def(py::init([](std::shared_ptr<CompiledGrammar> c) {
             return PyTokenMatcher::Wrap(TokenMatcher(std::move(c)));
           }),
           py::arg("compiled"))
      .def("accept_token", &AcceptToken, py::arg("token_id"))
      .def("accept_bytes",
           [](PyTokenMatcher& self, const py::bytes& data) {
             const std::string_view view = BytesView(data);
             return Run(self, view.size(), [view](TokenMatcher& t) { return t.AcceptBytes(view); });
           },
           py::arg("data"))
      .def("can_terminate",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& t) { return t.CanTerminate(); });
           })
      .def("is_terminated",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& t) { return t.IsTerminated(); });
           })
      .def("rollback",
           [](PyTokenMatcher& self, size_t n) {
             Run(self, 1, [n](TokenMatcher& t) { t.Rollback(n); });
           },
           py::arg("n"))
      .def_property_readonly("rollback_available",
                             [](PyTokenMatcher& self) {
                               return Run(self, 0, [](TokenMatcher& t) {
                                 return t.RollbackAvailable();
                               });
                             })
      .def("fork",
           [](PyTokenMatcher& self) {
             return PyTokenMatcher::Wrap(
                 Run(self, kReleaseGilWork, [](TokenMatcher& t) { return t.Fork(); }));
           })
      .def("reset", [](PyTokenMatcher& self) { Run(self, 0, [](TokenMatcher& t) { t.Reset(); }); })
      .def("forced_bytes",
           [](PyTokenMatcher& self) {
             return py::bytes(
                 Run(self, kReleaseGilWork, [](TokenMatcher& t) { return t.ForcedBytes(); }));
           })
      .def("plan_draft", &PlanDraftFor, py::arg("tokens"))
      .def("fill_mask",
           [](PyTokenMatcher& self, const py::object& bitmask, int64_t index) {
             FillMask(self, bitmask, index, FillKind::kCached);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("fill_mask_reference",
           [](PyTokenMatcher& self, const py::object& bitmask, int64_t index) {
             FillMask(self, bitmask, index, FillKind::kReference);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("_fill_mask_ns",
           [](PyTokenMatcher& self, const py::object& bitmask, int64_t index) {
             return FillMask(self, bitmask, index, FillKind::kTimed);
           },
           py::arg("bitmask"), py::arg("index"))
      .def("allowed_tokens",
           [](PyTokenMatcher& self) {
             return ToInt32Array(
                 Run(self, kReleaseGilWork, [](TokenMatcher& t) { return t.AllowedTokens(); }));
           })
      .def("item_states",
           [](PyTokenMatcher& self) {
             return Run(self, 0, [](TokenMatcher& t) { return t.ItemStates(); });
           })
      .def("rule_stacks",
           [](PyTokenMatcher& self, size_t limit) {
             return Run(self, 0, [limit](TokenMatcher& t) { return t.RuleStacks(limit); });
           },
           py::arg("limit"))
      .def_property_readonly("mask_words", &TokenMatcher::MaskWords)
      .def_property_readonly("state_size", [](PyTokenMatcher& self) {
        return Run(self, 0, [](TokenMatcher& t) { return t.StateSize(); });
      });
}

}  // namespace gbnf::bindings
