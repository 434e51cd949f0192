// The parser's source layout (csrc/include/gbnf_sampler/grammar.h, SourceLayout) for the
// doctor: every definition's tree with the positions its checks point at, and the spelling
// events of the llama.cpp dialect check, so that Python need not parse the text a second time.
#pragma once

#include <pybind11/pybind11.h>

#include "bindings/shims.h"
#include "gbnf_sampler/grammar.h"

namespace gbnf::bindings {

// (definitions, events): definitions as (name, start, end, tree) in source order, a tree being
// NodeToTuple's with (start, end, parentheses around the node) appended to every tuple; events
// as (kind, start, end, text, definition, prev_end), in source order. Offsets are code point
// indices into the source (see python/gbnf_sampler/doctor/source.py, which this mirrors).
pybind11::tuple SourceLayoutOf(const Grammar& g);

}  // namespace gbnf::bindings
