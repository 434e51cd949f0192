// ExtractLlamaVocab: reads a llama.cpp vocabulary through function pointers of its C API, so
// the core needs neither llama.cpp's headers nor its library (the addresses come from
// llama-cpp-python's ctypes bindings).
#include <string>

#include "gbnf_sampler/vocab.h"

namespace gbnf {
namespace {

constexpr int32_t kPieceBuffer = 256;

std::string Piece(const LlamaVocabApi& api, int32_t token) {
  std::string piece(kPieceBuffer, '\0');
  int32_t n = api.token_to_piece(api.vocab, token, piece.data(), kPieceBuffer, 0, true);
  if (n < 0) {  // longer than the buffer: -n is its length
    piece.assign(static_cast<size_t>(-n), '\0');
    n = api.token_to_piece(api.vocab, token, piece.data(), -n, 0, true);
  }
  piece.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return piece;
}

}  // namespace

std::shared_ptr<const Vocab> ExtractLlamaVocab(const LlamaVocabApi& api, uint32_t special_attrs) {
  if (api.vocab == nullptr || api.n_tokens == nullptr || api.token_to_piece == nullptr ||
      api.get_attr == nullptr || api.is_eog == nullptr) {
    throw VocabError("ExtractLlamaVocab: a null vocabulary or function pointer");
  }
  const int32_t n = api.n_tokens(api.vocab);
  if (n <= 0) throw VocabError("the llama.cpp vocabulary is empty (size 0)");
  std::vector<std::string> tokens;
  std::vector<TokenId> eos;
  std::vector<TokenId> special;
  tokens.reserve(static_cast<size_t>(n));
  for (int32_t id = 0; id < n; ++id) {
    tokens.push_back(Piece(api, id));
    if (api.is_eog(api.vocab, id)) eos.push_back(id);
    if ((api.get_attr(api.vocab, id) & special_attrs) != 0) special.push_back(id);
  }
  return Vocab::Create(tokens, std::move(eos), std::move(special));
}

}  // namespace gbnf
