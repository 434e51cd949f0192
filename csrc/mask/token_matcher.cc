#include "gbnf_sampler/token_matcher.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mask/background.h"
#include "mask/fill_ahead.h"
#include "mask/mask_cache.h"
#include "mask/prefix_walker.h"
#include "mask/trie_walks.h"
#include "mask/whitespace_filter.h"
#include "matcher/json_prefix.h"
#include "matcher/matcher_access.h"
#include "support/bits.h"

namespace gbnf {

namespace {

// An item whose stack node was predicted in the last step: the item that predicted it covers it
// (its walk makes the same prediction), so a fill reads only the other items' entries.
bool CoveredByPredictor(const detail::Recognizer& recognizer, const detail::Item& it,
                        uint64_t step) {
  const detail::GssNode& node = recognizer.gss().node(it.node);
  return node.step == step && node.cont_count > 0;
}

}  // namespace

// Reused across steps (not copied by Fork).
struct TokenMatcher::Scratch {
  detail::PrefixWalker walker;
  std::vector<uint32_t> candidates;  // bitset over trie positions
  std::vector<StateId> states;       // states already merged this step
  std::string remainders;            // ApplyDistinctItems: DistinctItems::CollectProspects
  std::vector<size_t> remainder_ends;
  std::string probe;                 // ApplyToStringItem: the copies' texts, each with '"'
  std::vector<std::string_view> probe_texts;
  std::vector<size_t> probe_refused;
  std::string decoded;               // ApplyToStringItem: an escaped token's text
};

using detail::MatcherAccess;
using detail::Recognizer;

TokenMatcher::TokenMatcher(std::shared_ptr<const CompiledGrammar> compiled)
    : TokenMatcher(compiled, Matcher(compiled->automaton_ptr(), compiled->limits())) {
  matcher_.SetTokenIds(compiled_->token_ids());
}

TokenMatcher::TokenMatcher(std::shared_ptr<const CompiledGrammar> compiled, Matcher matcher)
    : compiled_(std::move(compiled)),
      matcher_(std::move(matcher)),
      scratch_(std::make_unique<Scratch>()) {}

TokenMatcher::~TokenMatcher() = default;
TokenMatcher::TokenMatcher(TokenMatcher&&) noexcept = default;
TokenMatcher& TokenMatcher::operator=(TokenMatcher&&) noexcept = default;

TokenMatcher TokenMatcher::Fork() const {
  TokenMatcher fork(compiled_, matcher_.Fork());
  fork.prefetch_ = false;
  return fork;
}

TokenMatcher TokenMatcher::ForkState() const {
  TokenMatcher fork(compiled_, matcher_.ForkState());
  fork.prefetch_ = false;
  return fork;
}

bool TokenMatcher::AcceptToken(TokenId token_id) {
  ++generation_;
  const Vocab& vocab = compiled_->vocab();
  std::string_view bytes = vocab.Token(token_id);  // throws VocabError when out of range
  if (vocab.IsEos(token_id)) return matcher_.AcceptEos();
  if (bytes.empty()) return false;
  if (!matcher_.AcceptToken(static_cast<uint32_t>(token_id), bytes, !vocab.IsSpecial(token_id))) {
    return false;
  }
  PrefetchNext();
  return true;
}

bool TokenMatcher::AcceptBytes(std::string_view bytes) {
  ++generation_;
  if (!matcher_.AcceptBytes(bytes)) return false;
  PrefetchNext();
  return true;
}

void TokenMatcher::Rollback(size_t n) {
  ++generation_;
  matcher_.Rollback(n);
}

void TokenMatcher::Reset() {
  ++generation_;
  matcher_.Reset();
}

size_t TokenMatcher::MaskWords() const { return detail::WordsFor(compiled_->vocab().size()); }

void TokenMatcher::CheckRow(size_t num_words) const {
  if (num_words < MaskWords()) {
    throw std::invalid_argument("bitmask row has " + std::to_string(num_words) +
                                " int32 words, the vocabulary needs " +
                                std::to_string(MaskWords()));
  }
}

// EOS bits when the sentence may end here.
void TokenMatcher::AddEosBits(uint32_t* words) {
  if (!matcher_.CanTerminate()) return;
  for (TokenId id : compiled_->vocab().eos_ids()) detail::SetBit(words, static_cast<uint32_t>(id));
}

// Zeroes the row, then the EOS bits.
void TokenMatcher::BeginMask(uint32_t* words, size_t num_words) {
  CheckRow(num_words);
  std::memset(words, 0, num_words * sizeof(uint32_t));
  AddEosBits(words);
}

// Tokens allowed through token-reference edges. Negated edges first: "every token but x".
void TokenMatcher::AddTokenRefBits(uint32_t* words) {
  const Recognizer& recognizer = MatcherAccess::recognizer(matcher_);
  const Automaton& a = compiled_->automaton();
  const Grammar& g = a.grammar();
  const std::vector<int64_t>& ids = *compiled_->token_ids();
  const Vocab& vocab = compiled_->vocab();
  int64_t excluded = -1;
  bool any = false;
  for (const detail::Item& it : recognizer.items()) {
    for (const TokenEdge& e : a.TokenEdges(it.state)) {
      if (!g.node(e.node).negated) continue;
      if (excluded >= 0 && excluded != ids[e.node]) any = true;
      excluded = ids[e.node];
    }
  }
  if (excluded >= 0) {
    // "Every token but x" adds every token except x: x keeps the bit the row had (from the
    // cache or the EOS bits; an EOS id's bit depends on CanTerminate() alone).
    const uint32_t x = static_cast<uint32_t>(excluded);
    const bool had = detail::TestBit(words, x);
    const std::vector<uint32_t>& all = compiled_->any_token_words();
    for (size_t i = 0; i < all.size(); ++i) words[i] |= all[i];
    if (!any && !vocab.IsEos(static_cast<TokenId>(excluded)) && !had) detail::ClearBit(words, x);
  }
  for (const detail::Item& it : recognizer.items()) {
    for (const TokenEdge& e : a.TokenEdges(it.state)) {
      const TokenId id = static_cast<TokenId>(ids[e.node]);
      if (g.node(e.node).negated || vocab.IsEos(id) || vocab.Token(id).empty()) continue;
      detail::SetBit(words, static_cast<uint32_t>(id));
    }
  }
}

void TokenMatcher::FillMaskReference(uint32_t* words, size_t num_words) {
  BeginMask(words, num_words);
  if (matcher_.IsTerminated()) return;
  AddTokenRefBits(words);
  Recognizer& recognizer = MatcherAccess::recognizer(matcher_);
  const TokenTrie& trie = compiled_->vocab().trie();
  scratch_->walker.Begin(&recognizer, compiled_->vocab().max_token_length());
  detail::WalkAllTokens(scratch_->walker, trie, words);
  scratch_->walker.End();
  ApplyWhitespaceBound(words);
  ApplyDistinctItems(words);
}

// The cached bits first, so that the row is written in one pass when an entry is a bitset (a
// free stretch's nearly all-ones row is one copy, not a clear and an OR); the EOS and
// token-reference bits only add bits, so their order does not matter (AddTokenRefBits keeps a
// negated reference's excluded token as the row had it).
void TokenMatcher::FillMask(uint32_t* words, size_t num_words) {
  if (matcher_.IsTerminated()) {
    BeginMask(words, num_words);
    return;
  }
  CheckRow(num_words);
  if (ahead_ != nullptr && TakeMaskFilledAhead(words, num_words)) return;
  WriteCachedBits(words, num_words);
  AddEosBits(words);
  AddTokenRefBits(words);
  ApplyWhitespaceBound(words);
  ApplyDistinctItems(words);
}

void TokenMatcher::ApplyWhitespaceBound(uint32_t* words) const {
  const detail::WhitespaceFilter* filter = compiled_->whitespace_filter();
  if (filter != nullptr) filter->Apply(words, matcher_.WhitespaceRun());
}

void TokenMatcher::ApplyDistinctItems(uint32_t* words) {
  detail::DistinctItems* distinct = MatcherAccess::distinct_items(matcher_);
  if (distinct == nullptr || !distinct->Active()) return;
  const Vocab& vocab = compiled_->vocab();
  const detail::DistinctItems::Mark mark = distinct->GetMark();
  // A trial scan of the token's bytes first: only a token that closes a copy, begins a copied
  // literal, ends a value inside an item (where the matcher may walk a forced rest), separates
  // two items (the set of values may have run out) or leaves a string or number item that may
  // still become a copy can be refused; those get the exact accept test.
  const bool item_level = distinct->AtItemLevel();  // (a number item may begin or go on)
  auto check = [&](TokenId id) {
    const auto bit = static_cast<uint32_t>(id);
    if (!detail::TestBit(words, bit) || vocab.IsEos(id) || vocab.IsSpecial(id)) return;
    const std::string_view bytes = vocab.Token(id);
    if (!item_level && bytes.find_first_of("\"}]tfn, \t\n\r") == std::string_view::npos) {
      return;
    }
    bool may_refuse = false;
    for (char c : bytes) {
      const detail::DistinctItems::Closed scan = distinct->Apply(static_cast<uint8_t>(c), 0, true);
      if (scan.count > 0 || !scan.literal_copy.empty() || scan.settles || scan.next_item) {
        may_refuse = true;
        break;
      }
    }
    // Ending inside a string or number item that can still become a copy: the matcher
    // searches there (a prefix the token went through on the way is no dead end if the
    // token's end is none).
    may_refuse = may_refuse || ((distinct->InNumberItem() || distinct->InStringItem()) &&
                                distinct->TopItemMayCopy());
    distinct->UndoTo(mark);
    if (!may_refuse) return;
    bool accepted = false;
    try {
      accepted = MatcherAccess::TryToken(matcher_, static_cast<uint32_t>(id), bytes);
    } catch (const LimitError&) {
      // Refused, as the masks refuse a token whose step is too large.
    }
    if (!accepted) detail::ClearBit(words, bit);
  };
  auto check_allowed = [&] {
    const size_t words_used = detail::WordsFor(vocab.size());
    for (size_t w = 0; w < words_used; ++w) {
      for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
        check(static_cast<TokenId>(w * 32 + static_cast<size_t>(__builtin_ctz(bits))));
      }
    }
  };
  const Vocab::JsonTokenLists& lists = vocab.JsonTokens();
  if (distinct->InStringItem()) {
    ApplyToStringItem(words, check);
    return;
  }
  if (distinct->AtItemLevel()) {
    if (distinct->InString()) {  // only a quote can end the string item
      for (TokenId id : lists.quote) check(id);
    } else {
      check_allowed();
    }
    return;
  }
  if (!distinct->InString()) {
    if (distinct->InScalar()) {
      check_allowed();  // a number or literal: few tokens continue it
    } else {
      for (TokenId id : lists.value_end) check(id);
    }
    return;
  }
  // In a string inside an item only a quote ends anything. Unless the item can still become a
  // copy, only a token that goes on to another whole value after the quote (quote_more) can be
  // refused (a ',' after it cannot be: the array's items are containers here, and only string
  // items run out); with every copy known, also those whose text before the quote is what one
  // of them still needs.
  Scratch& s = *scratch_;
  s.remainders.clear();
  s.remainder_ends.clear();
  bool all_known = true;
  const bool possible = distinct->CollectProspects(&s.remainders, &s.remainder_ends, &all_known);
  if (possible && !all_known) {
    for (TokenId id : lists.quote) check(id);
    return;
  }
  for (TokenId id : lists.quote_more) check(id);
  if (!possible) return;
  auto content = [&](TokenId id) {
    const std::string_view bytes = vocab.Token(id);
    return bytes.substr(0, bytes.find('"'));
  };
  for (size_t k = 0, begin = 0; k < s.remainder_ends.size(); begin = s.remainder_ends[k++]) {
    const std::string_view want =
        std::string_view(s.remainders).substr(begin, s.remainder_ends[k] - begin);
    auto it = std::lower_bound(lists.quote.begin(), lists.quote.end(), want,
                               [&](TokenId id, std::string_view w) { return content(id) < w; });
    for (; it != lists.quote.end() && content(*it) == want; ++it) check(*it);
  }
}

// Inside a string item: a token is refused where it closes a copy (the quote tokens' trial
// scans) or where the item can only become copies (Matcher: StringItemCanBeNew). That needs
// some earlier item the string can still become, and happens on the way along that item's
// text: each such text (and its closing quote) is probed once, and the tokens that run through
// the refused byte are the run of the sorted tokens that start with the text up to it. Tokens
// with an escape may spell the same text otherwise: they are tested one by one.
template <typename Check>
void TokenMatcher::ApplyToStringItem(uint32_t* words, const Check& check) {
  detail::DistinctItems* distinct = MatcherAccess::distinct_items(matcher_);
  const Vocab& vocab = compiled_->vocab();
  const Vocab::JsonTokenLists& lists = vocab.JsonTokens();
  for (TokenId id : lists.quote) check(id);  // closing a copy, or what follows the quote
  Scratch& s = *scratch_;
  s.remainders.clear();
  s.remainder_ends.clear();
  bool all_known = true;
  if (!distinct->CollectProspects(&s.remainders, &s.remainder_ends, &all_known)) return;
  const bool by_tokens = MatcherAccess::recognizer(matcher_).HasTokenEdges();
  auto exact = [&](TokenId id) {
    const auto bit = static_cast<uint32_t>(id);
    if (!detail::TestBit(words, bit)) return;
    bool accepted = false;
    try {
      accepted = MatcherAccess::TryToken(matcher_, bit, vocab.Token(id));
    } catch (const LimitError&) {
      // Refused, as the masks refuse a token whose step is too large.
    }
    if (!accepted) detail::ClearBit(words, bit);
  };
  if (!all_known) {  // inside an escape: few tokens continue it
    const size_t words_used = detail::WordsFor(vocab.size());
    for (size_t w = 0; w < words_used; ++w) {
      for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
        exact(static_cast<TokenId>(w * 32 + static_cast<size_t>(__builtin_ctz(bits))));
      }
    }
    return;
  }
  // A token with an escape can spell a copy's text otherwise: tested when what it spells before
  // any quote keeps some copy possible (or stops inside an escape).
  for (TokenId id : lists.escaped) {
    if (!detail::TestBit(words, static_cast<uint32_t>(id))) continue;
    s.decoded.clear();
    const std::string_view bytes = vocab.Token(id);
    const bool whole = detail::DecodeJsonStringPart(bytes.substr(0, bytes.find('"')), &s.decoded);
    bool keeps = !whole;
    for (size_t k = 0, begin = 0; k < s.remainder_ends.size() && !keeps;
         begin = s.remainder_ends[k++]) {
      const std::string_view copy =
          std::string_view(s.remainders).substr(begin, s.remainder_ends[k] - begin);
      keeps = copy.substr(0, s.decoded.size()) == s.decoded;
    }
    if (keeps) exact(id);
  }
  // Each possible copy's text and closing quote, sorted so that shared prefixes are probed once.
  s.probe.clear();
  s.probe_texts.clear();
  for (size_t k = 0, begin = 0; k < s.remainder_ends.size(); begin = s.remainder_ends[k++]) {
    s.probe.append(s.remainders, begin, s.remainder_ends[k] - begin);
    s.probe.push_back('"');
  }
  for (size_t k = 0, begin = 0; k < s.remainder_ends.size(); ++k) {
    const size_t size = s.remainder_ends[k] - (k == 0 ? 0 : s.remainder_ends[k - 1]) + 1;
    s.probe_texts.push_back(std::string_view(s.probe).substr(begin, size));
    begin += size;
  }
  std::sort(s.probe_texts.begin(), s.probe_texts.end());
  s.probe_texts.erase(std::unique(s.probe_texts.begin(), s.probe_texts.end()),
                      s.probe_texts.end());
  MatcherAccess::ProbeTexts(matcher_, s.probe_texts, &s.probe_refused);
  for (size_t k = 0; k < s.probe_texts.size(); ++k) {
    const size_t refused = s.probe_refused[k];
    if (refused == std::string::npos) continue;
    const std::string_view through = s.probe_texts[k].substr(0, refused + 1);
    auto it = std::lower_bound(
        lists.by_bytes.begin(), lists.by_bytes.end(), through,
        [&](TokenId id, std::string_view text) { return vocab.Token(id) < text; });
    for (; it != lists.by_bytes.end() && vocab.Token(*it).substr(0, through.size()) == through;
         ++it) {
      if (by_tokens) {
        exact(*it);  // a token reference may still take it
      } else {
        detail::ClearBit(words, static_cast<uint32_t>(*it));
      }
    }
  }
}

// The union of the accepted sets of the items' states (written over the row: the first bitset
// copied, the rest OR-ed in), then a walk from the full state over the union
// of their context-dependent tokens. Items whose stack node was predicted in the last step are
// covered by the item that predicted them (its isolated walk makes the same prediction).
void TokenMatcher::WriteCachedBits(uint32_t* words, size_t num_words) {
  Recognizer& recognizer = MatcherAccess::recognizer(matcher_);
  bool written = false;  // words[0, num_words) hold a value (else: not yet touched)
  Scratch& s = *scratch_;
  const CompiledGrammar::MaskCache& cache = compiled_->mask_cache();
  const TokenTrie* trie = nullptr;  // fetched only when some token is context-dependent
  const uint64_t step = recognizer.step();
  s.states.clear();
  for (const detail::Item& it : recognizer.items()) {
    if (CoveredByPredictor(recognizer, it, step)) continue;
    if (std::find(s.states.begin(), s.states.end(), it.state) != s.states.end()) continue;
    s.states.push_back(it.state);
    const detail::StateMask& m = cache.StateMaskOf(it.state);
    if (written) {
      m.accepted.OrInto(words);
    } else if (m.accepted.is_bitset()) {
      const size_t n = m.accepted.num_words();  // WordsFor(vocabulary size) <= num_words
      m.accepted.CopyInto(words);
      std::memset(words + n, 0, (num_words - n) * sizeof(uint32_t));
      written = true;
    } else {
      std::memset(words, 0, num_words * sizeof(uint32_t));
      m.accepted.OrInto(words);
      written = true;
    }
    if (m.dependent.empty()) continue;
    if (trie == nullptr) {
      trie = &compiled_->vocab().trie();
      s.candidates.assign(detail::WordsFor(trie->size()), 0);
    }
    m.dependent.OrInto(s.candidates.data());
  }
  if (!written) std::memset(words, 0, num_words * sizeof(uint32_t));
  if (trie == nullptr) return;
  s.walker.Begin(&recognizer, compiled_->vocab().max_token_length());
  detail::WalkCandidates(s.walker, *trie, s.candidates.data(), words);
  s.walker.End();
}

void TokenMatcher::PrefetchNext() {
  ahead_.reset();
  detail::CacheCore& core = compiled_->mask_cache().core();
  if (!prefetch_ || !core.prefetch() || matcher_.IsTerminated()) return;
  const Recognizer& recognizer = MatcherAccess::recognizer(matcher_);
  const uint64_t step = recognizer.step();
  bool cheap = true;
  size_t dependent = 0;
  for (const detail::Item& it : recognizer.items()) {
    if (CoveredByPredictor(recognizer, it, step)) continue;
    const detail::StateMask* m = core.FilledMaskOf(it.state);
    if (m == nullptr) {
      core.Prefetch(it.state);
      cheap = false;
    } else {
      dependent += m->dependent.size();
      cheap = cheap && dependent <= kFillAheadDependent;
    }
  }
  const detail::DistinctItems* distinct = MatcherAccess::distinct_items(matcher_);
  if (cheap || (distinct != nullptr && distinct->Active())) return;
  ahead_ = std::make_shared<detail::FillAhead>(ForkState(), generation_);
  std::weak_ptr<detail::FillAhead> weak = ahead_;
  detail::BackgroundPool::Shared().AddTask([weak] {
    if (std::shared_ptr<detail::FillAhead> ahead = weak.lock()) ahead->Run();
  });
}

bool TokenMatcher::TakeMaskFilledAhead(uint32_t* words, size_t num_words) {
  std::shared_ptr<detail::FillAhead> ahead = std::move(ahead_);
  if (ahead->generation() != generation_ || !ahead->TakeInto(words, num_words)) return false;
  compiled_->mask_cache().core().CountMaskFilledAhead();
  return true;
}

bool TokenMatcher::FillIsCached() const {
  if (matcher_.IsTerminated()) return true;
  const detail::DistinctItems* distinct = MatcherAccess::distinct_items(matcher_);
  if (distinct != nullptr && distinct->Active()) return false;  // trial scans of tokens follow
  const CompiledGrammar::MaskCache& cache = compiled_->mask_cache();
  const Recognizer& recognizer = MatcherAccess::recognizer(matcher_);
  const uint64_t step = recognizer.step();
  size_t dependent = 0;
  for (const detail::Item& it : recognizer.items()) {
    if (CoveredByPredictor(recognizer, it, step)) continue;
    const detail::StateMask* m = cache.FilledMaskOf(it.state);
    if (m == nullptr) return false;
    dependent += m->dependent.size();
    if (dependent > kMaxCheapDependent) return false;
  }
  return true;
}

std::vector<StateId> TokenMatcher::ItemStates() const {
  std::vector<StateId> out;
  for (const detail::Item& it : MatcherAccess::recognizer(matcher_).items()) {
    out.push_back(it.state);
  }
  return out;
}

std::vector<TokenId> TokenMatcher::AllowedTokens() {
  std::vector<uint32_t> words(MaskWords());
  FillMask(words.data(), words.size());
  std::vector<TokenId> out;
  const size_t v = compiled_->vocab().size();
  for (size_t id = 0; id < v; ++id) {
    if (detail::TestBit(words.data(), static_cast<uint32_t>(id))) {
      out.push_back(static_cast<TokenId>(id));
    }
  }
  return out;
}

}  // namespace gbnf
