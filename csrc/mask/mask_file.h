// The persistent mask cache: a compiled grammar's filled mask-cache entries saved to a file and
// loaded back, memory-mapped, into a later compile of the same grammar over the same vocabulary.
//
// Layout (little-endian, every offset 8-byte aligned):
//   header (128 bytes): magic "GSMASK\x1a\n", format version, header size, the grammar's
//     fingerprint (two 64-bit hashes of its automaton), the vocabulary's (its fingerprint and a
//     second hash of its trie), vocabulary size, trie size, automaton states, max_state_size,
//     entry count, payload size, payload checksum, header checksum;
//   payload: one 40-byte record per entry (state, forms, member counts, word offsets and
//     counts of the accepted and dependent sets), then the sets' 32-bit words.
// A file is used only when everything checks: magic, version, sizes, both fingerprints, both
// checksums, and every record (state in range and not repeated, words inside the payload,
// list members ascending and inside their universe, bitsets of the right length with no bit past
// it and the recorded count). Anything else is refused with the reason, and nothing is loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gbnf_sampler/compiled_grammar.h"

namespace gbnf::detail {

// 2: states numbered canonically (rules in id order), since rules are built on first reach.
inline constexpr uint32_t kMaskFileVersion = 2;

// Fingerprints that name a cache file: the grammar's automaton and the vocabulary.
struct MaskFileKey {
  uint64_t grammar[2] = {0, 0};
  uint64_t vocab[2] = {0, 0};
};
MaskFileKey MaskFileKeyOf(const CompiledGrammar& compiled);
// "<grammar hex>-<vocab hex>-<max_state_size>.gsmask"
std::string MaskFileName(const CompiledGrammar& compiled);

// Writes every filled entry of `compiled` to `path` (through a temporary file renamed over it).
// Returns the number of entries written; throws std::runtime_error on an I/O error.
size_t SaveMaskFile(const CompiledGrammar& compiled, const std::string& path);

struct MaskFileLoad {
  size_t loaded = 0;   // entries filled from the file
  std::string error;   // why the file was refused (empty when it was used)
};
// Maps `path` and fills the entries it holds (states already filled keep theirs).
MaskFileLoad LoadMaskFile(const CompiledGrammar& compiled, const std::string& path);

}  // namespace gbnf::detail
