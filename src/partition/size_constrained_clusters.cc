#include "partition/size_constrained_clusters.h"

#include <fmt/format.h>

#include <limits>
#include <numeric>
#include <vector>

#include "common/progress.h"
#include "partition/partitioning.h"

namespace strata {

ChargedArray<uint32_t> SizeConstrainedClusters(const CscGraph& graph, uint64_t max_size,
                                               uint32_t rounds, MemoryBudget& budget,
                                               ProgressBar* progress) {
  const uint64_t n = graph.num_nodes();
  ChargedArray<uint32_t> cluster_of(budget, n, "cluster of each node");
  ChargedArray<uint32_t> cluster_size(budget, n, "cluster sizes");
  // Per cluster, how many of the current node's in-neighbours are in it; zero between nodes.
  ChargedArray<uint32_t> neighbours_in(budget, n, "cluster neighbour counts");
  std::iota(cluster_of.data(), cluster_of.data() + n, uint32_t{0});
  std::fill(cluster_size.data(), cluster_size.data() + n, 1);
  std::fill(neighbours_in.data(), neighbours_in.data() + n, 0);

  std::vector<uint32_t> touched;  // clusters with a count, in the order first met
  // Joins the cluster with the most in-neighbours that has room, the lowest id among equals
  // (a global preference that lets clusters grow instead of splitting between equals); a
  // node stays where it is unless another cluster holds strictly more of its neighbours.
  auto join_best = [&](uint64_t node) {
    const uint32_t own = cluster_of[node];
    const uint32_t own_count = neighbours_in[own];
    uint32_t best = std::numeric_limits<uint32_t>::max();
    uint32_t best_count = 0;
    for (uint32_t c : touched) {
      const uint32_t count = neighbours_in[c];
      neighbours_in[c] = 0;
      if (c == own || cluster_size[c] >= max_size) continue;
      if (count > best_count || (count == best_count && c < best)) {
        best = c;
        best_count = count;
      }
    }
    touched.clear();
    if (best_count > own_count) {
      --cluster_size[own];
      ++cluster_size[best];
      cluster_of[node] = best;
    }
  };
  for (uint32_t round = 0; round < rounds; ++round) {
    if (progress) progress->Restart(fmt::format("clustering, round {}/{}", round + 1, rounds), n);
    ForEachInNeighbourList(
        graph,
        [&](uint64_t source, uint64_t node) {
          if (source == node) return;
          const uint32_t c = cluster_of[source];
          if (neighbours_in[c]++ == 0) touched.push_back(c);
        },
        join_best, progress);
  }
  return cluster_of;
}

}  // namespace strata
