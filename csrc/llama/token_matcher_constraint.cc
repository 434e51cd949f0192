#include "llama/token_matcher_constraint.h"

#include <string>
#include <utility>

namespace gbnf::llama {
namespace {

class TokenMatcherConstraint final : public TokenConstraint {
 public:
  explicit TokenMatcherConstraint(TokenMatcher matcher) : matcher_(std::move(matcher)) {}

  void FillMask(int32_t* words) override {
    matcher_.FillMask(reinterpret_cast<uint32_t*>(words), matcher_.MaskWords());
  }
  size_t WordCount() const override { return matcher_.MaskWords(); }
  bool AcceptToken(int32_t token) override {
    if (token < 0 || static_cast<size_t>(token) >= matcher_.compiled().vocab().size()) {
      return false;  // not a token of this vocabulary: refused, never a crash
    }
    return matcher_.AcceptToken(token);
  }
  void Reset() override { matcher_.Reset(); }
  std::unique_ptr<TokenConstraint> Clone() const override {
    return std::make_unique<TokenMatcherConstraint>(matcher_.Fork());
  }
  std::string ForcedBytes() override { return matcher_.ForcedBytes(); }
  size_t AcceptablePrefix(const int32_t* tokens, size_t count) override {
    TokenMatcher probe = matcher_.Fork();
    const size_t vocab_size = matcher_.compiled().vocab().size();
    for (size_t i = 0; i < count; ++i) {
      if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= vocab_size) return i;
      if (!probe.AcceptToken(tokens[i])) return i;
    }
    return count;
  }
  bool IsTerminated() const override { return matcher_.IsTerminated(); }

 private:
  TokenMatcher matcher_;
};

}  // namespace

std::unique_ptr<TokenConstraint> MakeTokenMatcherConstraint(TokenMatcher matcher) {
  return std::make_unique<TokenMatcherConstraint>(std::move(matcher));
}

}  // namespace gbnf::llama
