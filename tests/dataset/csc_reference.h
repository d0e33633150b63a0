// An in-memory CSC, the reference the on-disk builder is checked against, and a reader of
// the CSC files a dataset holds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::testing {

struct Csc {
  std::vector<uint64_t> indptr;
  std::vector<uint64_t> indices;
  bool operator==(const Csc&) const = default;
};

// The CSC of edges src -> dst over num_nodes nodes, sources sorted per destination. An added
// self loop is only added where the input has none.
inline Csc ReferenceCsc(std::vector<std::pair<uint64_t, uint64_t>> edges, uint64_t num_nodes,
                        bool deduplicate, bool add_self_loops) {
  if (add_self_loops) {
    std::vector<bool> has_loop(num_nodes, false);
    for (const auto& [s, d] : edges) {
      if (s == d) has_loop[s] = true;
    }
    for (uint64_t v = 0; v < num_nodes; ++v) {
      if (!has_loop[v]) edges.emplace_back(v, v);
    }
  }
  std::sort(edges.begin(), edges.end(), [](auto a, auto b) {
    return std::pair(a.second, a.first) < std::pair(b.second, b.first);
  });
  if (deduplicate) edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  Csc csc;
  csc.indptr.assign(num_nodes + 1, 0);
  for (const auto& [s, d] : edges) ++csc.indptr[d + 1];
  for (uint64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];
  for (const auto& [s, d] : edges) csc.indices.push_back(s);
  return csc;
}

Csc ReadCscFiles(const std::string& indptr_path, const std::string& indices_path,
                 uint32_t node_id_bytes);

}  // namespace strata::testing
