// Code point sets as UTF-8 byte-range sequences, so that a class like [^"\\] becomes a byte-level
// automaton that matches exactly the valid UTF-8 encodings of its members.
#pragma once

#include <cstdint>
#include <vector>

#include "gbnf_sampler/grammar.h"

namespace gbnf::detail {

struct ByteRange {
  uint8_t lo = 0;
  uint8_t hi = 0;
};

// All byte strings b[0..length) with ranges[i].lo <= b[i] <= ranges[i].hi.
struct Utf8Sequence {
  uint8_t length = 0;
  ByteRange ranges[4];
};

// The code points a class matches, sorted, merged and disjoint. A positive class keeps its
// ranges as written (surrogates included: an explicitly named code point is encoded plainly); a
// negated class is the complement within the Unicode scalar values (no surrogates).
std::vector<CodepointRange> ClassCodepoints(Slice<CodepointRange> ranges, bool negated);

// "." : every Unicode scalar value.
std::vector<CodepointRange> AnyCodepoints();

// Appends sequences that together match exactly the UTF-8 encodings of [lo, hi] (plain encoding,
// shortest form). Distinct sequences match disjoint byte strings.
void AppendUtf8Sequences(uint32_t lo, uint32_t hi, std::vector<Utf8Sequence>* out);

// Plain UTF-8 encoding of one code point (1 to 4 bytes, written to out); returns the length.
int EncodeUtf8(uint32_t cp, uint8_t out[4]);

}  // namespace gbnf::detail
