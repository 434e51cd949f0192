// Token bitmasks and the kernel that applies them to logits (CPU).
//
// Layout (xgrammar's): a bitmask row is an array of int32 words, ceil(vocab / 32) of them; bit i
// of word j set means token 32 * j + i is allowed. A batch is a 2-D array [batch, words].
//
// The functions here take raw pointers, shapes and strides and trust them: checking a caller's
// arrays (dtype, shape, bounds, writability) is the job of the layer that made the pointers
// (the Python bindings, the torch helpers). Nothing here allocates, throws, or prints.
#pragma once

#include <cstdint>

namespace gbnf {

inline constexpr int64_t kBitmaskWordBits = 32;
// Bit patterns of negative infinity in the 16-bit float formats.
inline constexpr uint16_t kFloat16NegInfBits = 0xFC00;
inline constexpr uint16_t kBFloat16NegInfBits = 0xFF80;

// Number of int32 words of one bitmask row covering `vocab_size` tokens (vocab_size >= 0; no
// value overflows, INT64_MAX included).
int64_t BitmaskWords(int64_t vocab_size);

// Single-token access. `token_id` must be in [0, 32 * words of the row).
bool TestBit(const int32_t* bitmask, int64_t token_id);
void SetBit(int32_t* bitmask, int64_t token_id);
void ClearBit(int32_t* bitmask, int64_t token_id);

// Sets every word of a row to all-allowed (-1) or all-disallowed (0).
void FillBitmask(int32_t* bitmask, int64_t words, bool allowed);

// Number of allowed tokens among ids [0, vocab_size) of one contiguous row. Bits at or past
// vocab_size in the last word are ignored.
int64_t CountAllowed(const int32_t* bitmask, int64_t vocab_size);

enum class LogitsDtype : uint8_t {
  kFloat32,
  kFloat16,   // IEEE half, handled as uint16_t bit patterns
  kBFloat16,  // bfloat16, handled as uint16_t bit patterns
};

// A [rows, cols] logits array. Strides count elements (not bytes) and may be any value,
// negative included.
struct LogitsView {
  void* data = nullptr;
  LogitsDtype dtype = LogitsDtype::kFloat32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
};

// A [rows, words] bitmask. Strides count words.
struct BitmaskView {
  const int32_t* data = nullptr;
  int64_t rows = 0;
  int64_t words = 0;
  int64_t row_stride = 0;
  int64_t word_stride = 1;
};

// Sets logits[r][t] = -inf for every disallowed token t of the selected rows r; allowed tokens
// are left untouched. Row r of the logits is masked by row r of the bitmask. Tokens at or past
// `vocab_size` or past what the bitmask covers (32 * words) are always disallowed, so padded
// logits get -inf in their extra columns.
//
// `row_indices` (may be null: all rows) lists `num_indices` rows to mask, each in [0, rows).
// Preconditions: logits.rows == bitmask.rows, every pointer valid for its shape and strides,
// vocab_size >= 0.
void ApplyBitmask(const LogitsView& logits, const BitmaskView& bitmask, int64_t vocab_size,
                  const int64_t* row_indices, int64_t num_indices);

}  // namespace gbnf
