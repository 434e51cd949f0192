// libFuzzer target for the GBNF front end: any byte string either parses (and then prints to
// text that parses back to the same grammar) or raises GrammarError. Anything else - a crash, a
// sanitizer report, another exception, a failed round trip - is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gbnf_sampler/grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const gbnf::Grammar grammar = gbnf::ParseGrammar(text);
    const gbnf::Grammar again = gbnf::ParseGrammar(gbnf::PrintGrammar(grammar));
    if (!again.SameAs(grammar)) __builtin_trap();
  } catch (const gbnf::GrammarError& e) {
    if (e.errors().empty() || e.primary().code.empty()) __builtin_trap();
  }
  return 0;
}
