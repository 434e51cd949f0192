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

}  // namespace gbnf::detail
