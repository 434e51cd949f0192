// Conversions for the mask-cache bindings (bind_mask.cc): statistics as dicts, cache files,
// and the test hooks that compare the fast classification with the reference.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "gbnf_sampler/compiled_grammar.h"

namespace gbnf::bindings {

pybind11::dict CacheStatsDict(const CompiledGrammar& compiled);
pybind11::dict SharedCacheStatsDict();
// The mask cache's fixed bounds, by name (python/gbnf_sampler/limits.py reads them).
pybind11::dict MaskLimitsDict();
// Entries written (the GIL released while writing); OSError on an I/O error.
size_t SaveCacheFile(const CompiledGrammar& compiled, const std::string& path);
// (entries loaded, "" or why the file was refused).
std::pair<size_t, std::string> LoadCacheFile(const CompiledGrammar& compiled,
                                             const std::string& path);
std::string CacheFileName(const CompiledGrammar& compiled);
// Test hooks: the classification of `state` (accepted token ids, dependent trie positions) by
// the reference walk or by the fast path split into `chunks` ranges, computed afresh; and the
// state's shared-cache key (None when it has none).
pybind11::tuple ClassifyForTest(const CompiledGrammar& compiled, StateId state,
                                bool reference, size_t chunks);
// Tests: the loop bytes of the first configuration of `state`'s isolated walk
// (mask/loop_bytes.h): the ASCII bytes taken, whether every multi-byte character is, and the
// budget (None for a loop).
pybind11::tuple LoopBytesForTest(const CompiledGrammar& compiled, StateId state);

// Benchmarks: the fastest of `repeat` classifications of `state` (the fast path in one part, or
// the reference), in nanoseconds of the calling thread's run, result conversion left out.
double ClassifyNanosForBench(const CompiledGrammar& compiled, StateId state, bool reference,
                             size_t repeat);
// The same through a ClassifyJob of `chunks` chunks that `helpers` threads help with and
// `rescuers` threads (and the caller) classify again (ClassifyJob::Rescue) at the same time.
pybind11::tuple ClassifyJobForTest(const CompiledGrammar& compiled, StateId state, size_t chunks,
                                   size_t helpers, size_t rescuers);
pybind11::object StateKeyForTest(const CompiledGrammar& compiled, StateId state, int level);
pybind11::object StoredStateKeyForTest(const CompiledGrammar& compiled, StateId state);

}  // namespace gbnf::bindings
