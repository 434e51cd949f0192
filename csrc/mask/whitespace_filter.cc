#include "mask/whitespace_filter.h"

#include <algorithm>
#include <mutex>
#include <string_view>

#include "support/bits.h"
#include "support/whitespace.h"

namespace gbnf::detail {
namespace {

struct Runs {
  uint32_t lead = 0;
  uint32_t inner = 0;  // longest run touching neither end
  uint32_t trail = 0;
  bool all = false;
};

Runs RunsOf(std::string_view bytes) {
  Runs r;
  size_t i = 0;
  while (i < bytes.size() && IsWhitespaceByte(static_cast<uint8_t>(bytes[i]))) ++i;
  r.lead = static_cast<uint32_t>(i);
  if (i == bytes.size()) {
    r.all = true;
    return r;
  }
  size_t j = bytes.size();
  while (j > i && IsWhitespaceByte(static_cast<uint8_t>(bytes[j - 1]))) --j;
  r.trail = static_cast<uint32_t>(bytes.size() - j);
  uint32_t run = 0;
  for (size_t k = i; k < j; ++k) {
    run = IsWhitespaceByte(static_cast<uint8_t>(bytes[k])) ? run + 1 : 0;
    r.inner = std::max(r.inner, run);
  }
  return r;
}

}  // namespace

WhitespaceFilter::WhitespaceFilter(const Vocab& vocab, uint32_t max_whitespace)
    : max_(max_whitespace) {
  const size_t n = vocab.size();
  const size_t words = WordsFor(n);
  always_.assign(words, 0);
  std::vector<std::vector<uint32_t>> by_key;  // tokens of each key below kDenseBudgets
  for (size_t id = 0; id < n; ++id) {
    const TokenId t = static_cast<TokenId>(id);
    uint32_t key = 0;
    if (!vocab.IsEos(t)) {
      const Runs r = RunsOf(vocab.Token(t));
      key = r.lead;  // the whole token when it is whitespace only
      if (r.inner > max_ || r.trail > max_ || key > max_) {
        fits_all_ = false;  // never fits: stays out of every set
        continue;
      }
    }
    SetBit(always_.data(), t);
    if (key >= kDenseBudgets) {
      sparse_.emplace_back(key, static_cast<uint32_t>(id));
      continue;
    }
    if (by_key.size() <= key) by_key.resize(key + 1);
    by_key[key].push_back(static_cast<uint32_t>(id));
  }
  // dense_[k] = tokens of key <= k, for the budgets where some token is still left out.
  const size_t budgets = sparse_.empty() ? (by_key.empty() ? 0 : by_key.size() - 1)
                                         : kDenseBudgets;
  std::vector<uint32_t> acc(words, 0);
  for (size_t k = 0; k < budgets; ++k) {
    if (k < by_key.size()) {
      for (uint32_t id : by_key[k]) SetBit(acc.data(), id);
    }
    dense_.push_back(acc);
  }
  std::sort(sparse_.begin(), sparse_.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;
  });
}

void WhitespaceFilter::Apply(uint32_t* words, uint32_t run) const {
  const uint32_t budget = run >= max_ ? 0 : max_ - run;
  if (budget < dense_.size()) {
    const std::vector<uint32_t>& keep = dense_[budget];
    for (size_t i = 0; i < keep.size(); ++i) words[i] &= keep[i];
    return;
  }
  if (!fits_all_) {
    for (size_t i = 0; i < always_.size(); ++i) words[i] &= always_[i];
  }
  for (const auto& [key, id] : sparse_) {
    if (key <= budget) break;
    ClearBit(words, id);
  }
}

std::shared_ptr<const WhitespaceFilter> WhitespaceFilter::Shared(
    const std::shared_ptr<const Vocab>& vocab, uint32_t max_whitespace) {
  struct Entry {
    std::weak_ptr<const Vocab> vocab;
    uint32_t max;
    std::shared_ptr<const WhitespaceFilter> filter;
  };
  static std::mutex mutex;
  static std::vector<Entry> entries;  // a few: one per live vocabulary and bound
  auto find = [&]() -> std::shared_ptr<const WhitespaceFilter> {  // under the lock
    for (const Entry& e : entries) {
      if (e.max == max_whitespace && e.vocab.lock() == vocab) return e.filter;
    }
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    // A dead vocabulary's entry goes (its address may be reused by a new one).
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const Entry& e) { return e.vocab.expired(); }),
                  entries.end());
    if (auto found = find()) return found;
  }
  // Built outside the lock; two threads racing on a new key both build, the first one is kept.
  auto filter = std::make_shared<const WhitespaceFilter>(*vocab, max_whitespace);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = find()) return found;
  entries.push_back({vocab, max_whitespace, filter});
  return filter;
}

size_t WhitespaceFilter::Bytes() const {
  size_t total = always_.size() * sizeof(uint32_t) + sparse_.size() * 2 * sizeof(uint32_t);
  for (const auto& d : dense_) total += d.size() * sizeof(uint32_t);
  return total;
}

}  // namespace gbnf::detail
