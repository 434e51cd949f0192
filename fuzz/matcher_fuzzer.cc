// libFuzzer target for the byte-level matcher: a random grammar, then a random program of
// accepts, rollbacks, forks, resets and queries. Crashes, sanitizer reports, hangs and broken
// invariants (a refused accept must leave the state as it was) are bugs; GrammarError and
// LimitError are expected outcomes.
//
// Input layout: byte 0 = grammar length L; bytes [1, 1+L) = grammar text; the rest = program.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "gbnf_sampler/automaton.h"
#include "gbnf_sampler/error.h"
#include "gbnf_sampler/grammar.h"
#include "gbnf_sampler/matcher.h"

namespace {

struct Snapshot {
  bool can_terminate;
  bool terminated;
  size_t state_size;
  size_t rollback;
  bool operator==(const Snapshot& o) const {
    return can_terminate == o.can_terminate && terminated == o.terminated &&
           state_size == o.state_size && rollback == o.rollback;
  }
};

Snapshot Take(const gbnf::Matcher& m) {
  return {m.CanTerminate(), m.IsTerminated(), m.StateSize(), m.RollbackAvailable()};
}

void RunProgram(gbnf::Matcher& matcher, std::string_view program) {
  gbnf::Matcher other = matcher.Fork();
  size_t pc = 0;
  while (pc < program.size()) {
    const auto op = static_cast<uint8_t>(program[pc++]);
    switch (op % 8) {
      case 0: case 1: case 2: case 3: {
        const size_t n = std::min<size_t>(1 + (op >> 3) % 8, program.size() - pc);
        const Snapshot before = Take(matcher);
        if (!matcher.AcceptBytes(program.substr(pc, n)) && !(Take(matcher) == before)) {
          __builtin_trap();  // a refused accept changed the state
        }
        pc += n;
        break;
      }
      case 4: matcher.Rollback(std::min<size_t>(op >> 3, matcher.RollbackAvailable())); break;
      case 5: std::swap(matcher, other); other = matcher.Fork(); break;
      case 6: matcher.Reset(); break;
      default: {
        const std::string forced = matcher.ForcedBytes();
        if (!forced.empty() && !matcher.Fork().AcceptBytes(forced)) __builtin_trap();
        if (matcher.CanTerminate() && !matcher.Fork().AcceptEos()) __builtin_trap();
        break;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t grammar_length = std::min<size_t>(data[0], size - 1);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), grammar_length);
  const std::string_view program(reinterpret_cast<const char*>(data + 1 + grammar_length),
                                 size - 1 - grammar_length);
  try {
    auto grammar = std::make_shared<gbnf::Grammar>(gbnf::ParseGrammar(text));
    gbnf::MatcherLimits limits;
    limits.max_state_size = 20000;
    limits.max_history_bytes = 4096;  // small, so that history trimming is exercised too
    gbnf::Matcher matcher(gbnf::Automaton::Build(grammar), limits);
    RunProgram(matcher, program);
  } catch (const gbnf::GrammarError&) {
  } catch (const gbnf::LimitError&) {
  }
  return 0;
}
