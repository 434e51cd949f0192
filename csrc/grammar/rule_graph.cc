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

void SpreadMarks(const RuleEdges& edges, std::vector<uint8_t>* marked) {
  std::vector<uint8_t>& mark = *marked;
  std::vector<RuleId> work;
  for (RuleId r = 0; r < mark.size(); ++r) {
    if (mark[r]) work.push_back(r);
  }
  while (!work.empty()) {
    const RuleId r = work.back();
    work.pop_back();
    for (const RuleId* next = edges.first(r); next != edges.last(r); ++next) {
      if (!mark[*next]) {
        mark[*next] = 1;
        work.push_back(*next);
      }
    }
  }
}

}  // namespace gbnf::detail
