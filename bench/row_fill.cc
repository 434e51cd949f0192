// How a free-stretch mask row could be written: the cost of today's warm step in a state whose
// cached accepted set is (nearly) the whole vocabulary, next to the two cheaper writes proposed
// for the mask engine (see docs/notes/structural.md). Standalone: no gbnf-sampler code.
//
//   g++ -O3 -std=c++17 bench/row_fill.cc -o /tmp/row_fill && /tmp/row_fill
//
// Rows of 4008 / 4748 / 8192 int32 words (Llama-3 128k, Qwen2 152k, Gemma 3 262k tokens). Prints
// the median of 5 runs (each the mean of 100k fills) in microseconds and the ratio to today's.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MicrosPerFill(F fill) {
  constexpr int kFills = 100000;
  std::vector<double> runs;
  for (int run = 0; run < 5; ++run) {
    const auto start = Clock::now();
    for (int i = 0; i < kFills; ++i) {
      fill();
      asm volatile("" ::: "memory");
    }
    runs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                   kFills);
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

}  // namespace

int main() {
  for (size_t words : {size_t{4008}, size_t{4748}, size_t{8192}}) {
    std::vector<uint32_t> row(words);
    std::vector<uint32_t> accepted(words, 0xFFFFFFFFu);  // the state's cached accepted set
    std::vector<uint32_t> excluded;  // ids a free stretch refuses (invalid UTF-8 pieces...)
    for (uint32_t i = 0; i < 600; ++i) excluded.push_back((i * 7919u) % (words * 32));
    const double today = MicrosPerFill([&] {
      std::memset(row.data(), 0, words * 4);
      for (size_t j = 0; j < words; ++j) row[j] |= accepted[j];
    });
    const double copy = MicrosPerFill(
        [&] { std::memcpy(row.data(), accepted.data(), words * 4); });
    const double all_but = MicrosPerFill([&] {
      std::memset(row.data(), 0xFF, words * 4);
      for (uint32_t id : excluded) row[id >> 5] &= ~(uint32_t{1} << (id & 31));
    });
    std::printf("%5zu words: memset+OR %.3f us | memcpy %.3f us (%.2fx) | "
                "all-but-600 %.3f us (%.2fx)\n",
                words, today, copy, copy / today, all_but, all_but / today);
  }
  return 0;
}
