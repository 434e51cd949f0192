#include "automaton/utf8_ranges.h"

#include <algorithm>

namespace gbnf::detail {
namespace {

constexpr uint32_t kSurrogateLo = 0xD800;
constexpr uint32_t kSurrogateHi = 0xDFFF;
// Largest code point of each encoded length 1..4.
constexpr uint32_t kLengthMax[4] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};

std::vector<CodepointRange> Merge(std::vector<CodepointRange> v) {
  std::sort(v.begin(), v.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> out;
  for (const CodepointRange& r : v) {
    if (!out.empty() && r.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// The scalar values (no surrogates) in [0, kMaxCodepoint] outside the merged ranges `in`.
std::vector<CodepointRange> ComplementScalars(const std::vector<CodepointRange>& in) {
  std::vector<CodepointRange> holes = in;
  holes.push_back({kSurrogateLo, kSurrogateHi});
  holes = Merge(std::move(holes));
  std::vector<CodepointRange> out;
  uint32_t next = 0;
  for (const CodepointRange& r : holes) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return out;
}

void EmitAligned(uint32_t lo, uint32_t hi, std::vector<Utf8Sequence>* out) {
  uint8_t a[4];
  uint8_t b[4];
  int n = EncodeUtf8(lo, a);
  EncodeUtf8(hi, b);
  Utf8Sequence seq;
  seq.length = static_cast<uint8_t>(n);
  for (int i = 0; i < n; ++i) seq.ranges[i] = {a[i], b[i]};
  out->push_back(seq);
}

}  // namespace

int EncodeUtf8(uint32_t cp, uint8_t out[4]) {
  if (cp < 0x80) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

std::vector<CodepointRange> ClassCodepoints(Slice<CodepointRange> ranges, bool negated) {
  std::vector<CodepointRange> merged = Merge({ranges.begin(), ranges.end()});
  return negated ? ComplementScalars(merged) : merged;
}

std::vector<CodepointRange> AnyCodepoints() { return ComplementScalars({}); }

// Splits [lo, hi] until every piece has one encoded length and, for each continuation byte,
// covers either a single value of the bits above it or the full 6-bit span; then each piece is a
// product of byte ranges.
void AppendUtf8Sequences(uint32_t lo, uint32_t hi, std::vector<Utf8Sequence>* out) {
  if (lo > hi) return;
  for (uint32_t max : kLengthMax) {
    if (lo <= max && hi > max) {
      AppendUtf8Sequences(lo, max, out);
      AppendUtf8Sequences(max + 1, hi, out);
      return;
    }
  }
  uint8_t tmp[4];
  int n = EncodeUtf8(lo, tmp);
  for (int i = 1; i < n; ++i) {
    uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      AppendUtf8Sequences(lo, lo | m, out);
      AppendUtf8Sequences((lo | m) + 1, hi, out);
      return;
    }
    if ((hi & m) != m) {
      AppendUtf8Sequences(lo, (hi & ~m) - 1, out);
      AppendUtf8Sequences(hi & ~m, hi, out);
      return;
    }
  }
  EmitAligned(lo, hi, out);
}

}  // namespace gbnf::detail
