// TokenTrie::RunsInside: the trie positions whose bytes all lie in one byte class, kept per class,
// with the tails of the others.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "gbnf_sampler/vocab.h"
#include "support/utf8.h"

namespace gbnf {
namespace {

constexpr int kStates = detail::kUtf8Invalid + 1;

// The walk's step over one byte: the UTF-8 DFA's, with the class's bytes (ASCII between
// characters only, since ASCII inside a multi-byte character is invalid UTF-8).
struct ClassDfa {
  detail::Utf8State next[kStates][256];
  explicit ClassDfa(const TokenTrie::ByteClass& cls) {
    for (int s = 0; s < kStates; ++s) {
      for (int b = 0; b < 256; ++b) {
        const auto state = static_cast<detail::Utf8State>(s);
        const auto byte = static_cast<uint8_t>(b);
        detail::Utf8State to = detail::kUtf8Invalid;
        if (byte < 0x80) {
          if (state == detail::kUtf8Start && ((cls.ascii[byte >> 6] >> (byte & 63)) & 1) != 0) {
            to = detail::kUtf8Start;
          }
        } else if (cls.non_ascii && state != detail::kUtf8Invalid) {
          to = detail::Utf8Next(state, byte);
        }
        next[s][b] = to;
      }
    }
  }
};

std::string_view TailOf(const TokenTrie& trie, const TokenTrie::ClassTail& t) {
  return trie.bytes(t.pos).substr(t.start);
}

// A list of tails in byte order (equal tails by position), with their lcps and next lowers.
TokenTrie::TailList SortedTails(const TokenTrie& trie, std::vector<TokenTrie::ClassTail> tails) {
  std::sort(tails.begin(), tails.end(), [&](const auto& a, const auto& b) {
    const std::string_view x = TailOf(trie, a);
    const std::string_view y = TailOf(trie, b);
    return x != y ? x < y : a.pos < b.pos;
  });
  TokenTrie::TailList out;
  const size_t n = tails.size();
  out.lcp.assign(n, 0);
  for (size_t i = 1; i < n; ++i) {
    const std::string_view x = TailOf(trie, tails[i - 1]);
    const std::string_view y = TailOf(trie, tails[i]);
    const size_t m = std::min(x.size(), y.size());
    uint32_t k = 0;
    while (k < m && x[k] == y[k]) ++k;
    out.lcp[i] = k;
  }
  out.next_lower.assign(n, static_cast<uint32_t>(n));
  std::vector<uint32_t> open;  // tails whose next lower is not found yet (lcps ascending)
  for (size_t i = 0; i < n; ++i) {
    while (!open.empty() && out.lcp[open.back()] > out.lcp[i]) {
      out.next_lower[open.back()] = static_cast<uint32_t>(i);
      open.pop_back();
    }
    open.push_back(static_cast<uint32_t>(i));
  }
  out.tails = std::move(tails);
  return out;
}

void SortTails(const TokenTrie& trie, std::vector<TokenTrie::ClassTail> tails,
               TokenTrie::ClassRuns* out) {
  std::vector<TokenTrie::ClassTail> bare;
  std::vector<TokenTrie::ClassTail> prefixed;
  for (const auto& t : tails) (t.start == 0 ? bare : prefixed).push_back(t);
  out->bare_tails = SortedTails(trie, std::move(bare));
  out->prefixed_tails = SortedTails(trie, std::move(prefixed));
}

// One pass in trie order. The state after each depth of the previous token is kept, so a shared
// prefix (lcp) is read once, and a token that shares a refused prefix is refused unread.
TokenTrie::ClassRuns BuildClassRuns(const TokenTrie& trie, const TokenTrie::ByteClass& cls) {
  using detail::Utf8State;
  const ClassDfa dfa(cls);
  TokenTrie::ClassRuns out;
  // after[d]: the state after the first d bytes of the last token read (valid below refused_at,
  // the depth at which it was refused: its first refused byte plus one).
  std::vector<Utf8State> after(trie.vocab().max_token_length() + 1, detail::kUtf8Start);
  std::vector<TokenTrie::ClassTail> tails;
  uint32_t refused_at = UINT32_MAX;
  uint32_t tail_start = 0;  // of the refused token: its last character boundary before the refusal
  for (size_t p = 0; p < trie.size(); ++p) {
    const uint32_t lcp = trie.lcp(p);
    if (lcp >= refused_at) {  // starts with the refused prefix: the same tail start
      tails.push_back({static_cast<uint32_t>(p), tail_start});
      continue;
    }
    refused_at = UINT32_MAX;
    const std::string_view bytes = trie.bytes(p);
    Utf8State state = after[lcp];
    for (size_t d = lcp; d < bytes.size(); ++d) {
      state = dfa.next[state][static_cast<uint8_t>(bytes[d])];
      if (state == detail::kUtf8Invalid) {
        refused_at = static_cast<uint32_t>(d + 1);
        break;
      }
      after[d + 1] = state;
    }
    if (state == detail::kUtf8Invalid) {
      tail_start = refused_at - 1;
      while (tail_start > 0 && after[tail_start] != detail::kUtf8Start) --tail_start;
      tails.push_back({static_cast<uint32_t>(p), tail_start});
      continue;
    }
    // Every token below p in the class too: the subtree is one run (its lcps are >= len(p)).
    size_t end = p + 1;
    if (state == detail::kUtf8Start && trie.subtree_end(p) > end &&
        trie.BelowOnly(p, cls.ascii, cls.non_ascii)) {
      end = trie.subtree_end(p);
    }
    const auto pos = static_cast<uint32_t>(p);
    const uint32_t inner_lcp = end > p + 1 ? static_cast<uint32_t>(bytes.size()) : UINT32_MAX;
    const auto chars = static_cast<uint8_t>(std::min<uint32_t>(
        255, trie.chars()[p] + (end > p + 1 ? uint32_t{trie.below_chars()[p]} : 0)));
    if (!out.runs.empty() && out.runs.back().second == pos) {
      out.runs.back().second = static_cast<uint32_t>(end);
      out.min_lcp.back() = std::min({out.min_lcp.back(), lcp, inner_lcp});
      out.max_chars.back() = std::max(out.max_chars.back(), chars);
    } else {
      out.runs.emplace_back(pos, static_cast<uint32_t>(end));
      out.min_lcp.push_back(inner_lcp);
      out.max_chars.push_back(chars);
    }
    p = end - 1;
  }
  out.runs.shrink_to_fit();
  out.min_lcp.shrink_to_fit();
  out.max_chars.shrink_to_fit();
  SortTails(trie, std::move(tails), &out);
  return out;
}

}  // namespace

std::unique_ptr<const TokenTrie::ClassRuns>* TokenTrie::KnownClass(const ByteClass& cls) const {
  for (auto& [known, runs] : class_runs_) {
    if (known == cls) return &runs;
  }
  return nullptr;
}

const TokenTrie::ClassRuns* TokenTrie::FindRunsInside(const ByteClass& cls, bool* first) const {
  std::lock_guard<std::mutex> lock(class_runs_mutex_);
  *first = false;
  if (auto* known = KnownClass(cls)) return known->get();  // null while being built
  if (class_runs_.size() < kMaxClassRuns) {
    class_runs_.emplace_back(cls, nullptr);
    *first = true;
  }
  return nullptr;
}

const TokenTrie::ClassRuns* TokenTrie::RunsInside(const ByteClass& cls) const {
  {
    std::lock_guard<std::mutex> lock(class_runs_mutex_);
    auto* known = KnownClass(cls);
    if (known != nullptr && *known != nullptr) return known->get();
    if (known == nullptr && class_runs_.size() >= kMaxClassRuns) return nullptr;
  }
  auto built = std::make_unique<const ClassRuns>(BuildClassRuns(*this, cls));
  std::lock_guard<std::mutex> lock(class_runs_mutex_);
  if (auto* known = KnownClass(cls)) {
    if (*known == nullptr) *known = std::move(built);  // else another thread built them first
    return known->get();
  }
  if (class_runs_.size() >= kMaxClassRuns) return nullptr;
  class_runs_.emplace_back(cls, std::move(built));
  return class_runs_.back().second.get();
}

void TokenTrie::ListJsonStringClasses() const {
  // A JSON string body loops over every character but '"', '\\' and the control bytes: with
  // and without DEL (json.gbnf leaves it out, the JSON Schema conversion keeps it), and every
  // multi-byte character. Listed with the trie (0.1-0.3 ms), so that the first string of a
  // first grammar finds them.
  for (const bool del : {false, true}) {
    ByteClass cls;
    for (uint32_t b = 0x20; b < (del ? 0x80u : 0x7Fu); ++b) {
      if (b != '"' && b != '\\') cls.ascii[b >> 6] |= uint64_t{1} << (b & 63);
    }
    cls.non_ascii = true;
    RunsInside(cls);
  }
}

size_t TokenTrie::PendingClassRuns() const {
  std::lock_guard<std::mutex> lock(class_runs_mutex_);
  size_t n = 0;
  for (const auto& entry : class_runs_) n += entry.second == nullptr ? 1 : 0;
  return n;
}

}  // namespace gbnf
