// Canonical bytes of a JSON value, equal for two texts exactly when JSON Schema's uniqueItems
// (as Python's `jsonschema` checks it) calls the values equal: strings by decoded code points,
// objects whatever the key order (a repeated key keeps its last value, as json.loads does),
// numbers as Python compares what json.loads returns (integers exactly, other numbers as the
// nearest double, 1 == 1.0, 1e400 == 2e400 == inf).
#pragma once

#include <string>
#include <string_view>

namespace gbnf::detail {

// Containers nested deeper than this are compared by their raw text (their canonical form
// would need more recursion than we allow on the matcher's path).
inline constexpr int kMaxCanonicalDepth = 256;

// Appends the canonical form of `text` (one JSON value, surrounding whitespace allowed) to
// *out. Text that is not one JSON value is appended raw after a marker that no canonical form
// starts with, so it equals only the same bytes.
void AppendCanonicalJson(std::string_view text, std::string* out);

}  // namespace gbnf::detail
