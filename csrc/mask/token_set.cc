#include "mask/token_set.h"

#include <cstring>
#include <utility>

namespace gbnf::detail {

void TokenSet::Own(std::vector<uint32_t>&& words, bool bitset) {
  owned_ = std::move(words);
  data_ = owned_.data();
  num_words_ = owned_.size();
  bitset_ = bitset;
  FindUniformRuns();
}

void TokenSet::FindUniformRuns() {
  uniform_.clear();
  if (!bitset_ || num_words_ < kMinRunSearchWords) return;
  size_t w = 0;
  while (w < num_words_) {
    const uint32_t value = data_[w];
    size_t end = w + 1;
    if (value == 0 || value == ~uint32_t{0}) {
      while (end < num_words_ && data_[end] == value) ++end;
      if (end - w >= kMinUniformRunWords) {
        uniform_.push_back({static_cast<uint32_t>(w), static_cast<uint32_t>(end), value});
      }
    }
    w = end;
  }
  uniform_.shrink_to_fit();
}

TokenSet::TokenSet(const std::vector<uint32_t>& sorted, size_t universe) : size_(sorted.size()) {
  // A list costs a word a member, a bitset a bit per element of the universe.
  if (sorted.size() * kWordBits < universe) {
    Own(std::vector<uint32_t>(sorted), false);
    return;
  }
  std::vector<uint32_t> bits(WordsFor(universe), 0);
  for (uint32_t v : sorted) SetBit(bits.data(), v);
  Own(std::move(bits), true);
}

TokenSet::TokenSet(std::vector<uint32_t>&& bits, size_t count, size_t universe) : size_(count) {
  if (count * kWordBits >= universe) {
    Own(std::move(bits), true);
    return;
  }
  std::vector<uint32_t> list;
  list.reserve(count);
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint32_t word = bits[w]; word != 0; word &= word - 1) {
      list.push_back(static_cast<uint32_t>(w * kWordBits + CountTrailingZeros(word)));
    }
  }
  Own(std::move(list), false);
}

TokenSet TokenSet::View(const uint32_t* words, size_t num_words, size_t count, bool bitset,
                        std::shared_ptr<const void> keep) {
  TokenSet out;
  out.keep_ = std::move(keep);
  out.data_ = words;
  out.num_words_ = num_words;
  out.size_ = count;
  out.bitset_ = bitset;
  out.FindUniformRuns();
  return out;
}

TokenSet& TokenSet::operator=(const TokenSet& o) {
  if (this == &o) return *this;
  keep_ = o.keep_;
  size_ = o.size_;
  if (o.keep_ != nullptr) {
    owned_.clear();
    data_ = o.data_;
    num_words_ = o.num_words_;
    bitset_ = o.bitset_;
    uniform_ = o.uniform_;
  } else {
    Own(std::vector<uint32_t>(o.data_, o.data_ + o.num_words_), o.bitset_);
  }
  return *this;
}

TokenSet& TokenSet::operator=(TokenSet&& o) noexcept {
  if (this == &o) return *this;
  // A moved vector keeps its buffer, so data_ stays valid for owned words.
  owned_ = std::move(o.owned_);
  keep_ = std::move(o.keep_);
  uniform_ = std::move(o.uniform_);
  data_ = o.data_;
  num_words_ = o.num_words_;
  size_ = o.size_;
  bitset_ = o.bitset_;
  o.data_ = nullptr;
  o.num_words_ = 0;
  o.size_ = 0;
  return *this;
}

std::vector<uint32_t> TokenSet::Members() const {
  if (!bitset_) return std::vector<uint32_t>(data_, data_ + num_words_);
  std::vector<uint32_t> out;
  out.reserve(size_);
  for (size_t w = 0; w < num_words_; ++w) {
    for (uint32_t word = data_[w]; word != 0; word &= word - 1) {
      out.push_back(static_cast<uint32_t>(w * kWordBits + CountTrailingZeros(word)));
    }
  }
  return out;
}

void TokenSet::OrInto(uint32_t* words) const {
  const uint32_t* src = data_;
  const size_t n = num_words_;
  if (bitset_) {
    for (size_t i = 0; i < n; ++i) words[i] |= src[i];
    return;
  }
  for (size_t i = 0; i < n; ++i) SetBit(words, src[i]);
}

void TokenSet::CopyInto(uint32_t* words) const {
  size_t copied = 0;  // words[0, copied) are written
  for (const UniformRun& run : uniform_) {
    std::memcpy(words + copied, data_ + copied, (run.begin - copied) * sizeof(uint32_t));
    std::memset(words + run.begin, run.value == 0 ? 0 : 0xFF,
                (run.end - run.begin) * sizeof(uint32_t));
    copied = run.end;
  }
  std::memcpy(words + copied, data_ + copied, (num_words_ - copied) * sizeof(uint32_t));
}

}  // namespace gbnf::detail
