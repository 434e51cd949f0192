#include "matcher/json_canonical.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "support/json_escape.h"

namespace gbnf::detail {
namespace {

// Forms: "S<len>:<utf-8>" strings, "I[-]<digits>" integers (and integral doubles, exactly),
// "F<hex bits>" / "F+inf" / "F-inf" other doubles, "A<n>:<items>", "O<n>:<key value>..." with
// keys sorted, "n" "t" "f" literals. Every form is self-delimiting, so concatenation is
// injective.
class Writer {
 public:
  explicit Writer(std::string_view text) : t_(text) {}

  bool Value(std::string* out, int depth) {
    SkipSpace();
    if (pos_ >= t_.size()) return false;
    switch (t_[pos_]) {
      case '"': {
        std::string s;
        if (!String(&s)) return false;
        AppendString(s, out);
        return true;
      }
      case '[': return depth < kMaxCanonicalDepth && Array(out, depth + 1);
      case '{': return depth < kMaxCanonicalDepth && Object(out, depth + 1);
      case 't': return Literal("true", 't', out);
      case 'f': return Literal("false", 'f', out);
      case 'n': return Literal("null", 'n', out);
      default: return Number(out);
    }
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == t_.size();
  }

 private:
  static void AppendString(const std::string& s, std::string* out) {
    out->push_back('S');
    out->append(std::to_string(s.size()));
    out->push_back(':');
    out->append(s);
  }
  void SkipSpace() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' ||
                                t_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word, char code, std::string* out) {
    if (t_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    out->push_back(code);
    return true;
  }
  bool String(std::string* out) {
    ++pos_;  // the opening quote
    while (pos_ < t_.size()) {
      const char c = t_[pos_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (DecodeJsonEscape(t_, &pos_, false, out) != JsonEscape::kDecoded) return false;
      } else {
        out->push_back(c);
      }
    }
    return false;
  }
  size_t Digits() {
    const size_t start = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ - start;
  }
  bool Number(std::string* out);
  bool Array(std::string* out, int depth) {
    ++pos_;
    std::string body;
    size_t count = 0;
    SkipSpace();
    if (pos_ < t_.size() && t_[pos_] == ']') {
      ++pos_;
    } else {
      for (;;) {
        if (!Value(&body, depth)) return false;
        ++count;
        SkipSpace();
        if (pos_ >= t_.size()) return false;
        const char c = t_[pos_++];
        if (c == ']') break;
        if (c != ',') return false;
      }
    }
    out->push_back('A');
    out->append(std::to_string(count));
    out->push_back(':');
    out->append(body);
    return true;
  }
  bool Object(std::string* out, int depth) {
    ++pos_;
    std::vector<std::pair<std::string, std::string>> members;
    SkipSpace();
    if (pos_ < t_.size() && t_[pos_] == '}') {
      ++pos_;
    } else {
      for (;;) {
        SkipSpace();
        if (pos_ >= t_.size() || t_[pos_] != '"') return false;
        members.emplace_back();
        if (!String(&members.back().first)) return false;
        SkipSpace();
        if (pos_ >= t_.size() || t_[pos_++] != ':') return false;
        if (!Value(&members.back().second, depth)) return false;
        SkipSpace();
        if (pos_ >= t_.size()) return false;
        const char c = t_[pos_++];
        if (c == '}') break;
        if (c != ',') return false;
      }
    }
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string body;
    size_t count = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      // A repeated key: the last one wins (stable sort keeps the source order among equals).
      if (i + 1 < members.size() && members[i + 1].first == members[i].first) continue;
      AppendString(members[i].first, &body);
      body.append(members[i].second);
      ++count;
    }
    out->push_back('O');
    out->append(std::to_string(count));
    out->push_back(':');
    out->append(body);
    return true;
  }

  std::string_view t_;
  size_t pos_ = 0;
};

// The exact decimal digits of a nonnegative integral double.
std::string IntegralDigits(double d) {
  if (d < 9.0e18) return std::to_string(static_cast<uint64_t>(d));
  int exp = 0;
  const double frac = std::frexp(d, &exp);  // d = frac * 2^exp, 0.5 <= frac < 1
  std::string digits = std::to_string(static_cast<uint64_t>(std::ldexp(frac, 53)));
  for (int i = 53; i < exp; ++i) {  // times two, exp - 53 times, on the decimal string
    int carry = 0;
    for (size_t k = digits.size(); k-- > 0;) {
      const int v = (digits[k] - '0') * 2 + carry;
      digits[k] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    if (carry != 0) digits.insert(digits.begin(), static_cast<char>('0' + carry));
  }
  return digits;
}

bool Writer::Number(std::string* out) {
  const size_t start = pos_;
  const bool negative = pos_ < t_.size() && t_[pos_] == '-';
  if (negative) ++pos_;
  const size_t int_start = pos_;
  const size_t int_digits = Digits();
  if (int_digits == 0 || (int_digits > 1 && t_[int_start] == '0')) return false;
  bool integer = true;
  if (pos_ < t_.size() && t_[pos_] == '.') {
    ++pos_;
    if (Digits() == 0) return false;
    integer = false;
  }
  if (pos_ < t_.size() && (t_[pos_] == 'e' || t_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < t_.size() && (t_[pos_] == '+' || t_[pos_] == '-')) ++pos_;
    if (Digits() == 0) return false;
    integer = false;
  }
  const std::string_view text = t_.substr(start, pos_ - start);
  if (integer) {  // Python int: exact
    const std::string_view digits = t_.substr(int_start, int_digits);
    out->push_back('I');
    if (negative && digits != "0") out->push_back('-');
    out->append(digits);
    return true;
  }
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (end != text.data() + text.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // Overflow reads as inf in Python, underflow as zero: tell them apart by the magnitude.
    const size_t e_at = text.find_first_of("eE");
    const std::string_view mantissa = text.substr(0, e_at);
    long long exp10 = 0;
    if (e_at != std::string_view::npos) {
      const std::string_view e = text.substr(e_at + 1);
      const bool e_negative = !e.empty() && e[0] == '-';
      for (char c : e) {
        if (c >= '0' && c <= '9') exp10 = std::min<long long>(exp10 * 10 + (c - '0'), 1LL << 40);
      }
      if (e_negative) exp10 = -exp10;
    }
    const size_t dot = mantissa.find('.');
    const size_t first = mantissa.find_first_of("123456789");
    const long long point = static_cast<long long>(dot == std::string_view::npos ? mantissa.size() : dot);
    const long long order = point - static_cast<long long>(first) + exp10;
    d = order > 0 ? HUGE_VAL : 0.0;
    if (negative) d = -d;
  }
  if (std::isinf(d)) {
    out->append(d > 0 ? "F+inf" : "F-inf");
  } else if (d == std::trunc(d)) {
    out->push_back('I');
    if (d < 0) out->push_back('-');
    out->append(IntegralDigits(std::fabs(d)));
  } else {
    uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    char hex[17];
    for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(bits >> (60 - 4 * i)) & 0xF];
    hex[16] = '\0';
    out->push_back('F');
    out->append(hex, 16);
  }
  return true;
}

}  // namespace

void AppendCanonicalJson(std::string_view text, std::string* out) {
  const size_t size = out->size();
  Writer w(text);
  if (w.Value(out, 0) && w.AtEnd()) return;
  out->resize(size);
  out->push_back('R');
  out->append(std::to_string(text.size()));
  out->push_back(':');
  out->append(text);
}

}  // namespace gbnf::detail
