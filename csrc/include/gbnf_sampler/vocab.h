// The tokenizer vocabulary (token id -> bytes, EOS and special ids) and its token trie.
//
// A Vocab is immutable once created and shared through std::shared_ptr<const Vocab>; every
// method is safe to call from many threads. The token trie is built on first use of trie()
// (thread-safe, once per Vocab).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gbnf {

using TokenId = int32_t;

class TokenTrie;

// Thrown for a vocabulary that cannot be built (empty, ids out of range, ...) and for a token id
// outside the vocabulary. Derives from std::invalid_argument (Python: ValueError).
class VocabError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Owned by std::shared_ptr (Create): work it hands to other threads keeps it alive.
class Vocab : public std::enable_shared_from_this<Vocab> {
 public:
  // tokens[id] is the exact byte string of token `id` (any bytes: partial UTF-8, NUL, empty).
  // eos_ids: the end-of-generation tokens; special_ids: control tokens never produced as text.
  // Both may hold duplicates and may overlap; they are stored sorted and deduplicated.
  // Throws VocabError on an empty token list, an id outside [0, size), or more than 2^31-1
  // tokens or 4 GiB of token bytes.
  static std::shared_ptr<const Vocab> Create(const std::vector<std::string>& tokens,
                                             std::vector<TokenId> eos_ids,
                                             std::vector<TokenId> special_ids);

  size_t size() const { return offsets_.size() - 1; }
  // The bytes of token `id`; the view lives as long as the Vocab. Throws VocabError when `id`
  // is outside [0, size).
  std::string_view Token(TokenId id) const;
  bool IsEos(TokenId id) const;
  bool IsSpecial(TokenId id) const;
  const std::vector<TokenId>& eos_ids() const { return eos_ids_; }
  const std::vector<TokenId>& special_ids() const { return special_ids_; }
  // Length of the longest token, in bytes.
  size_t max_token_length() const { return max_token_length_; }

  // A 64-bit content hash of the token bytes and the EOS and special id sets: equal for equal
  // vocabularies on every run and platform (FNV-1a over a fixed little-endian serialization,
  // see fingerprint.cc). Used as a cache key.
  uint64_t fingerprint() const { return fingerprint_; }
  // "0123456789abcdef": the fingerprint as 16 lowercase hex digits.
  std::string FingerprintHex() const;

  // Every id whose bytes equal `text` exactly, ascending (special tokens included). Used to
  // resolve grammar token references such as <|im_end|> or <think>.
  std::vector<TokenId> FindByText(std::string_view text) const;

  // The token trie over this vocabulary's normal tokens, built on the first call.
  const TokenTrie& trie() const;
  // The normal tokens the "#@ distinct-items" mask filter looks at, found on the first call.
  struct JsonTokenLists {
    // Those holding a '"' (the only ones that can end a JSON string), sorted by their bytes
    // before the first '"' (then by id); and those of them, in id order, with a '\\' before it
    // or that begin and end another value after it (as '", "a"').
    std::vector<TokenId> quote, quote_more;
    // Those that end a JSON value when read from outside a string: a string opened and
    // closed, a '}' or ']', the first letter of true/false/null, or a number and a byte after
    // it. In id order.
    std::vector<TokenId> value_end;
    // Every normal token, sorted by its bytes (those that start with a given text are a run),
    // and those holding a '\\', in id order.
    std::vector<TokenId> by_bytes, escaped;
  };
  const JsonTokenLists& JsonTokens() const;

  ~Vocab();
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

 private:
  friend class TokenTrie;
  Vocab() = default;
  void CheckId(TokenId id, const char* what) const;
  std::string_view TokenUnchecked(TokenId id) const {
    return std::string_view(bytes_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

  std::string bytes_;               // all token bytes, concatenated in id order
  std::vector<uint32_t> offsets_;   // token id's bytes are bytes_[offsets_[id], offsets_[id+1])
  std::vector<TokenId> eos_ids_;    // sorted, unique
  std::vector<TokenId> special_ids_;  // sorted, unique
  std::vector<uint8_t> flags_;      // per id: kEosFlag | kSpecialFlag
  size_t max_token_length_ = 0;
  uint64_t fingerprint_ = 0;
  mutable std::once_flag trie_once_;
  mutable std::unique_ptr<TokenTrie> trie_;
  mutable std::once_flag json_tokens_once_;
  mutable JsonTokenLists json_tokens_;
};

// llama.cpp's vocabulary API (llama.h), as function pointers: lets the core read a model's
// vocabulary without llama.cpp's headers or library. `vocab` is a `const llama_vocab*`.
struct LlamaVocabApi {
  const void* vocab = nullptr;
  int32_t (*n_tokens)(const void* vocab) = nullptr;                       // llama_vocab_n_tokens
  int32_t (*token_to_piece)(const void* vocab, int32_t token, char* buf,  // llama_token_to_piece
                            int32_t length, int32_t lstrip, bool special) = nullptr;
  uint32_t (*get_attr)(const void* vocab, int32_t token) = nullptr;       // llama_vocab_get_attr
  bool (*is_eog)(const void* vocab, int32_t token) = nullptr;             // llama_vocab_is_eog
};

// The vocabulary of a llama.cpp model: token bytes from token_to_piece(lstrip 0, special true),
// EOS = every end-of-generation token, special = every token with an attribute in
// `special_attrs` (a mask of llama_token_attr bits). Throws VocabError on null pointers or an
// empty vocabulary.
std::shared_ptr<const Vocab> ExtractLlamaVocab(const LlamaVocabApi& api, uint32_t special_attrs);

// The fingerprint function (exposed for tests): see fingerprint.cc for the exact serialization.
uint64_t VocabFingerprint(const std::string& bytes, const std::vector<uint32_t>& offsets,
                          const std::vector<TokenId>& eos_ids,
                          const std::vector<TokenId>& special_ids);

// ---------------------------------------------------------------------------------------------
// TokenTrie: the implicit trie of DESIGN 2.3 over the vocabulary's *normal* tokens (every token
// that is not special, not EOS and not empty).
//
// Positions 0..size()-1 hold those tokens sorted by their bytes (unsigned, lexicographic; a
// prefix sorts before its extensions; equal byte strings by ascending id). Per position p:
//   token_id(p)    the token at p;            bytes(p) its bytes (never empty)
//   lcp(p)         length of the longest common prefix of bytes(p-1) and bytes(p); lcp(0) = 0
//   subtree_end(p) the first q > p whose bytes do not start with bytes(p) (size() if none).
// Invariants a walker may rely on (all follow from the sort order):
//   (I1) the tokens that start with a given byte string s form one contiguous run of positions;
//   (I2) for p < q: LCP(bytes(p), bytes(q)) = min(lcp(p+1), ..., lcp(q));
//   (I3) every q in (p, subtree_end(p)) starts with bytes(p) (tokens with the same bytes, i.e.
//        duplicate ids, come first) and has lcp(q) >= len(bytes(p)); subtree_end(p) is the first
//        q > p with lcp(q) < len(bytes(p));
//   (I4) NextDiverging(p, d) (d <= len(bytes(p))) is the first q > p with lcp(q) < d: every
//        position in (p, NextDiverging(p, d)) starts with the first d bytes of bytes(p), and by
//        (I1) no position from NextDiverging(p, d) on does.
//        subtree_end(p) == NextDiverging(p, len(bytes(p))).
//
// Example: normal tokens {0:"a", 1:"ab", 2:"abc", 3:"abd", 4:"b", 5:"ab"}
//   position     0     1     2      3      4      5
//   token_id     0     1     5      2      3      4
//   bytes        a     ab    ab     abc    abd    b
//   lcp          0     1     2      2      2      0
//   subtree_end  5     5     5      4      5      6
// ---------------------------------------------------------------------------------------------
class TokenTrie {
 public:
  // Borrows `vocab` (it must outlive the trie; Vocab::trie() owns one for you).
  explicit TokenTrie(const Vocab& vocab);

  // The per-position accessors are unchecked (hot path): they require pos < size().
  size_t size() const { return ids_.size(); }
  TokenId token_id(size_t pos) const { return ids_[pos]; }
  uint32_t lcp(size_t pos) const { return lcp_[pos]; }
  uint32_t subtree_end(size_t pos) const { return subtree_end_[pos]; }
  // Stored in trie order (position p's bytes right after position p-1's), so that walks read
  // them sequentially instead of jumping through the vocabulary in id order.
  std::string_view bytes(size_t pos) const {
    return std::string_view(bytes_.data() + offsets_[pos], offsets_[pos + 1] - offsets_[pos]);
  }
  const std::vector<TokenId>& sorted_ids() const { return ids_; }
  const std::vector<uint32_t>& lcps() const { return lcp_; }
  const std::vector<uint32_t>& subtree_ends() const { return subtree_end_; }
  // Ids left out of the trie (special, EOS or empty), ascending. The mask engine handles these
  // separately: EOS by can_terminate(), special ones only through grammar token references.
  const std::vector<TokenId>& excluded_ids() const { return excluded_; }
  // Bitset over token ids (ceil(V/32) words): every non-EOS, non-empty token, special ones
  // included (what a negated grammar reference !<x> may match, x aside).
  const std::vector<uint32_t>& any_token_words() const { return any_token_; }
  // Bitset over token ids (ceil(V/32) words): the tokens of the trie.
  const std::vector<uint32_t>& trie_token_words() const { return trie_token_; }
  const Vocab& vocab() const { return *vocab_; }

  // What the tokens below each position add to its bytes, for walks that accept a whole
  // subtree when the parser loops over every byte it holds (mask/loop_bytes.h): the ASCII bytes
  // of the tails bytes(q)[len(bytes(p)):] of the positions q in (p, subtree_end(p)) as a 128-bit
  // set (below_ascii()[2 * p] holds 00-3F, [2 * p + 1] 40-7F, bit b & 63) and flags.
  static constexpr uint8_t kEndsInsideChar = 1;    // bytes(p) is no valid UTF-8 ending between
                                                   // characters
  static constexpr uint8_t kBelowNonAscii = 2;     // some tail holds a byte >= 0x80
  static constexpr uint8_t kBelowInvalidUtf8 = 4;  // some q's bytes are no prefix of valid UTF-8
  const uint64_t* below_ascii() const { return below_ascii_.data(); }
  const uint8_t* byte_flags() const { return byte_flags_.data(); }
  // The most characters (bytes that do not continue a UTF-8 sequence) a tail below p holds,
  // 255 for 255 or more.
  const uint8_t* below_chars() const { return below_chars_.data(); }
  // The characters of bytes(p) (bytes that do not continue a UTF-8 sequence), 255 for more.
  const uint8_t* chars() const { return chars_.data(); }

  // See (I4): at most len(bytes(pos)) - depth + 1 jumps. Requires pos < size(); depth 0 gives
  // size().
  size_t NextDiverging(size_t pos, uint32_t depth) const;

  // Every byte the tokens below `pos` add is one of the ASCII bytes of `ascii` (bit b & 63 of
  // ascii[b >> 6]) or, when non_ascii, part of valid UTF-8 (below_ascii, byte_flags).
  bool BelowOnly(size_t pos, const uint64_t ascii[2], bool non_ascii) const {
    const uint64_t* below = below_ascii() + 2 * pos;
    const uint8_t refused = non_ascii ? kBelowInvalidUtf8 : kBelowNonAscii;
    return ((below[0] & ~ascii[0]) | (below[1] & ~ascii[1])) == 0 &&
           (byte_flags()[pos] & refused) == 0;
  }

  // Bytes that a parser configuration takes in any order and number (the loops of
  // mask/loop_bytes.h): ASCII bytes by bit (bit b & 63 of ascii[b >> 6]), and either every
  // valid multi-byte character or none.
  struct ByteClass {
    uint64_t ascii[2] = {0, 0};
    bool non_ascii = false;
    bool operator==(const ByteClass& o) const {
      return ascii[0] == o.ascii[0] && ascii[1] == o.ascii[1] && non_ascii == o.non_ascii;
    }
  };
  // The positions in none of a class's runs (below), as tails: a token's tail is what follows
  // its longest prefix of whole characters of the class (it begins with a byte outside the
  // class, or with a character that is broken or cut short before such a byte). Two lists, of
  // the tokens without such a prefix and with one, each ordered by tail bytes with each tail's
  // lcp with the one before and the next tail with a smaller lcp, so that a walk from a
  // configuration that every character of the class leads to classifies them as a trie of
  // tails (mask/tail_walk.cc).
  struct ClassTail {
    uint32_t pos;    // the token's trie position
    uint32_t start;  // the tail's first byte in the token
  };
  struct TailList {
    std::vector<ClassTail> tails;
    std::vector<uint32_t> lcp;         // with the tail before (0 for the first)
    std::vector<uint32_t> next_lower;  // the first later tail with a smaller lcp (or the end)
  };
  // The positions whose bytes all lie in one class (its ASCII bytes; the others, when
  // non_ascii, valid UTF-8 whose last character may be cut short), as ascending disjoint runs
  // [first, second), with per run the smallest lcp of its positions after its first (what a
  // walk that jumps over part of a run may keep of the prefix it holds) and the most characters
  // of its positions (chars(), 255 for 255 or more: what a bounded repetition must allow).
  struct ClassRuns {
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    std::vector<uint32_t> min_lcp;  // UINT32_MAX for a run of one position
    std::vector<uint8_t> max_chars;
    TailList bare_tails;      // the others that begin outside the class
    TailList prefixed_tails;  // the others with a prefix of the class
  };
  // The classes whose runs a trie keeps (a few KiB to a few hundred KiB each): the string
  // bodies and comments of a grammar use a handful.
  static constexpr size_t kMaxClassRuns = 16;
  // The runs of `cls` when they are built, else null. The first call for a class (while fewer
  // than kMaxClassRuns are known) sets *first: its caller has them built (RunsInside), there
  // or on another thread. Thread-safe; never blocks on a build.
  const ClassRuns* FindRunsInside(const ByteClass& cls, bool* first) const;
  // The runs of `cls`, built now if need be (one pass over the trie's bytes, outside the lock)
  // and kept as long as the trie. Null once kMaxClassRuns other classes are known.
  const ClassRuns* RunsInside(const ByteClass& cls) const;
  // Classes asked for (FindRunsInside) whose runs are not built yet (tests).
  size_t PendingClassRuns() const;

 private:
  void SummarizeSubtrees();
  // Builds the runs of the classes of JSON string bodies (the constructor's last step).
  void ListJsonStringClasses() const;
  // The entry of `cls` in class_runs_, or null; requires class_runs_mutex_.
  std::unique_ptr<const ClassRuns>* KnownClass(const ByteClass& cls) const;

  const Vocab* vocab_;
  std::vector<TokenId> ids_;
  std::vector<uint32_t> lcp_;
  std::vector<uint32_t> subtree_end_;
  std::vector<uint32_t> next_lower_;  // first q > p with lcp(q) < lcp(p) (size() if none)
  std::vector<TokenId> excluded_;
  std::string bytes_;              // token bytes in trie order
  std::vector<uint32_t> offsets_;  // size() + 1
  std::vector<uint32_t> any_token_;
  std::vector<uint32_t> trie_token_;
  std::vector<uint64_t> below_ascii_;  // 2 per position
  std::vector<uint8_t> byte_flags_;
  std::vector<uint8_t> below_chars_;
  std::vector<uint8_t> chars_;
  mutable std::mutex class_runs_mutex_;
  mutable std::vector<std::pair<ByteClass, std::unique_ptr<const ClassRuns>>> class_runs_;
};

// ---------------------------------------------------------------------------------------------
// TrieWalk: visits the trie's positions in order for a caller that keeps a stack of parser
// states, one per byte of the prefix it holds, so a common prefix is parsed once and a refused
// prefix is never tried again.
//
// At each position the caller (1) pops its stack back to keep() bytes, (2) pushes the bytes of
// push() one at a time (= bytes().substr(keep())) and (3) reports:
//   Next()            every byte was accepted (it now holds all of bytes()); go to position+1;
//   Reject(accepted)  byte bytes()[accepted] was refused, it holds the first `accepted` bytes
//                     (keep() <= accepted < bytes().size()); every following token that starts
//                     with bytes()[0..accepted] is refused too and is skipped (I4);
//   Skip()            it holds all of bytes() but wants no extension of this token: skips every
//                     token that strictly extends bytes() (I3). Tokens with the very same bytes
//                     (duplicate ids) are still visited, next, with an empty push().
// Positions jumped over are never visited: to the caller they are refused. Every accessor and
// move requires !Done() (the moves throw std::logic_error otherwise).
// The kept prefix is exact: keep() == min(held, LCP(held bytes, bytes())), so the held stack after
// popping is always a prefix of bytes().
//
//   TrieWalk w(vocab.trie());
//   for (; !w.Done();) {
//     parser.PopTo(w.keep());
//     std::string_view add = w.push();
//     size_t n = 0;
//     while (n < add.size() && parser.Push(add[n])) ++n;
//     if (n == add.size()) { allowed.Set(w.token_id()); w.Next(); }
//     else w.Reject(w.keep() + n);
//   }
//
// With the example trie above and a parser accepting only prefixes of "abd":
//   0 "a"   keep 0, push "a"  accepted, Next()
//   1 "ab"  keep 1, push "b"  accepted, Next()
//   2 "ab"  keep 2, push ""   accepted, Next()
//   3 "abc" keep 2, push "c"  refused: Reject(2) goes to the first q > 3 with lcp(q) < 3, i.e. 4
//   4 "abd" keep 2, push "d"  accepted, Next()
//   5 "b"   keep 0, push "b"  refused: Reject(0) goes to 6: done.
// With a parser accepting only prefixes of "b": 0 "a" is refused at once, Reject(0) jumps to 5
// (positions 1-4 all start with "a"), and 5 "b" is accepted.
// ---------------------------------------------------------------------------------------------
class TrieWalk {
 public:
  explicit TrieWalk(const TokenTrie& trie);

  bool Done() const { return pos_ >= trie_->size(); }
  size_t position() const { return pos_; }
  TokenId token_id() const { return trie_->token_id(pos_); }
  std::string_view bytes() const { return trie_->bytes(pos_); }
  uint32_t keep() const { return keep_; }
  std::string_view push() const { return bytes().substr(keep_); }

  void Next();
  // Throws std::invalid_argument if `accepted` is outside [keep(), bytes().size()).
  void Reject(uint32_t accepted);
  void Skip();

 private:
  void MoveTo(size_t pos, uint32_t held);
  void CheckNotDone(const char* what) const;

  const TokenTrie* trie_;
  size_t pos_ = 0;
  uint32_t keep_ = 0;
};

}  // namespace gbnf
