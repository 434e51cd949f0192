#include "support/utf8.h"

namespace gbnf::detail {
namespace {

// Byte count of a sequence from its lead byte, 0 for a byte that cannot start one.
size_t SequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

bool IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

}  // namespace

size_t FindInvalidUtf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const auto lead = static_cast<uint8_t>(text[pos]);
    const size_t len = SequenceLength(lead);
    if (len == 0 || pos + len > text.size()) return pos;
    for (size_t i = 1; i < len; ++i) {
      if (!IsContinuation(static_cast<uint8_t>(text[pos + i]))) return pos;
    }
    if (len > 1) {
      const auto second = static_cast<uint8_t>(text[pos + 1]);
      // Overlong forms, surrogates and values above U+10FFFF.
      if (lead == 0xE0 && second < 0xA0) return pos;
      if (lead == 0xED && second >= 0xA0) return pos;
      if (lead == 0xF0 && second < 0x90) return pos;
      if (lead == 0xF4 && second >= 0x90) return pos;
    }
    pos += len;
  }
  return text.size();
}

uint32_t DecodeUtf8(std::string_view text, size_t pos, size_t* length) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  size_t len = SequenceLength(lead);
  if (len == 0 || pos + len > text.size()) len = 1;  // callers pass valid text; stay in bounds
  *length = len;
  if (len == 1) return lead;
  uint32_t cp = lead & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3F);
  return cp;
}

size_t CountCodepoints(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += !IsContinuation(static_cast<uint8_t>(c));
  return n;
}

Utf8State Utf8Next(Utf8State state, uint8_t byte) {
  const bool tail = IsContinuation(byte);
  switch (state) {
    case kUtf8Start:
      if (byte < 0x80) return kUtf8Start;
      if (byte >= 0xC2 && byte <= 0xDF) return kUtf8Tail1;
      if (byte == 0xE0) return kUtf8AfterE0;
      if (byte == 0xED) return kUtf8AfterED;
      if (byte >= 0xE1 && byte <= 0xEF) return kUtf8Tail2;
      if (byte == 0xF0) return kUtf8AfterF0;
      if (byte == 0xF4) return kUtf8AfterF4;
      if (byte >= 0xF1 && byte <= 0xF3) return kUtf8Tail3;
      return kUtf8Invalid;
    case kUtf8Tail1: return tail ? kUtf8Start : kUtf8Invalid;
    case kUtf8Tail2: return tail ? kUtf8Tail1 : kUtf8Invalid;
    case kUtf8Tail3: return tail ? kUtf8Tail2 : kUtf8Invalid;
    case kUtf8AfterE0: return byte >= 0xA0 && byte <= 0xBF ? kUtf8Tail1 : kUtf8Invalid;
    case kUtf8AfterED: return byte >= 0x80 && byte <= 0x9F ? kUtf8Tail1 : kUtf8Invalid;
    case kUtf8AfterF0: return byte >= 0x90 && byte <= 0xBF ? kUtf8Tail2 : kUtf8Invalid;
    case kUtf8AfterF4: return byte >= 0x80 && byte <= 0x8F ? kUtf8Tail2 : kUtf8Invalid;
    case kUtf8Invalid: break;
  }
  return kUtf8Invalid;
}

ByteRange Utf8NextBytes(Utf8State state) {
  switch (state) {
    case kUtf8Start: return {0xC2, 0xF4};
    case kUtf8AfterE0: return {0xA0, 0xBF};
    case kUtf8AfterED: return {0x80, 0x9F};
    case kUtf8AfterF0: return {0x90, 0xBF};
    case kUtf8AfterF4: return {0x80, 0x8F};
    case kUtf8Invalid: return {1, 0};  // none
    default: return {0x80, 0xBF};
  }
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace gbnf::detail
