// The order in which background precompute (and CompiledGrammar::Precompute) classifies a
// grammar's states: by how early in an output the matcher can first meet each one, so that the
// work runs ahead of a decoder, which moves through the output from its start.
//
// The distance of a state is the fewest bytes (or tokens) an output needs before a live item
// sits at that state: a byte or token edge adds 1; a call edge reaches the called rule's start
// at no cost and the caller's resume point after the rule's shortest completion. Shortest
// completions (the fewest bytes from a state to the end of its rule) are found first, by a
// Dijkstra over the automaton in which a call needs both the called rule's completion and the
// resume point's. (A rule that can never complete is refused by the parser; were one here, its
// callers' resume points would go last.) States without byte or call edges are left out: their
// entry is empty and costs nothing to fill on first use.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gbnf_sampler/automaton.h"

namespace gbnf::detail {

// (state, distance) by ascending distance (ties in the order found); unreachable states left
// out. Builds every rule the root reaches first (Automaton::BuildAll): background work.
std::vector<std::pair<StateId, uint64_t>> PrecomputeOrder(const Automaton& automaton);

}  // namespace gbnf::detail
