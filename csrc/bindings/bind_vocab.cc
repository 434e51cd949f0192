// Python bindings of the vocabulary and token trie.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/shims.h"
#include "gbnf_sampler/vocab.h"
#include "mask/whitespace_filter.h"
#include "testing/walk_prefix_filter.h"

namespace py = pybind11;

namespace gbnf::bindings {
namespace {

std::shared_ptr<Vocab> MakeVocab(const std::vector<std::string>& tokens,
                                 std::vector<TokenId> eos_ids, std::vector<TokenId> special_ids) {
  py::gil_scoped_release release;  // hashing and indexing 100k+ tokens
  // Vocab is immutable (every method is const); pybind11 holds it through a non-const pointer.
  return std::const_pointer_cast<Vocab>(
      Vocab::Create(tokens, std::move(eos_ids), std::move(special_ids)));
}

const TokenTrie& TrieNoGil(const Vocab& v) {
  py::gil_scoped_release release;
  return v.trie();
}

// The runs of TokenTrie::RunsInside for the ASCII bytes of `ascii` (and every multi-byte
// character when non_ascii), with their smallest inner lcps and most characters; None when the
// trie keeps no more classes.
py::object RunsInside(const Vocab& v, const py::bytes& ascii, bool non_ascii) {
  TokenTrie::ByteClass cls;
  for (char c : std::string(ascii)) {
    const auto b = static_cast<uint8_t>(c);
    if (b >= 0x80) throw py::value_error("runs_inside: the class's listed bytes must be ASCII");
    cls.ascii[b >> 6] |= uint64_t{1} << (b & 63);
  }
  cls.non_ascii = non_ascii;
  const TokenTrie::ClassRuns* runs = nullptr;
  {
    py::gil_scoped_release release;
    runs = v.trie().RunsInside(cls);
  }
  if (runs == nullptr) return py::none();
  return py::make_tuple(runs->runs, runs->min_lcp, runs->max_chars);
}

py::tuple WalkFilter(const Vocab& v, const std::vector<std::string>& texts) {
  size_t visited = 0;
  std::vector<TokenId> ids = detail::WalkPrefixFilter(TrieNoGil(v), texts, &visited);
  return py::make_tuple(ids, visited);
}

}  // namespace

void BindVocab(py::module_& m) {
  py::class_<Vocab, std::shared_ptr<Vocab>>(m, "Vocab")
      .def(py::init(&MakeVocab), py::arg("tokens"), py::arg("eos_ids"), py::arg("special_ids"))
      .def_property_readonly("size", &Vocab::size)
      .def_property_readonly("fingerprint", &Vocab::fingerprint)
      .def_property_readonly("fingerprint_hex", &Vocab::FingerprintHex)
      .def_property_readonly("eos_ids", &Vocab::eos_ids)
      .def_property_readonly("special_ids", &Vocab::special_ids)
      .def_property_readonly("max_token_length", &Vocab::max_token_length)
      .def("token_bytes",
           [](const Vocab& v, TokenId id) { return py::bytes(std::string(v.Token(id))); })
      .def("is_eos", &Vocab::IsEos)
      .def("is_special", &Vocab::IsSpecial)
      .def("find_by_text",
           [](const Vocab& v, const py::bytes& text) {
             std::string key = text;
             py::gil_scoped_release release;
             return v.FindByText(key);
           })
      .def("build_trie", [](const Vocab& v) { TrieNoGil(v); })
      .def("build_whitespace_filter",
           [](const std::shared_ptr<Vocab>& v, uint32_t max_whitespace) {
             py::gil_scoped_release release;
             detail::WhitespaceFilter::Shared(v, max_whitespace);
           })
      .def("trie_sorted_ids", [](const Vocab& v) { return TrieNoGil(v).sorted_ids(); })
      .def("trie_lcp", [](const Vocab& v) { return TrieNoGil(v).lcps(); })
      .def("trie_subtree_end", [](const Vocab& v) { return TrieNoGil(v).subtree_ends(); })
      .def("trie_excluded_ids", [](const Vocab& v) { return TrieNoGil(v).excluded_ids(); })
      .def("trie_next_diverging",
           [](const Vocab& v, size_t pos, uint32_t depth) {
             const TokenTrie& t = TrieNoGil(v);
             if (pos >= t.size()) throw py::value_error("trie position out of range");
             return t.NextDiverging(pos, depth);
           })
      .def("trie_walk_prefix_filter", &WalkFilter, py::arg("texts"))
      .def("trie_runs_inside", &RunsInside, py::arg("ascii"), py::arg("non_ascii"))
      .def("trie_class_runs_pending",
           [](const Vocab& v) { return TrieNoGil(v).PendingClassRuns(); });
  m.def("_vocab_from_llama", &VocabFromLlama, py::arg("vocab"), py::arg("n_tokens"),
        py::arg("token_to_piece"), py::arg("get_attr"), py::arg("is_eog"),
        py::arg("special_attrs"));
}

}  // namespace gbnf::bindings
