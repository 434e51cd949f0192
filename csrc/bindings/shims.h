// Conversions between core types and Python objects (diagnostics, AST tuples, limits, raw
// addresses handed over by ctypes) and the one exception translator, used by the binding files.
// Buffer and numpy conversions are in arrays.h.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/exclusive.h"
#include "gbnf_sampler/compiled_grammar.h"
#include "gbnf_sampler/error.h"
#include "gbnf_sampler/grammar.h"
#include "gbnf_sampler/matcher.h"
#include "gbnf_sampler/token_matcher.h"
#include "gbnf_sampler/vocab.h"

namespace gbnf::llama {
struct SamplerContext;
}

namespace gbnf::bindings {

pybind11::dict DiagnosticToDict(const Diagnostic& d);
pybind11::list DiagnosticsToList(const std::vector<Diagnostic>& diagnostics);
// A rule body as nested tuples: ("seq", [..]), ("alt", [..]), ("lit", [cp..]),
// ("class", [(lo, hi)..], negated), ("any",), ("ref", name), ("token", id|None, text|None,
// negated), ("repeat", child, min, max|None).
pybind11::tuple NodeToTuple(const Grammar& g, NodeId id);
// Every rule as (name, NodeToTuple(body)), in rule order.
pybind11::list RulesAst(const Grammar& g);
// Every rule as (name, node), the nodes built directly as gbnf_sampler.syntax objects:
// ``classes`` holds Literal, CharClass, AnyChar, RuleRef, TokenRef, Repeat, Sequence and
// Alternation, in that order.
pybind11::list RulesNodes(const Grammar& g, const pybind11::tuple& classes);
// One rule's body as RulesNodes builds it (KeyError when there is no such rule).
pybind11::object RuleNode(const Grammar& g, const std::string& name,
                          const pybind11::tuple& classes);
// Installs the translation of core exceptions into gbnf_sampler's Python exceptions.
void RegisterExceptionTranslators();

MatcherLimits ToMatcherLimits(uint32_t max_state_size, uint32_t max_rollback,
                              size_t max_history_bytes, int64_t max_whitespace = -1);
// (accepted, dependent) sizes of the mask-cache entry of `state` (filled first if needed).
std::pair<size_t, size_t> StateMaskSizes(const CompiledGrammar& compiled, StateId state);

// Raw addresses from ctypes (the `_unsafe_` entry points); the caller vouches for them.
// A Vocab read through llama.cpp's vocabulary C API (function addresses).
std::shared_ptr<Vocab> VocabFromLlama(uintptr_t vocab, uintptr_t n_tokens, uintptr_t to_piece,
                                      uintptr_t get_attr, uintptr_t is_eog,
                                      uint32_t special_attrs);
// The addresses of the native sampler's hook functions, by llama_sampler_i field name.
pybind11::dict LlamaHookAddresses();
// A sampler context holding a fork of `matcher`; returns its address (see llama/sampler_hook.h).
uintptr_t NewSamplerContext(Exclusive<TokenMatcher>& matcher, uintptr_t init_address,
                            uintptr_t iface_address);
// The live context at `address` (non-null, created by NewSamplerContext).
llama::SamplerContext& SamplerContextAt(uintptr_t address);

}  // namespace gbnf::bindings
