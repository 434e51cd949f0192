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

// Appends the UTF-8 encoding of cp (the plain algorithm; surrogates are encoded as 3 bytes).
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace gbnf::detail
