#include "support/json_escape.h"

#include <cstdint>

#include "support/utf8.h"

namespace gbnf::detail {
namespace {

// Four hex digits at text[*pos] (moved past them); -1 when they are not all there or not hex.
int Hex4(std::string_view text, size_t* pos) {
  if (text.size() - *pos < 4) return -1;
  int v = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = text[(*pos)++];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v |= c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v |= c - 'A' + 10;
    } else {
      return -1;
    }
  }
  return v;
}

}  // namespace

JsonEscape DecodeJsonEscape(std::string_view text, size_t* pos, bool prefix, std::string* out) {
  if (*pos >= text.size()) return JsonEscape::kIncomplete;
  const char c = text[(*pos)++];
  switch (c) {
    case '"': case '\\': case '/': out->push_back(c); return JsonEscape::kDecoded;
    case 'b': out->push_back('\b'); return JsonEscape::kDecoded;
    case 'f': out->push_back('\f'); return JsonEscape::kDecoded;
    case 'n': out->push_back('\n'); return JsonEscape::kDecoded;
    case 'r': out->push_back('\r'); return JsonEscape::kDecoded;
    case 't': out->push_back('\t'); return JsonEscape::kDecoded;
    case 'u': break;
    default: return JsonEscape::kInvalid;
  }
  const size_t digits = *pos;
  const int hi = Hex4(text, pos);
  if (hi < 0) {
    return text.size() - digits < 4 ? JsonEscape::kIncomplete : JsonEscape::kInvalid;
  }
  uint32_t cp = static_cast<uint32_t>(hi);
  if (hi >= 0xD800 && hi < 0xDC00) {
    const std::string_view rest = text.substr(*pos);
    const size_t seen = rest.size() < 2 ? rest.size() : 2;
    if (prefix && rest.size() < 6 && rest.substr(0, seen) == std::string_view("\\u", seen)) {
      return JsonEscape::kIncomplete;  // an escaped low surrogate may still follow
    }
    if (rest.substr(0, 2) == "\\u") {
      size_t after = *pos + 2;
      const int lo = Hex4(text, &after);
      if (lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((static_cast<uint32_t>(hi) - 0xD800) << 10) +
             (static_cast<uint32_t>(lo) - 0xDC00);
        *pos = after;
      }
    }
  }
  AppendUtf8(cp, out);
  return JsonEscape::kDecoded;
}

}  // namespace gbnf::detail
