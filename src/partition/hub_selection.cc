#include "partition/hub_selection.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/interrupt.h"
#include "common/progress.h"
#include "graph/hotness.h"

namespace strata {

std::vector<uint64_t> SelectHubs(const CscGraph& graph, const Partitioning& partitioning,
                                 std::span<const uint64_t> train_ids, uint64_t count,
                                 uint32_t walk_steps, MemoryBudget& budget, ProgressBar* progress) {
  if (count == 0) return {};
  const uint64_t n = graph.num_nodes();
  const uint32_t* part_of = partitioning.part_of.data();
  // all: the walk from every training node; own: the part of it still inside the partition
  // it started in.
  ChargedArray<float> all(budget, n, "hub walk"), own(budget, n, "hub walk");
  ChargedArray<float> next_all(budget, n, "hub walk"), next_own(budget, n, "hub walk");
  std::fill(all.data(), all.data() + n, 0.0f);
  for (uint64_t v : train_ids) all[v] = 1;
  std::copy(all.data(), all.data() + n, own.data());
  for (uint32_t step = 0; step < walk_steps; ++step) {
    if (progress) {
      progress->Restart(fmt::format("scoring hubs, step {}/{}", step + 1, walk_steps),
                        graph.num_edges());
    }
    uint64_t edges = 0;
    for (uint64_t v = 0; v < n; ++v) {
      // The lazy half stays; a node without in-neighbours keeps all its mass.
      const float stay = graph.InDegree(v) ? 0.5f : 1.0f;
      next_all[v] = stay * all[v];
      next_own[v] = stay * own[v];
    }
    ForEachEdge(graph, [&](uint64_t src, uint64_t dst) {
      const float share = 0.5f / graph.InDegree(dst);
      next_all[src] += share * all[dst];
      if (part_of[src] == part_of[dst]) next_own[src] += share * own[dst];
      if (progress && ++edges % (uint64_t{1} << 20) == 0) progress->Update(edges);
    });
    std::swap(all, next_all);
    std::swap(own, next_own);
  }
  for (uint64_t v = 0; v < n; ++v) all[v] -= own[v];
  std::vector<uint64_t> hubs = TopScored(all, std::min(count, n), budget);
  std::sort(hubs.begin(), hubs.end());
  return hubs;
}

}  // namespace strata
