// numpy arrays and bytes objects -> the core's views, rows and spans, for the binding files.
// Every check of a caller's buffer lives here (type, dtype and byte order, shape, strides,
// alignment, writability, row indices); each misuse is a TypeError or ValueError naming what was
// expected and what came. Bitmasks may also be CPU torch tensors or any array with DLPack
// (`__dlpack__`) or the buffer protocol: BitmaskArray views them as numpy arrays without a copy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gbnf_sampler/bitmask.h"
#include "gbnf_sampler/vocab.h"

namespace gbnf::bindings {

// apply_bitmask(logits, bitmask, *, indices, vocab_size) on numpy arrays (None: every row, and
// the logits' width).
void ApplyBitmaskNumpy(const pybind11::object& logits, const pybind11::object& bitmask,
                       const pybind11::object& indices, const pybind11::object& vocab_size);

// Raw-pointer apply_bitmask (torch CPU tensors, ctypes buffers). The caller vouches for the
// pointers, shapes and strides; only the dtype name and the signs of the counts are checked.
void UnsafeApplyBitmask(uintptr_t logits_ptr, const std::string& dtype, int64_t rows,
                        int64_t cols, int64_t row_stride, int64_t col_stride,
                        uintptr_t bitmask_ptr, int64_t words, int64_t bitmask_row_stride,
                        int64_t vocab_size, uintptr_t indices_ptr, int64_t num_indices);

// BitmaskWords with vocab_size >= 0 checked.
int64_t CheckedBitmaskWords(int64_t vocab_size);

// Test hooks of the bit helpers on one bitmask row (1-D, contiguous, aligned int32).
bool BitmaskRowTest(const pybind11::object& row, int64_t token_id);
void BitmaskRowSet(const pybind11::object& row, int64_t token_id, bool allowed);
void BitmaskRowFill(const pybind11::object& row, bool allowed);
int64_t BitmaskRowCountAllowed(const pybind11::object& row, int64_t vocab_size);

// A numpy view of a bitmask, sharing its memory: a numpy array as is; an object with
// `__dlpack__` (torch tensors, JAX, CuPy...) through numpy.from_dlpack when its memory is on the
// CPU (ValueError naming the device otherwise); an object with the buffer protocol through
// numpy.asarray. Anything else is a TypeError. `fn` names the caller in messages. Dtype, shape
// and writability are checked by the callers (MaskRowAt and friends).
pybind11::array BitmaskArray(const pybind11::object& bitmask, const char* fn);

// Rows of a writeable int32 bitmask for the token matchers to fill: rows start `stride` words
// apart, each `num_words` contiguous words.
struct MaskRows {
  uint32_t* words = nullptr;
  size_t num_words = 0;
  size_t stride = 0;
};
// Row `index` of a 1-D (the array itself) or 2-D bitmask.
MaskRows MaskRowAt(pybind11::array& bitmask, int64_t index);
// The first `count` rows of a 2-D bitmask (fill_masks).
MaskRows MaskRowsFor(pybind11::array& bitmask, size_t count);
// The start of row rows[i] of a 2-D bitmask for each i (fill_masks with rows): every row inside
// the bitmask and no row twice (two matchers never write one row).
std::vector<uint32_t*> MaskRowPointers(pybind11::array& bitmask, const std::vector<int64_t>& rows);

pybind11::array_t<int32_t> ToInt32Array(const std::vector<TokenId>& ids);
// The bytes object's buffer; valid while `data` lives.
std::string_view BytesView(const pybind11::bytes& data);

}  // namespace gbnf::bindings
