// UTF-8 helpers for the front end: strict validation, decoding and encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gbnf::detail {

// Offset of the first byte that is not part of valid UTF-8 (shortest form, no surrogates,
// <= U+10FFFF), or text.size() when the whole text is valid.
size_t FindInvalidUtf8(std::string_view text);

// Decodes the code point starting at text[pos] of valid UTF-8; sets *length to its byte count.
uint32_t DecodeUtf8(std::string_view text, size_t pos, size_t* length);

// Number of code points in valid UTF-8 text.
size_t CountCodepoints(std::string_view text);

// Strict UTF-8 (the text FindInvalidUtf8 accepts) as a byte DFA: kUtf8Start between characters,
// the others inside one (named by what the next byte must be), kUtf8Invalid after a byte no valid
// text has there. A byte string is a prefix of valid UTF-8 iff the DFA never reaches kUtf8Invalid.
enum Utf8State : uint8_t {
  kUtf8Start,
  kUtf8Tail1,    // one continuation byte 80-BF left
  kUtf8Tail2,    // two left
  kUtf8Tail3,    // three left
  kUtf8AfterE0,  // A0-BF, then one more (no overlong forms)
  kUtf8AfterED,  // 80-9F, then one more (no surrogates)
  kUtf8AfterF0,  // 90-BF, then two more (no overlong forms)
  kUtf8AfterF4,  // 80-8F, then two more (nothing above U+10FFFF)
  kUtf8Invalid,
};

Utf8State Utf8Next(Utf8State state, uint8_t byte);

// The bytes valid next in a state inside a character, [lo, hi] (kUtf8Start: the lead bytes
// C2-F4 of multi-byte characters; ASCII is left to the caller).
struct ByteRange {
  uint8_t lo;
  uint8_t hi;
};
ByteRange Utf8NextBytes(Utf8State state);

// Appends the UTF-8 encoding of cp (the plain algorithm; surrogates are encoded as 3 bytes).
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace gbnf::detail
