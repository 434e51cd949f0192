#include "gbnf_sampler/compiled_grammar.h"

#include <chrono>
#include <string>

#include "grammar/lexer.h"
#include "mask/mask_cache.h"
#include "mask/whitespace_filter.h"

namespace gbnf {
namespace {

[[noreturn]] void FailAt(const Grammar& g, const Node& node, std::string code, std::string message,
                         std::string hint) {
  detail::SourceMap map(g.source());
  std::vector<Diagnostic> errors;
  errors.push_back(map.Make(Severity::kError, std::move(code), std::move(message), std::move(hint),
                            node.span.offset, node.span.length));
  throw GrammarError(std::move(errors));
}

int64_t ResolveOne(const Grammar& g, const Node& node, const Vocab& vocab) {
  if (node.token_by_id) {
    if (node.token_id >= vocab.size()) {
      FailAt(g, node, "token_id_out_of_range",
             "token id " + std::to_string(node.token_id) + " is outside the vocabulary (size " +
                 std::to_string(vocab.size()) + ")",
             "");
    }
    return node.token_id;
  }
  std::vector<TokenId> ids = vocab.FindByText(node.token_text);
  if (ids.empty()) {
    FailAt(g, node, "unknown_token",
           "token " + std::string(node.token_text) + " is not a single token of the vocabulary",
           "write its id as <[id]>, or spell the text as a string literal");
  }
  if (ids.size() > 1) {
    FailAt(g, node, "ambiguous_token",
           "token " + std::string(node.token_text) + " names " + std::to_string(ids.size()) +
               " tokens of the vocabulary (ids " + std::to_string(ids[0]) + ", " +
               std::to_string(ids[1]) + (ids.size() > 2 ? ", ...)" : ")"),
           "write the one you mean as <[id]>");
  }
  return ids[0];
}

}  // namespace

std::shared_ptr<const CompiledGrammar> CompiledGrammar::Compile(
    std::shared_ptr<const Automaton> automaton, std::shared_ptr<const Vocab> vocab,
    const MatcherLimits& limits, const MaskCacheOptions& options) {
  std::shared_ptr<CompiledGrammar> cg(new CompiledGrammar());
  cg->automaton_ = std::move(automaton);
  cg->vocab_ = std::move(vocab);
  cg->limits_ = limits;
  cg->ResolveTokenRefs();
  cg->mask_cache_ = std::make_unique<const MaskCache>(cg->automaton_, cg->vocab_,
                                                     limits.max_state_size, options);
  if (limits.max_whitespace != kNoWhitespaceLimit) {
    cg->whitespace_ = detail::WhitespaceFilter::Shared(cg->vocab_, limits.max_whitespace);
  }
  return cg;
}

CompiledGrammar::~CompiledGrammar() = default;

size_t CompiledGrammar::CacheBytes() const { return mask_cache_->bytes(); }
size_t CompiledGrammar::CachedStates() const { return mask_cache_->states(); }
MaskCacheStats CompiledGrammar::CacheStats() const { return mask_cache_->Stats(); }

bool CompiledGrammar::Precompute(std::chrono::nanoseconds budget) const {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  detail::CacheCore& core = mask_cache_->core();
  do {
    if (!core.RunOne()) return true;
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

void CompiledGrammar::ResolveTokenRefs() {
  const Grammar& g = automaton_->grammar();
  auto ids = std::make_shared<std::vector<int64_t>>(g.nodes().size(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& node = g.node(static_cast<NodeId>(i));
    if (node.kind == NodeKind::kTokenRef) (*ids)[i] = ResolveOne(g, node, *vocab_);
  }
  token_ids_ = std::move(ids);
}

}  // namespace gbnf
