// Vocab: construction, validation and lookups.
#include <algorithm>
#include <limits>
#include <string>

#include "gbnf_sampler/vocab.h"

namespace gbnf {
namespace {

constexpr uint8_t kEosFlag = 1;
constexpr uint8_t kSpecialFlag = 2;

// Sorts, deduplicates and range-checks an id list; `what` names the list in errors.
std::vector<TokenId> NormalizeIds(std::vector<TokenId> ids, size_t size, const char* what) {
  for (TokenId id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= size) {
      throw VocabError(std::string(what) + " id " + std::to_string(id) +
                       " is out of range for a vocabulary of size " + std::to_string(size));
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void CheckSizes(const std::vector<std::string>& tokens) {
  if (tokens.empty()) throw VocabError("the vocabulary is empty (size 0)");
  if (tokens.size() > static_cast<size_t>(std::numeric_limits<TokenId>::max())) {
    throw VocabError("the vocabulary has " + std::to_string(tokens.size()) +
                     " tokens, more than the 2147483647 supported");
  }
}

}  // namespace

Vocab::~Vocab() = default;

std::shared_ptr<const Vocab> Vocab::Create(const std::vector<std::string>& tokens,
                                           std::vector<TokenId> eos_ids,
                                           std::vector<TokenId> special_ids) {
  CheckSizes(tokens);
  std::shared_ptr<Vocab> v(new Vocab());
  v->offsets_.reserve(tokens.size() + 1);
  v->offsets_.push_back(0);
  size_t total = 0;
  for (const std::string& t : tokens) {
    total += t.size();
    if (total > std::numeric_limits<uint32_t>::max()) {
      throw VocabError("the vocabulary holds more than 4 GiB of token bytes");
    }
    v->offsets_.push_back(static_cast<uint32_t>(total));
    v->max_token_length_ = std::max(v->max_token_length_, t.size());
  }
  v->bytes_.reserve(total);
  for (const std::string& t : tokens) v->bytes_ += t;
  v->eos_ids_ = NormalizeIds(std::move(eos_ids), tokens.size(), "eos");
  v->special_ids_ = NormalizeIds(std::move(special_ids), tokens.size(), "special");
  v->flags_.assign(tokens.size(), 0);
  for (TokenId id : v->eos_ids_) v->flags_[id] |= kEosFlag;
  for (TokenId id : v->special_ids_) v->flags_[id] |= kSpecialFlag;
  v->fingerprint_ = VocabFingerprint(v->bytes_, v->offsets_, v->eos_ids_, v->special_ids_);
  return v;
}

void Vocab::CheckId(TokenId id, const char* what) const {
  if (id < 0 || static_cast<size_t>(id) >= size()) {
    throw VocabError(std::string(what) + " id " + std::to_string(id) +
                     " is out of range for a vocabulary of size " + std::to_string(size()));
  }
}

std::string_view Vocab::Token(TokenId id) const {
  CheckId(id, "token");
  return TokenUnchecked(id);
}

bool Vocab::IsEos(TokenId id) const {
  CheckId(id, "token");
  return (flags_[id] & kEosFlag) != 0;
}

bool Vocab::IsSpecial(TokenId id) const {
  CheckId(id, "token");
  return (flags_[id] & kSpecialFlag) != 0;
}

std::vector<TokenId> Vocab::FindByText(std::string_view text) const {
  std::vector<TokenId> found;
  const std::string_view all(bytes_);
  for (size_t id = 0; id < size(); ++id) {
    const size_t len = offsets_[id + 1] - offsets_[id];
    if (len == text.size() && all.substr(offsets_[id], len) == text) {
      found.push_back(static_cast<TokenId>(id));
    }
  }
  return found;
}

std::string Vocab::FingerprintHex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 0; i < 16; ++i) hex[15 - i] = kDigits[(fingerprint_ >> (4 * i)) & 0xF];
  return hex;
}

const TokenTrie& Vocab::trie() const {
  std::call_once(trie_once_, [this] { trie_ = std::make_unique<TokenTrie>(*this); });
  return *trie_;
}

namespace {

bool IsNumberByte(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Whether `bytes`, read from outside a JSON string, finish a value: with `own` false, any
// value (a '}' or ']' closes one opened before them); with `own` true, only a value they also
// begin. Bytes that cannot be JSON there (a letter that starts no literal) end the reading:
// such a token is never allowed at that place.
bool EndsJsonValue(std::string_view bytes, bool own) {
  bool in_string = false, in_number = false;
  int depth = 0;  // containers opened by `bytes`
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') return true;
      continue;
    }
    if (in_number) {
      if (!IsNumberByte(c)) return true;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (!own || depth > 0) return true;
        --depth;
        break;
      case 't':
      case 'f':
      case 'n': {
        const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
        const std::string_view rest = bytes.substr(i, word.size());
        return rest == word.substr(0, rest.size());  // a literal begun is a value decided
      }
      case ',':
      case ':':
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        break;
      default:
        if ((c >= '0' && c <= '9') || c == '-') {
          in_number = true;
          break;
        }
        return false;
    }
  }
  return false;
}

}  // namespace

const Vocab::JsonTokenLists& Vocab::JsonTokens() const {
  std::call_once(json_tokens_once_, [this] {
    JsonTokenLists& out = json_tokens_;
    for (size_t id = 0; id < size(); ++id) {
      const auto t = static_cast<TokenId>(id);
      if (IsEos(t) || IsSpecial(t)) continue;
      const std::string_view bytes = Token(t);
      const size_t quote = bytes.find('"');
      if (quote != std::string_view::npos) {
        out.quote.push_back(t);
        if (bytes.substr(0, quote).find('\\') != std::string_view::npos ||
            EndsJsonValue(bytes.substr(quote + 1), true)) {
          out.quote_more.push_back(t);
        }
      }
      if (EndsJsonValue(bytes, false)) out.value_end.push_back(t);
      if (bytes.find('\\') != std::string_view::npos) out.escaped.push_back(t);
      out.by_bytes.push_back(t);
    }
    auto content = [this](TokenId t) {
      const std::string_view bytes = Token(t);
      return bytes.substr(0, bytes.find('"'));
    };
    std::sort(out.quote.begin(), out.quote.end(), [&](TokenId x, TokenId y) {
      const std::string_view cx = content(x), cy = content(y);
      return cx != cy ? cx < cy : x < y;
    });
    std::sort(out.by_bytes.begin(), out.by_bytes.end(), [&](TokenId x, TokenId y) {
      const std::string_view bx = Token(x), by = Token(y);
      return bx != by ? bx < by : x < y;
    });
  });
  return json_tokens_;
}

}  // namespace gbnf
