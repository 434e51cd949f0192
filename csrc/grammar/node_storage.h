// The arrays a grammar's nodes point into (Slice): children, code points, ranges and token
// texts, stored in chunks that never move, so a slice handed out while parsing stays valid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

template <typename T>
class ChunkedArray {
 public:
  // A copy of data[0, n) that lives as long as this array.
  Slice<T> Store(const T* data, size_t n) {
    if (n == 0) return {};
    if (n > capacity_ - used_) {
      // Larger runs than a chunk get a chunk of their own size; the rest of the old chunk is
      // left unused (at most one run's worth).
      capacity_ = std::max(n, kChunkElements);
      chunks_.emplace_back(new T[capacity_]);
      used_ = 0;
    }
    T* out = chunks_.back().get() + used_;
    std::copy(data, data + n, out);
    used_ += n;
    return Slice<T>(out, static_cast<uint32_t>(n));
  }

 private:
  static constexpr size_t kChunkElements = size_t{1} << 14;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

class NodeStorage {
 public:
  ChunkedArray<NodeId> children;
  ChunkedArray<uint32_t> codepoints;
  ChunkedArray<CodepointRange> ranges;
  ChunkedArray<char> text;

  std::string_view StoreText(std::string_view s) {
    const Slice<char> stored = text.Store(s.data(), s.size());
    return {stored.data(), stored.size()};
  }
};

}  // namespace gbnf::detail
