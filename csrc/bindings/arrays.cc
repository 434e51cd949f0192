#include "bindings/arrays.h"

#include <algorithm>
#include <utility>

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

constexpr int kNpyArrayAligned = 0x0100;  // NPY_ARRAY_ALIGNED

std::string Str(const py::handle& h) { return py::str(h).cast<std::string>(); }

std::string ShapeText(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(a.shape(d));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

py::array RequireArray(const py::handle& obj, const char* name) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(std::string("apply_bitmask: ") + name + " must be a numpy.ndarray, got " +
                         Str(py::type::handle_of(obj).attr("__name__")));
  }
  return py::reinterpret_borrow<py::array>(obj);
}

// numpy spells native order '=' (and '|' where order does not apply).
bool IsNativeDtype(const py::dtype& dt) { return dt.byteorder() == '=' || dt.byteorder() == '|'; }

LogitsDtype LogitsDtypeOf(const py::array& logits) {
  const py::dtype dt = logits.dtype();
  if (IsNativeDtype(dt)) {
    if (dt.kind() == 'f' && dt.itemsize() == 4) return LogitsDtype::kFloat32;
    if (dt.kind() == 'f' && dt.itemsize() == 2) return LogitsDtype::kFloat16;
    if (dt.itemsize() == 2 && Str(dt.attr("name")) == "bfloat16") return LogitsDtype::kBFloat16;
  }
  throw py::type_error("apply_bitmask: logits must be float32, float16 or bfloat16 (native byte "
                       "order), got " + Str(dt));
}

void RequireInt32Bitmask(const py::array& bitmask) {
  const py::dtype dt = bitmask.dtype();
  if (dt.kind() != 'i' || dt.itemsize() != 4 || !IsNativeDtype(dt)) {
    throw py::type_error("apply_bitmask: bitmask must be int32, got " + Str(dt));
  }
}

void RequireNdim(const py::array& a, const char* name) {
  if (a.ndim() != 1 && a.ndim() != 2) {
    throw py::value_error(std::string("apply_bitmask: ") + name + " must be 1-D or 2-D, got " +
                          std::to_string(a.ndim()) + "-D with shape " + ShapeText(a));
  }
}

// Byte stride of dimension `dim` in elements; rejects strides that split an element.
int64_t ElementStride(const py::array& a, py::ssize_t dim, const char* name) {
  const py::ssize_t bytes = a.strides(dim);
  const py::ssize_t item = a.itemsize();
  if (bytes % item != 0) {
    throw py::value_error(std::string("apply_bitmask: ") + name + " stride of " +
                          std::to_string(bytes) + " bytes is not a multiple of the item size " +
                          std::to_string(item));
  }
  return bytes / item;
}

void RequireAligned(const py::array& a, const char* name) {
  if ((a.flags() & kNpyArrayAligned) == 0) {
    throw py::value_error(std::string("apply_bitmask: ") + name + " must be aligned to its dtype");
  }
}

LogitsView ToLogitsView(py::array& logits) {
  LogitsView v;
  v.dtype = LogitsDtypeOf(logits);
  RequireNdim(logits, "logits");
  if (!logits.writeable()) {
    throw py::value_error("apply_bitmask: logits must be writeable, got a read-only array");
  }
  RequireAligned(logits, "logits");
  const bool two_d = logits.ndim() == 2;
  v.data = logits.mutable_data();
  v.rows = two_d ? logits.shape(0) : 1;
  v.cols = logits.shape(logits.ndim() - 1);
  v.row_stride = two_d ? ElementStride(logits, 0, "logits") : 0;
  v.col_stride = ElementStride(logits, logits.ndim() - 1, "logits");
  return v;
}

BitmaskView ToBitmaskView(const py::array& bitmask) {
  RequireInt32Bitmask(bitmask);
  RequireNdim(bitmask, "bitmask");
  RequireAligned(bitmask, "bitmask");
  const bool two_d = bitmask.ndim() == 2;
  // A broadcast (stride-0) view can be far wider than memory; bit indices must fit in int64.
  if (bitmask.shape(bitmask.ndim() - 1) > (int64_t{1} << 56)) {
    throw py::value_error("apply_bitmask: bitmask rows of " +
                          std::to_string(bitmask.shape(bitmask.ndim() - 1)) +
                          " words are too wide");
  }
  BitmaskView v;
  v.data = static_cast<const int32_t*>(bitmask.data());
  v.rows = two_d ? bitmask.shape(0) : 1;
  v.words = bitmask.shape(bitmask.ndim() - 1);
  v.row_stride = two_d ? ElementStride(bitmask, 0, "bitmask") : 0;
  v.word_stride = ElementStride(bitmask, bitmask.ndim() - 1, "bitmask");
  return v;
}

int64_t ResolveVocabSize(const py::object& vocab_size, const LogitsView& l, const BitmaskView& b) {
  if (vocab_size.is_none()) return l.cols;
  if (!py::isinstance<py::int_>(vocab_size) || py::isinstance<py::bool_>(vocab_size)) {
    throw py::type_error("apply_bitmask: vocab_size must be an int or None, got " +
                         Str(py::type::handle_of(vocab_size).attr("__name__")));
  }
  // Compared as Python ints: vocab_size may be past int64 (an error, never an overflow).
  if (vocab_size < py::int_(0)) {
    throw py::value_error("apply_bitmask: vocab_size must be >= 0, got " + Str(vocab_size));
  }
  if (vocab_size > py::int_(b.words * kBitmaskWordBits)) {
    const py::object words = (vocab_size + py::int_(kBitmaskWordBits - 1)).attr("__floordiv__")(
        kBitmaskWordBits);
    throw py::value_error("apply_bitmask: bitmask too narrow for vocab_size " + Str(vocab_size) +
                          ": expected at least " + Str(words) + " words per row, got " +
                          std::to_string(b.words));
  }
  const auto n = vocab_size.cast<int64_t>();
  return n;
}

std::vector<int64_t> ToRowIndices(const py::object& indices, int64_t rows) {
  const py::array a = py::module_::import("numpy").attr("asarray")(indices);
  const char kind = a.dtype().kind();
  if (a.ndim() != 1 || (a.size() > 0 && kind != 'i' && kind != 'u')) {
    throw py::type_error("apply_bitmask: indices must be a 1-D sequence of ints, got " +
                         std::to_string(a.ndim()) + "-D " + Str(a.dtype()));
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(a.size()));
  const py::array_t<int64_t> as_int64 = a.attr("astype")("int64");
  const auto view = as_int64.unchecked<1>();
  for (py::ssize_t i = 0; i < view.shape(0); ++i) {
    if (view(i) < 0 || view(i) >= rows) {
      throw py::value_error("apply_bitmask: indices[" + std::to_string(i) + "] = " +
                            Str(a[py::int_(i)]) + " is out of range for a batch of " +
                            std::to_string(rows) + " rows");
    }
    out.push_back(view(i));
  }
  return out;
}

LogitsDtype ParseDtypeName(const std::string& name) {
  if (name == "float32") return LogitsDtype::kFloat32;
  if (name == "float16") return LogitsDtype::kFloat16;
  if (name == "bfloat16") return LogitsDtype::kBFloat16;
  throw py::type_error("_unsafe_apply_bitmask: dtype must be 'float32', 'float16' or "
                       "'bfloat16', got '" + name + "'");
}

// A bitmask row for the bit helpers: 1-D, contiguous, aligned int32 (writeable if `write`).
py::array RequireBitmaskRow(const py::object& obj, bool write, const char* fn) {
  py::array row = RequireArray(obj, "bitmask");
  RequireInt32Bitmask(row);
  const bool contiguous = row.ndim() == 1 && (row.size() <= 1 || row.strides(0) == 4);
  if (!contiguous || (row.flags() & kNpyArrayAligned) == 0) {
    throw py::value_error(std::string(fn) + ": bitmask must be a contiguous, aligned 1-D " +
                          "array, got shape " + ShapeText(row));
  }
  if (write && !row.writeable()) throw py::value_error(std::string(fn) + ": bitmask is read-only");
  return row;
}

void RequireToken(int64_t token_id, int64_t limit, const char* fn) {
  if (token_id < 0 || token_id >= limit) {
    throw py::value_error(std::string(fn) + ": token id " + std::to_string(token_id) +
                          " is out of range [0, " + std::to_string(limit) + ")");
  }
}

// DLPack device types (dlpack.h, DLDeviceType) whose memory numpy can read: CPU, CUDA host
// (pinned), ROCm host and CUDA managed memory.
bool IsHostDlpackDevice(int64_t device_type) {
  return device_type == 1 || device_type == 3 || device_type == 11 || device_type == 13;
}

std::string DeviceText(const py::object& obj, const std::pair<int64_t, int64_t>& device) {
  if (py::hasattr(obj, "device")) return Str(obj.attr("device"));
  return "DLPack device (" + std::to_string(device.first) + ", " +
         std::to_string(device.second) + ")";
}

py::array FromDlpack(const py::object& obj, const char* name, const char* fn) {
  if (py::hasattr(obj, "__dlpack_device__")) {
    const auto device = obj.attr("__dlpack_device__")().cast<std::pair<int64_t, int64_t>>();
    if (!IsHostDlpackDevice(device.first)) {
      throw py::value_error(std::string(fn) + ": " + name + " must be in CPU memory, got one on " +
                            DeviceText(obj, device) + "; use a CPU " + name + " (then copy "
                            "it to the device: tensor.to(device, non_blocking=True))");
    }
  }
  try {
    return py::module_::import("numpy").attr("from_dlpack")(obj);
  } catch (py::error_already_set& e) {
    const std::string hint = std::string(name) == "logits"
                                 ? " (torch logits of any dtype or device: "
                                   "gbnf_sampler.torch.apply_bitmask)"
                                 : "";
    throw py::type_error(std::string(fn) + ": numpy cannot view the " + name + " (" +
                         Str(py::type::handle_of(obj).attr("__name__")) +
                         ") through DLPack: " + e.what() + hint);
  }
}

// A numpy view of `obj` sharing its memory (see BitmaskArray).
py::array HostArray(const py::object& obj, const char* name, const char* fn) {
  if (py::isinstance<py::array>(obj)) return py::reinterpret_borrow<py::array>(obj);
  if (py::hasattr(obj, "__dlpack__")) return FromDlpack(obj, name, fn);
  if (PyObject_CheckBuffer(obj.ptr()) != 0) {
    return py::module_::import("numpy").attr("asarray")(obj);
  }
  throw py::type_error(std::string(fn) + ": " + name + " must be an array (a numpy.ndarray, a " +
                       "CPU torch tensor, or any array with __dlpack__ or the buffer protocol), " +
                       "got " + Str(py::type::handle_of(obj).attr("__name__")));
}

}  // namespace

void ApplyBitmaskNumpy(const py::object& logits_obj, const py::object& bitmask_obj,
                       const py::object& indices, const py::object& vocab_size) {
  py::array logits = HostArray(logits_obj, "logits", "apply_bitmask");
  const py::array bitmask = HostArray(bitmask_obj, "bitmask", "apply_bitmask");
  const LogitsView lv = ToLogitsView(logits);
  const BitmaskView bv = ToBitmaskView(bitmask);
  if (lv.rows != bv.rows) {
    throw py::value_error("apply_bitmask: batch mismatch: logits " + ShapeText(logits) +
                          " has " + std::to_string(lv.rows) + " rows, bitmask " +
                          ShapeText(bitmask) + " has " + std::to_string(bv.rows));
  }
  const int64_t vocab = ResolveVocabSize(vocab_size, lv, bv);
  std::vector<int64_t> rows;
  const bool selected = !indices.is_none();
  if (selected) rows = ToRowIndices(indices, lv.rows);
  if (selected && rows.empty()) return;  // an empty selection (data() may be null: "all rows")
  py::gil_scoped_release release;
  ApplyBitmask(lv, bv, vocab, selected ? rows.data() : nullptr, static_cast<int64_t>(rows.size()));
}

void UnsafeApplyBitmask(uintptr_t logits_ptr, const std::string& dtype, int64_t rows,
                        int64_t cols, int64_t row_stride, int64_t col_stride,
                        uintptr_t bitmask_ptr, int64_t words, int64_t bitmask_row_stride,
                        int64_t vocab_size, uintptr_t indices_ptr, int64_t num_indices) {
  const int64_t counts[] = {rows, cols, words, vocab_size, num_indices};
  for (int64_t n : counts) {
    if (n < 0) throw py::value_error("_unsafe_apply_bitmask: negative shape or count");
  }
  LogitsView lv{reinterpret_cast<void*>(logits_ptr), ParseDtypeName(dtype), rows, cols,
                row_stride, col_stride};
  BitmaskView bv{reinterpret_cast<const int32_t*>(bitmask_ptr), rows, words, bitmask_row_stride,
                 1};
  py::gil_scoped_release release;
  ApplyBitmask(lv, bv, vocab_size, reinterpret_cast<const int64_t*>(indices_ptr), num_indices);
}

int64_t CheckedBitmaskWords(int64_t vocab_size) {
  if (vocab_size < 0) {
    throw py::value_error("bitmask_words: vocab_size must be >= 0, got " +
                          std::to_string(vocab_size));
  }
  return BitmaskWords(vocab_size);
}

bool BitmaskRowTest(const py::object& row, int64_t token_id) {
  const py::array a = RequireBitmaskRow(row, false, "_bitmask_test");
  RequireToken(token_id, a.size() * kBitmaskWordBits, "_bitmask_test");
  return TestBit(static_cast<const int32_t*>(a.data()), token_id);
}

void BitmaskRowSet(const py::object& row, int64_t token_id, bool allowed) {
  py::array a = RequireBitmaskRow(row, true, "_bitmask_set");
  RequireToken(token_id, a.size() * kBitmaskWordBits, "_bitmask_set");
  auto* words = static_cast<int32_t*>(a.mutable_data());
  if (allowed) {
    SetBit(words, token_id);
  } else {
    ClearBit(words, token_id);
  }
}

void BitmaskRowFill(const py::object& row, bool allowed) {
  py::array a = RequireBitmaskRow(row, true, "_bitmask_fill");
  FillBitmask(static_cast<int32_t*>(a.mutable_data()), a.size(), allowed);
}

int64_t BitmaskRowCountAllowed(const py::object& row, int64_t vocab_size) {
  const py::array a = RequireBitmaskRow(row, false, "_bitmask_count_allowed");
  RequireToken(vocab_size, a.size() * kBitmaskWordBits + 1, "_bitmask_count_allowed");
  return CountAllowed(static_cast<const int32_t*>(a.data()), vocab_size);
}

py::array BitmaskArray(const py::object& bitmask, const char* fn) {
  return HostArray(bitmask, "bitmask", fn);
}

MaskRows MaskRowAt(py::array& bitmask, int64_t index) {
  if (!py::isinstance<py::array_t<int32_t>>(bitmask) || bitmask.itemsize() != 4) {
    throw py::type_error("bitmask must be an int32 array, got dtype " +
                         std::string(py::str(bitmask.dtype())));
  }
  if (!bitmask.writeable()) throw py::value_error("bitmask is read-only");
  const int64_t ndim = bitmask.ndim();
  if (ndim != 1 && ndim != 2) {
    throw py::value_error("bitmask must be 1-D or 2-D, got " + std::to_string(ndim) + "-D");
  }
  const int64_t rows = ndim == 1 ? 1 : bitmask.shape(0);
  if (index < 0 || index >= rows) {
    throw py::value_error("index " + std::to_string(index) + " is outside the bitmask's " +
                          std::to_string(rows) + " rows");
  }
  if (bitmask.strides(ndim - 1) != 4) throw py::value_error("bitmask rows must be contiguous");
  auto* base = static_cast<char*>(bitmask.mutable_data());
  MaskRows row;
  row.words = reinterpret_cast<uint32_t*>(base + (ndim == 1 ? 0 : index * bitmask.strides(0)));
  row.num_words = static_cast<size_t>(bitmask.shape(ndim - 1));
  return row;
}

MaskRows MaskRowsFor(py::array& bitmask, size_t count) {
  if (bitmask.ndim() != 2) throw py::value_error("fill_masks needs a 2-D bitmask");
  if (static_cast<size_t>(bitmask.shape(0)) < count) {
    throw py::value_error("bitmask has " + std::to_string(bitmask.shape(0)) + " rows for " +
                          std::to_string(count) + " matchers");
  }
  MaskRows rows = MaskRowAt(bitmask, 0);
  if (bitmask.strides(0) % 4 != 0) throw py::value_error("bitmask rows must be word-aligned");
  rows.stride = static_cast<size_t>(bitmask.strides(0) / 4);
  return rows;
}

std::vector<uint32_t*> MaskRowPointers(py::array& bitmask, const std::vector<int64_t>& rows) {
  if (bitmask.ndim() != 2) throw py::value_error("fill_masks needs a 2-D bitmask");
  const int64_t num_rows = bitmask.shape(0);
  std::vector<bool> taken(static_cast<size_t>(num_rows), false);
  std::vector<uint32_t*> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t row = rows[i];
    if (row < 0 || row >= num_rows) {
      throw py::value_error("fill_masks: rows[" + std::to_string(i) + "] = " +
                            std::to_string(row) + " is outside the bitmask's " +
                            std::to_string(num_rows) + " rows");
    }
    if (taken[static_cast<size_t>(row)]) {
      throw py::value_error("fill_masks: row " + std::to_string(row) +
                            " is given twice (one row per matcher)");
    }
    taken[static_cast<size_t>(row)] = true;
    out.push_back(MaskRowAt(bitmask, row).words);
  }
  return out;
}

py::array_t<int32_t> ToInt32Array(const std::vector<TokenId>& ids) {
  py::array_t<int32_t> out(static_cast<py::ssize_t>(ids.size()));
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

std::string_view BytesView(const py::bytes& data) {
  char* ptr = nullptr;
  Py_ssize_t len = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &ptr, &len) != 0) throw py::error_already_set();
  return std::string_view(ptr, static_cast<size_t>(len));
}

}  // namespace gbnf::bindings
