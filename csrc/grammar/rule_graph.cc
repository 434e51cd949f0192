#include "grammar/rule_graph.h"

namespace gbnf::detail {

RuleEdges Reversed(const RuleEdges& edges) {
  const size_t n = edges.rules();
  RuleEdges out;
  out.begin.assign(n + 1, 0);
  for (RuleId c : edges.to) ++out.begin[c + 1];
  for (size_t r = 0; r < n; ++r) out.begin[r + 1] += out.begin[r];
  out.to.resize(edges.to.size());
  std::vector<uint32_t> fill(out.begin.begin(), out.begin.end() - 1);
  for (RuleId r = 0; r < n; ++r) {
    for (const RuleId* c = edges.first(r); c != edges.last(r); ++c) out.to[fill[*c]++] = r;
  }
  return out;
}

}  // namespace gbnf::detail
