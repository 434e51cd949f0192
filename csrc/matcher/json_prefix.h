// Whether the start of a JSON text can still grow into a given value: the distinct-items mask
// filter asks it of the unfinished item against each earlier item, so that it tests only the
// tokens that could make the item a copy (csrc/mask/token_matcher.cc).
#pragma once

#include <string_view>

namespace gbnf::detail {

struct PrefixAgreement {
  // Some JSON text that starts with the prefix equals the value (false: none can; a prefix
  // this cannot read, or nested deeper than it goes, counts as possible).
  bool possible = false;
  // The prefix ends inside a string that is a value (not an object key), and `remainder` is
  // exactly what that string still needs, as UTF-8, to agree (not known after a cut escape).
  bool in_value_string = false;
  bool remainder_known = false;
  std::string_view remainder;  // points into the canonical form
};

// `prefix`: the start of one JSON value's text. `canonical`: a finished value's canonical form
// (json_canonical.h; a raw form, for text that is not JSON, agrees only by being possible).
PrefixAgreement AgreeWithValue(std::string_view prefix, std::string_view canonical);

// Appends to *out the UTF-8 that `part`, the inside of a JSON string, spells (escapes decoded).
// False when `part` stops inside an escape (or holds a malformed one): *out then has what came
// before it.
bool DecodeJsonStringPart(std::string_view part, std::string* out);

}  // namespace gbnf::detail
