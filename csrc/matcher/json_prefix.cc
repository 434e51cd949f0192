#include "matcher/json_prefix.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "matcher/json_canonical.h"
#include "support/json_escape.h"

namespace gbnf::detail {
namespace {

constexpr size_t kNpos = std::string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNumberByte(char c) {
  return IsDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Whether a JSON number whose text begins with `prefix` (unfinished) can still equal the
// integer of canonical form `canonical` ("I", maybe "-", digits). "No" is sure only for a
// prefix of plain digits, both sides within 15 significant digits: the number is then
// 0.DXF x 10^m for digits D of the prefix and any X, F, m, so its significant digits are D's
// (trailing zeros apart) or D's followed by more; rounding to a double can only carry it up to
// the next value of D's length (999.9999999999999999 is 1000). One route is left out: a
// nonzero digit string reaches 0 only by an exponent below -320 (5e-400), and a grammar whose
// every completion of such a prefix underflows is no grammar the distinct-items check guards
// (counting it would make every number "possibly 0" once 0 is an item).
bool IntegerPrefixMayEqual(std::string_view prefix, std::string_view canonical) {
  constexpr size_t kExactDigits = 15;
  const bool negative = canonical.size() > 1 && canonical[1] == '-';
  std::string_view digits = canonical.substr(negative ? 2 : 1);
  const bool prefix_negative = !prefix.empty() && prefix[0] == '-';
  if (prefix_negative) prefix.remove_prefix(1);
  for (char c : prefix) {
    if (!IsDigit(c)) return true;  // a fraction or an exponent began: not judged
  }
  if (prefix.empty() || prefix[0] == '0') return true;  // "0" goes on as 0.5e3: anything
  if (digits == "0") return false;  // (but for the underflow above)
  if (prefix_negative != negative) return false;
  while (!digits.empty() && digits.back() == '0') digits.remove_suffix(1);
  if (digits.size() > kExactDigits || prefix.size() > kExactDigits) return true;
  auto strip = [](std::string_view v) {
    while (!v.empty() && v.back() == '0') v.remove_suffix(1);
    return v;
  };
  const bool longer = digits.size() > prefix.size() && digits.substr(0, prefix.size()) == prefix;
  if (longer || digits == strip(prefix)) return true;
  std::string up(prefix);  // the prefix plus one in its last digit
  size_t k = up.size();
  while (k > 0 && up[k - 1] == '9') up[--k] = '0';
  if (k == 0) {
    up.insert(up.begin(), '1');
  } else {
    ++up[k - 1];
  }
  return digits == strip(up);
}

// The canonical form, read: counts ("<digits>:") and whole forms skipped.
class Canonical {
 public:
  explicit Canonical(std::string_view c) : c_(c) {}

  // At `pos`, "<digits>:"; returns the position after the colon (kNpos: malformed).
  size_t Count(size_t pos, size_t* n) const {
    size_t v = 0;
    const size_t start = pos;
    while (pos < c_.size() && IsDigit(c_[pos])) v = v * 10 + static_cast<size_t>(c_[pos++] - '0');
    if (pos == start || pos >= c_.size() || c_[pos] != ':') return kNpos;
    *n = v;
    return pos + 1;
  }
  // The position after the form at `pos` (kNpos: malformed).
  size_t Skip(size_t pos, int depth) const {
    if (pos >= c_.size() || depth > kMaxCanonicalDepth + 1) return kNpos;
    size_t n = 0;
    switch (c_[pos]) {
      case 'n':
      case 't':
      case 'f':
        return pos + 1;
      case 'I':
        ++pos;
        if (pos < c_.size() && c_[pos] == '-') ++pos;
        while (pos < c_.size() && IsDigit(c_[pos])) ++pos;
        return pos;
      case 'F':
        return c_.substr(pos + 1, 1) == "+" || c_.substr(pos + 1, 1) == "-" ? pos + 5 : pos + 17;
      case 'S':
      case 'R':
        pos = Count(pos + 1, &n);
        return pos == kNpos || pos + n > c_.size() ? kNpos : pos + n;
      case 'A':
      case 'O': {
        const size_t forms = c_[pos] == 'O' ? 2 : 1;
        pos = Count(pos + 1, &n);
        for (size_t i = 0; i < n * forms && pos != kNpos; ++i) pos = Skip(pos, depth + 1);
        return pos;
      }
      default:
        return kNpos;
    }
  }
  // The bytes of the string form at `pos` ('S'), and the position after it.
  size_t String(size_t pos, std::string_view* bytes) const {
    size_t n = 0;
    if (pos >= c_.size() || c_[pos] != 'S') return kNpos;
    pos = Count(pos + 1, &n);
    if (pos == kNpos || pos + n > c_.size()) return kNpos;
    *bytes = c_.substr(pos, n);
    return pos + n;
  }
  std::string_view text() const { return c_; }

 private:
  std::string_view c_;
};

// Reads the prefix against the canonical form, value by value.
class Reader {
 public:
  enum Result { kNo, kOpen, kDone };  // kOpen: the prefix ends inside; kDone: equal, finished

  Reader(std::string_view prefix, std::string_view canonical, PrefixAgreement* out)
      : p_(prefix), c_(canonical), out_(out) {}

  // The value at p_[i_] against the form at *pos (moved past it on kDone).
  Result Value(size_t* pos, int depth) {
    SkipSpace();
    if (AtEnd()) return kOpen;
    if (depth > kMaxCanonicalDepth) return Unknown();
    const std::string_view c = c_.text();
    if (*pos >= c.size()) return kNo;
    const char kind = c[*pos];
    switch (p_[i_]) {
      case '"': {
        std::string_view bytes;
        const size_t after = c_.String(*pos, &bytes);
        if (after == kNpos) return kNo;
        const Result r = StringAgainst(bytes, true);
        if (r == kDone) *pos = after;
        return r;
      }
      case '[':
        return kind == 'A' ? Array(pos, depth) : kNo;
      case '{':
        return kind == 'O' ? Object(pos, depth) : kNo;
      case 't':
        return Literal("true", 't', kind, pos);
      case 'f':
        return Literal("false", 'f', kind, pos);
      case 'n':
        return Literal("null", 'n', kind, pos);
      default:
        if (IsDigit(p_[i_]) || p_[i_] == '-') return Number(kind, pos);
        return Unknown();
    }
  }

 private:
  bool AtEnd() const { return i_ >= p_.size(); }
  void SkipSpace() {
    while (i_ < p_.size() && IsSpace(p_[i_])) ++i_;
  }
  // Text this reader does not follow: assume it may agree.
  Result Unknown() {
    out_->remainder_known = false;
    return kOpen;
  }

  // One decoded character (or a whole surrogate pair) of the string at p_[i_] (its
  // backslash) into *out; false when the prefix stops inside the escape (or it is no escape).
  bool Escape(std::string* out) {
    ++i_;  // the backslash
    return DecodeJsonEscape(p_, &i_, true, out) == JsonEscape::kDecoded;
  }

 public:
  // Decodes the string at p_[i_] (its opening quote) to its end, or to the end of the prefix;
  // false when the prefix stops inside an escape.
  bool DecodeString(std::string* out) {
    ++i_;
    while (!AtEnd() && p_[i_] != '"') {
      if (p_[i_] == '\\') {
        if (!Escape(out)) return false;
      } else {
        out->push_back(p_[i_++]);
      }
    }
    return true;
  }

 private:
  // The string at p_[i_] against `bytes` (a value's string or an object key).
  Result StringAgainst(std::string_view bytes, bool is_value) {
    ++i_;  // the opening quote
    size_t k = 0;
    std::string decoded;
    while (!AtEnd()) {
      const char c = p_[i_];
      if (c == '"') {
        ++i_;
        return k == bytes.size() ? kDone : kNo;
      }
      if (c != '\\') {
        if (k >= bytes.size() || bytes[k] != c) return kNo;
        ++k;
        ++i_;
        continue;
      }
      decoded.clear();
      if (!Escape(&decoded)) {
        out_->in_value_string = is_value;
        return Unknown();
      }
      if (bytes.substr(k, decoded.size()) != decoded) return kNo;
      k += decoded.size();
    }
    out_->in_value_string = is_value;
    if (is_value) out_->remainder = bytes.substr(k);
    return kOpen;
  }

  Result Literal(std::string_view word, char code, char kind, size_t* pos) {
    if (kind != code) return kNo;
    for (char w : word) {
      if (AtEnd()) return kOpen;
      if (p_[i_++] != w) return kNo;
    }
    *pos += 1;
    return kDone;
  }

  Result Number(char kind, size_t* pos) {
    if (kind != 'I' && kind != 'F') return kNo;
    const size_t start = i_;
    while (!AtEnd() && IsNumberByte(p_[i_])) ++i_;
    const size_t after = c_.Skip(*pos, 0);
    if (AtEnd()) {  // it may grow: into this value?
      if (kind != 'I' || after == kNpos) return kOpen;
      const std::string_view value = c_.text().substr(*pos, after - *pos);
      return IntegerPrefixMayEqual(p_.substr(start), value) ? kOpen : kNo;
    }
    if (after == kNpos) return kNo;
    scratch_.clear();
    AppendCanonicalJson(p_.substr(start, i_ - start), &scratch_);
    if (scratch_ != c_.text().substr(*pos, after - *pos)) return kNo;
    *pos = after;
    return kDone;
  }

  Result Array(size_t* pos, int depth) {
    size_t n = 0;
    size_t at = c_.Count(*pos + 1, &n);
    const size_t end = c_.Skip(*pos, depth);
    if (at == kNpos || end == kNpos) return kNo;
    ++i_;  // '['
    size_t count = 0;
    for (;;) {
      SkipSpace();
      if (AtEnd()) return kOpen;
      if (p_[i_] == ']') return Close(count == n, end, pos);
      if (count == n) return kNo;
      const Result r = Value(&at, depth + 1);
      if (r != kDone) return r;
      ++count;
      if (!AfterMember(']')) return AtEnd() ? kOpen : Unknown();
    }
  }

  // The closing bracket at p_[i_]: done (the canonical text goes on at `end`) when every
  // member of the value has been matched.
  Result Close(bool complete, size_t end, size_t* pos) {
    ++i_;
    if (!complete) return kNo;
    *pos = end;
    return kDone;
  }

  // After a member: skips space and a ','; true when the next member or the `close` bracket
  // is at p_[i_].
  bool AfterMember(char close) {
    SkipSpace();
    if (AtEnd()) return false;
    if (p_[i_] == ',') {
      ++i_;
      return true;
    }
    return p_[i_] == close;
  }

  Result Object(size_t* pos, int depth) {
    size_t n = 0;
    const size_t body = c_.Count(*pos + 1, &n);
    const size_t end = c_.Skip(*pos, depth);
    if (body == kNpos || end == kNpos) return kNo;
    if (n > 64) return Unknown();  // seen keys are one bit each
    uint64_t seen = 0;
    size_t matched = 0;
    ++i_;  // '{'
    std::string key;
    for (;;) {
      SkipSpace();
      if (AtEnd()) return kOpen;
      if (p_[i_] == '}') return Close(matched == n, end, pos);
      if (p_[i_] != '"') return Unknown();
      // The key, decoded; a prefix that ends inside it may still name any unseen key.
      ++i_;
      key.clear();
      bool closed = false;
      while (!AtEnd()) {
        if (p_[i_] == '"') {
          ++i_;
          closed = true;
          break;
        }
        if (p_[i_] == '\\') {
          if (!Escape(&key)) return Unknown();
        } else {
          key.push_back(p_[i_++]);
        }
      }
      if (!closed) return kOpen;
      size_t value = kNpos;
      size_t index = 0;
      for (size_t at = body; index < n; ++index) {
        std::string_view name;
        at = c_.String(at, &name);
        if (at == kNpos) return kNo;
        if (name == key) {
          value = at;
          break;
        }
        at = c_.Skip(at, depth + 1);
        if (at == kNpos) return kNo;
      }
      if (value == kNpos) return kNo;                // a key the value lacks
      if ((seen >> index) & 1u) return Unknown();    // repeated: the last one counts
      seen |= uint64_t{1} << index;
      SkipSpace();
      if (AtEnd()) return kOpen;
      if (p_[i_++] != ':') return Unknown();
      const Result r = Value(&value, depth + 1);
      if (r != kDone) return r;
      ++matched;
      if (!AfterMember('}')) return AtEnd() ? kOpen : Unknown();
    }
  }

  std::string_view p_;
  Canonical c_;
  PrefixAgreement* out_;
  size_t i_ = 0;
  std::string scratch_;
};

}  // namespace

bool DecodeJsonStringPart(std::string_view part, std::string* out) {
  // Read as the prefix '"' + part against a string value it cannot finish: the reader decodes.
  std::string prefix = "\"";
  prefix.append(part);
  PrefixAgreement unused;
  Reader reader(prefix, {}, &unused);
  return reader.DecodeString(out);
}

PrefixAgreement AgreeWithValue(std::string_view prefix, std::string_view canonical) {
  PrefixAgreement out;
  out.remainder_known = true;
  if (!canonical.empty() && canonical[0] == 'R') {  // not JSON: nothing to follow
    out.possible = true;
    out.remainder_known = false;
    return out;
  }
  Reader reader(prefix, canonical, &out);
  size_t pos = 0;
  const Reader::Result r = reader.Value(&pos, 0);
  out.possible = r != Reader::kNo;
  if (!out.in_value_string) out.remainder_known = false;
  return out;
}

}  // namespace gbnf::detail
