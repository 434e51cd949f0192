// JSON string escapes (the bytes after a backslash) decoded to UTF-8: one reader for the
// canonical forms of whole values and for the prefixes the masks compare against them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gbnf::detail {

enum class JsonEscape {
  kDecoded,     // the character was appended
  kIncomplete,  // the text stops inside the escape (or before a surrogate pair's second half)
  kInvalid,     // not a JSON escape
};

// Decodes the escape whose letter is text[*pos] (just after the backslash) into *out and moves
// *pos past it. A \uD800-\uDBFF followed by an escaped low surrogate is one character; a lone
// surrogate stays one code point (as in Python's str). `prefix`: the text may stop early, so a
// high surrogate whose next escape is not all there yet is kIncomplete.
JsonEscape DecodeJsonEscape(std::string_view text, size_t* pos, bool prefix, std::string* out);

}  // namespace gbnf::detail
