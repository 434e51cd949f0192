#include "mask/prefix_walker.h"

namespace gbnf::detail {

void PrefixWalker::Begin(Parser* parser, size_t max_token_length) {
  parser_ = parser;
  if (levels_.size() < max_token_length + 1) {
    levels_.resize(max_token_length + 1);
    complete_upto_.resize(max_token_length + 1);
  }
  parser_->gss().SetSpeculative(true);
  held_ = 0;
  Save(0);
}

void PrefixWalker::End() {
  PopTo(0);
  parser_->gss().RestoreMark(levels_[0].mark);
  parser_->gss().SetSpeculative(false);
  parser_ = nullptr;
}

void PrefixWalker::Save(uint32_t level) {
  Level& l = levels_[level];
  l.items.assign(parser_->items().begin(), parser_->items().end());
  l.mark = parser_->gss().Mark();
  l.complete = parser_->complete();
  complete_upto_[level] = level > 0 && (l.complete || complete_upto_[level - 1]);
}

void PrefixWalker::PopTo(uint32_t keep) {
  if (keep == held_) return;
  const Level& l = levels_[keep];
  parser_->gss().RestoreMark(l.mark);
  parser_->SetState(l.items, l.complete);
  held_ = keep;
}

size_t PrefixWalker::Extend(uint32_t keep, std::string_view add) {
  PopTo(keep);
  limited_ = false;
  size_t n = 0;
  for (; n < add.size(); ++n) {
    bool ok = false;
    try {
      ok = parser_->AdvanceByte(static_cast<uint8_t>(add[n]));
    } catch (const LimitError&) {
      limited_ = true;  // the parser's items are unchanged; drop what the step created
      parser_->gss().RestoreMark(levels_[held_].mark);
    }
    if (!ok) break;
    Save(++held_);
  }
  return n;
}

}  // namespace gbnf::detail
