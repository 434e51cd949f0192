// The vocabulary fingerprint: 64-bit FNV-1a over a fixed serialization, so the value is the same
// on every run, compiler and platform.
//
// Serialization (all integers as 8 little-endian bytes):
//   "gbnf-vocab-v1" | token count | per token: length, bytes | eos count, eos ids (sorted,
//   unique) | special count, special ids (sorted, unique)
#include "gbnf_sampler/vocab.h"

namespace gbnf {
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

class Fnv1a {
 public:
  void Bytes(std::string_view s) {
    for (unsigned char c : s) {
      h_ ^= c;
      h_ *= kFnvPrime;
    }
  }
  void Integer(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xFF;
      h_ *= kFnvPrime;
    }
  }
  void Ids(const std::vector<TokenId>& ids) {
    Integer(ids.size());
    for (TokenId id : ids) Integer(static_cast<uint64_t>(id));
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = kFnvOffset;
};

}  // namespace

uint64_t VocabFingerprint(const std::string& bytes, const std::vector<uint32_t>& offsets,
                          const std::vector<TokenId>& eos_ids,
                          const std::vector<TokenId>& special_ids) {
  Fnv1a h;
  h.Bytes("gbnf-vocab-v1");
  const size_t n = offsets.empty() ? 0 : offsets.size() - 1;
  h.Integer(n);
  const std::string_view all(bytes);
  for (size_t i = 0; i < n; ++i) {
    const size_t len = offsets[i + 1] - offsets[i];
    h.Integer(len);
    h.Bytes(all.substr(offsets[i], len));
  }
  h.Ids(eos_ids);
  h.Ids(special_ids);
  return h.value();
}

}  // namespace gbnf
