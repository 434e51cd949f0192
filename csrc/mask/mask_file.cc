#include "mask/mask_file.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "mask/cache_core.h"
#include "mask/mask_cache.h"

#if defined(_WIN32)
#include <fstream>
#include <iterator>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace gbnf::detail {
namespace {

constexpr char kMagic[8] = {'G', 'S', 'M', 'A', 'S', 'K', '\x1a', '\n'};

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t grammar[2];
  uint64_t vocab[2];
  uint32_t vocab_size;
  uint32_t trie_size;
  uint32_t num_states;
  uint32_t max_state_size;
  uint32_t num_entries;
  uint32_t reserved;
  uint64_t payload_bytes;
  uint64_t payload_checksum;
  uint64_t header_checksum;  // over the bytes before this field
  uint8_t padding[128 - 96];
};
static_assert(sizeof(Header) == 128, "header layout");

struct Record {
  uint32_t state;
  uint32_t forms;  // bit 0: accepted is a bitset; bit 1: dependent is a bitset
  uint32_t accepted_count;
  uint32_t dependent_count;
  uint64_t accepted_offset;  // bytes from the payload's start
  uint32_t accepted_words;
  uint32_t dependent_words;
  uint64_t dependent_offset;
};
static_assert(sizeof(Record) == 40, "record layout");

// Two independent 64-bit hashes over a stream of 64-bit values.
class Hash128 {
 public:
  void Add(uint64_t v) {
    a_ = (a_ ^ v) * 0x100000001B3ull;
    a_ ^= a_ >> 29;
    b_ += v * 0x9E3779B97F4A7C15ull;
    b_ = ((b_ << 31) | (b_ >> 33)) * 0xC2B2AE3D27D4EB4Full;
  }
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    Add(n);
    for (size_t i = 0; i < n; i += 8) {
      uint64_t v = 0;
      std::memcpy(&v, p + i, n - i < 8 ? n - i : 8);
      Add(v);
    }
  }
  uint64_t first() const { return a_; }
  uint64_t second() const { return b_ ^ (b_ >> 27); }

 private:
  uint64_t a_ = 0xCBF29CE484222325ull;
  uint64_t b_ = 0x6A09E667F3BCC909ull;
};

uint64_t Checksum(const void* data, size_t n) {
  Hash128 h;
  h.Bytes(data, n);
  return h.first() ^ (h.second() * 0x9E3779B97F4A7C15ull);
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A read-only mapping of a whole file (or its bytes read into memory where mmap is missing).
class Mapping {
 public:
  static std::shared_ptr<const Mapping> Open(const std::string& path, std::string* error);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Mapping() = default;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  std::vector<unsigned char> copy_;  // no mmap
  bool mapped_ = false;
};

std::shared_ptr<const Mapping> Mapping::Open(const std::string& path, std::string* error) {
  std::shared_ptr<Mapping> m(new Mapping());
#if defined(_WIN32)
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open the file";
    return nullptr;
  }
  m->copy_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  m->data_ = m->copy_.data();
  m->size_ = m->copy_.size();
#else
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    *error = std::string("cannot open the file: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Header))) {
    ::close(fd);
    *error = "the file is shorter than its header (truncated?)";
    return nullptr;
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    *error = std::string("cannot map the file: ") + std::strerror(errno);
    return nullptr;
  }
  m->data_ = static_cast<const unsigned char*>(p);
  m->size_ = static_cast<size_t>(st.st_size);
  m->mapped_ = true;
#endif
  return m;
}

Mapping::~Mapping() {
#if !defined(_WIN32)
  if (mapped_) ::munmap(const_cast<unsigned char*>(data_), size_);
#endif
}

uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// State numbers that do not depend on the order rules were built in (the automaton builds each
// rule on first reach, so its state ids differ from run to run): the rules the root reaches, in
// rule id order, each rule's states in their own order. Builds the whole automaton.
class CanonicalStates {
 public:
  explicit CanonicalStates(const Automaton& a) : a_(a), index_(a.num_rules(), kNone) {
    for (RuleId r : a.BuildAll()) {
      index_[r] = static_cast<uint32_t>(rules_.size());
      rules_.push_back(r);
      base_.push_back(total_);
      total_ += a.RuleStates(r);
    }
  }
  size_t size() const { return total_; }
  const std::vector<RuleId>& rules() const { return rules_; }
  size_t Base(size_t i) const { return base_[i]; }
  uint64_t Of(StateId s) const {
    const RuleId r = a_.RuleOf(s);
    return base_[index_[r]] + (s - a_.RuleStart(r));
  }
  StateId From(uint64_t c) const {  // c < size()
    const size_t i = static_cast<size_t>(std::upper_bound(base_.begin(), base_.end(), c) -
                                         base_.begin()) - 1;
    return static_cast<StateId>(a_.RuleStart(rules_[i]) + (c - base_[i]));
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  const Automaton& a_;
  std::vector<uint32_t> index_;  // per rule: position in rules_
  std::vector<RuleId> rules_;
  std::vector<uint64_t> base_;
  uint64_t total_ = 0;
};

}  // namespace

MaskFileKey MaskFileKeyOf(const CompiledGrammar& compiled) {
  MaskFileKey key;
  const Automaton& a = compiled.automaton();
  const CanonicalStates canonical(a);
  Hash128 g;
  g.Add(canonical.size());
  g.Add(a.num_rules());
  for (size_t i = 0; i < canonical.rules().size(); ++i) {
    const RuleId r = canonical.rules()[i];
    g.Add((uint64_t{r} << 1) | a.RuleNullable(r));
    g.Add(canonical.Base(i));
  }
  for (uint64_t c = 0; c < canonical.size(); ++c) {
    const StateId s = canonical.From(c);
    g.Add((a.IsPureFinal(s) ? 2 : a.IsFinal(s) ? 1 : 0) | (uint64_t{a.ByteEdges(s).size()} << 8) |
          (uint64_t{a.CallEdges(s).size()} << 36));
    for (const ByteEdge& e : a.ByteEdges(s)) {
      g.Add((canonical.Of(e.target) << 16) | (e.lo << 8) | e.hi);
    }
    for (const CallEdge& e : a.CallEdges(s)) g.Add((canonical.Of(e.target) << 32) | e.rule);
    for (const TokenEdge& e : a.TokenEdges(s)) g.Add((canonical.Of(e.target) << 32) | e.node);
  }
  key.grammar[0] = g.first();
  key.grammar[1] = g.second();
  const Vocab& vocab = compiled.vocab();
  const TokenTrie& trie = vocab.trie();
  Hash128 v;
  v.Add(vocab.size());
  v.Add(trie.size());
  for (size_t p = 0; p < trie.size(); ++p) {
    const std::string_view bytes = trie.bytes(p);
    v.Add(static_cast<uint64_t>(trie.token_id(p)));
    v.Bytes(bytes.data(), bytes.size());
  }
  key.vocab[0] = vocab.fingerprint();
  key.vocab[1] = v.first() ^ v.second();
  return key;
}

std::string MaskFileName(const CompiledGrammar& compiled) {
  const MaskFileKey key = MaskFileKeyOf(compiled);
  return Hex(key.grammar[0]) + Hex(key.grammar[1]).substr(0, 8) + "-" + Hex(key.vocab[0]) + "-" +
         std::to_string(compiled.limits().max_state_size) + ".gsmask";
}

size_t SaveMaskFile(const CompiledGrammar& compiled, const std::string& path) {
  const auto filled = compiled.mask_cache().core().Filled();
  const CanonicalStates canonical(compiled.automaton());
  std::vector<Record> records(filled.size());
  std::vector<uint32_t> words;
  uint64_t offset = Align8(records.size() * sizeof(Record));
  auto put = [&](const TokenSet& set, uint64_t* at, uint32_t* count_words) {
    *at = offset;
    *count_words = static_cast<uint32_t>(set.num_words());
    words.insert(words.end(), set.words(), set.words() + set.num_words());
    if (set.num_words() % 2 != 0) words.push_back(0);  // keep offsets 8-byte aligned
    offset += Align8(set.num_words() * 4);
  };
  for (size_t i = 0; i < filled.size(); ++i) {
    const StateMask& m = *filled[i].second;
    Record& r = records[i];
    std::memset(&r, 0, sizeof(r));
    r.state = static_cast<uint32_t>(canonical.Of(filled[i].first));
    r.forms = (m.accepted.is_bitset() ? 1u : 0u) | (m.dependent.is_bitset() ? 2u : 0u);
    r.accepted_count = static_cast<uint32_t>(m.accepted.size());
    r.dependent_count = static_cast<uint32_t>(m.dependent.size());
    put(m.accepted, &r.accepted_offset, &r.accepted_words);
    put(m.dependent, &r.dependent_offset, &r.dependent_words);
  }
  std::vector<unsigned char> payload(Align8(records.size() * sizeof(Record)) + words.size() * 4, 0);
  if (!records.empty()) std::memcpy(payload.data(), records.data(), records.size() * sizeof(Record));
  if (!words.empty()) {
    std::memcpy(payload.data() + Align8(records.size() * sizeof(Record)), words.data(),
                words.size() * 4);
  }
  Header h;
  std::memset(&h, 0, sizeof(h));
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kMaskFileVersion;
  h.header_bytes = sizeof(Header);
  const MaskFileKey key = MaskFileKeyOf(compiled);
  std::memcpy(h.grammar, key.grammar, sizeof(h.grammar));
  std::memcpy(h.vocab, key.vocab, sizeof(h.vocab));
  h.vocab_size = static_cast<uint32_t>(compiled.vocab().size());
  h.trie_size = static_cast<uint32_t>(compiled.vocab().trie().size());
  h.num_states = static_cast<uint32_t>(canonical.size());
  h.max_state_size = compiled.limits().max_state_size;
  h.num_entries = static_cast<uint32_t>(records.size());
  h.payload_bytes = payload.size();
  h.payload_checksum = Checksum(payload.data(), payload.size());
  h.header_checksum = Checksum(&h, offsetof(Header, header_checksum));
  static std::atomic<uint64_t> counter{0};
#if defined(_WIN32)
  const uint64_t pid = 0;
#else
  const uint64_t pid = static_cast<uint64_t>(::getpid());
#endif
  const std::string tmp = path + ".tmp." + std::to_string(pid) + "." + std::to_string(++counter);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(&h, sizeof(h), 1, f) == 1 &&
                  (payload.empty() || std::fwrite(payload.data(), payload.size(), 1, f) == 1);
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
  return records.size();
}

namespace {

// Checks one stored set: `words` words at `offset` of the payload, `count` members below
// `universe`; a list ascending, a bitset of the universe's length with no bit past it.
const char* CheckSet(const unsigned char* payload, uint64_t payload_bytes, uint64_t offset,
                     uint32_t num_words, uint32_t count, bool bitset, size_t universe) {
  if (offset % 8 != 0 || offset > payload_bytes || uint64_t{num_words} * 4 > payload_bytes - offset) {
    return "a set lies outside the file";
  }
  const auto* w = reinterpret_cast<const uint32_t*>(payload + offset);
  if (!bitset) {
    if (num_words != count) return "a list's length differs from its count";
    for (uint32_t i = 0; i < num_words; ++i) {
      if (w[i] >= universe || (i > 0 && w[i] <= w[i - 1])) return "a list member is out of range";
    }
    return nullptr;
  }
  if (num_words != WordsFor(universe)) return "a bitset has the wrong length";
  uint64_t members = 0;
  for (uint32_t i = 0; i < num_words; ++i) members += static_cast<uint64_t>(PopCount(w[i]));
  if (universe % kWordBits != 0 && (w[num_words - 1] & ~LowBits(BitInWord(universe))) != 0) {
    return "a bitset has bits past its universe";
  }
  return members == count ? nullptr : "a bitset's count differs from its bits";
}

std::string CheckHeader(const Header& h, size_t file_bytes, const CompiledGrammar& compiled) {
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) return "not a gbnf-sampler mask cache file";
  if (h.version != kMaskFileVersion || h.header_bytes != sizeof(Header)) {
    return "format version " + std::to_string(h.version) + ", this build reads version " +
           std::to_string(kMaskFileVersion);
  }
  if (h.header_checksum != Checksum(&h, offsetof(Header, header_checksum))) {
    return "header checksum mismatch (corrupt file)";
  }
  const MaskFileKey key = MaskFileKeyOf(compiled);
  if (std::memcmp(h.grammar, key.grammar, sizeof(key.grammar)) != 0) {
    return "written for another grammar";
  }
  if (std::memcmp(h.vocab, key.vocab, sizeof(key.vocab)) != 0 ||
      h.vocab_size != compiled.vocab().size() || h.trie_size != compiled.vocab().trie().size()) {
    return "written for another vocabulary";
  }
  if (h.num_states != CanonicalStates(compiled.automaton()).size() ||
      h.max_state_size != compiled.limits().max_state_size) {
    return "written with other limits or another automaton";
  }
  if (h.payload_bytes != file_bytes - sizeof(Header) ||
      uint64_t{h.num_entries} * sizeof(Record) > h.payload_bytes) {
    return "size mismatch (truncated file?)";
  }
  return "";
}

}  // namespace

MaskFileLoad LoadMaskFile(const CompiledGrammar& compiled, const std::string& path) {
  MaskFileLoad out;
  std::shared_ptr<const Mapping> map = Mapping::Open(path, &out.error);
  if (!map) return out;
  if (map->size() < sizeof(Header)) {
    out.error = "the file is shorter than its header (truncated?)";
    return out;
  }
  Header h;
  std::memcpy(&h, map->data(), sizeof(h));
  out.error = CheckHeader(h, map->size(), compiled);
  if (!out.error.empty()) return out;
  const unsigned char* payload = map->data() + sizeof(Header);
  if (h.payload_checksum != Checksum(payload, h.payload_bytes)) {
    out.error = "payload checksum mismatch (corrupt file)";
    return out;
  }
  std::vector<Record> records(h.num_entries);
  if (!records.empty()) std::memcpy(records.data(), payload, records.size() * sizeof(Record));
  std::unordered_set<uint32_t> seen;
  const size_t v = compiled.vocab().size();
  const size_t t = compiled.vocab().trie().size();
  for (const Record& r : records) {
    const char* bad = r.state >= h.num_states || !seen.insert(r.state).second
                          ? "an entry names a state twice or out of range"
                          : CheckSet(payload, h.payload_bytes, r.accepted_offset, r.accepted_words,
                                     r.accepted_count, (r.forms & 1) != 0, v);
    if (bad == nullptr) {
      bad = CheckSet(payload, h.payload_bytes, r.dependent_offset, r.dependent_words,
                     r.dependent_count, (r.forms & 2) != 0, t);
    }
    if (bad != nullptr) {
      out.error = std::string(bad) + " (corrupt file)";
      return out;
    }
  }
  CacheCore& core = compiled.mask_cache().core();
  const CanonicalStates canonical(compiled.automaton());
  for (const Record& r : records) {
    auto mask = std::make_shared<StateMask>();
    const auto* words = reinterpret_cast<const uint32_t*>(payload);
    mask->accepted = TokenSet::View(words + r.accepted_offset / 4, r.accepted_words,
                                    r.accepted_count, (r.forms & 1) != 0, map);
    mask->dependent = TokenSet::View(words + r.dependent_offset / 4, r.dependent_words,
                                     r.dependent_count, (r.forms & 2) != 0, map);
    const size_t bytes = (size_t{r.accepted_words} + r.dependent_words) * 4;
    if (core.Adopt(canonical.From(r.state), std::move(mask), bytes)) ++out.loaded;
  }
  return out;
}

}  // namespace gbnf::detail
