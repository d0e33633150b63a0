// SizeConstrainedClusters: no cluster above its size limit, separate cliques found whole when
// they fit, the same clusters for the same input; and the coarsening GAP takes from them cuts
// fewer edges of a graph with nested communities than the thesis's plain stream, as balanced.
#include "partition/size_constrained_clusters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <span>
#include <vector>

#include "partition/gap_partitioner.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ChargedArrayOf;

constexpr uint32_t kCliques = 6, kCliqueSize = 10, kCliqueNodes = kCliques * kCliqueSize;

// Six cliques of ten with interleaved ids (node v in clique v % 6), each joined to the next by
// one edge.
CscGraph InterleavedCliques(MemoryBudget& budget) {
  std::vector<uint64_t> indptr = {0};
  std::vector<uint32_t> indices;
  for (uint32_t v = 0; v < kCliqueNodes; ++v) {
    for (uint32_t u = v % kCliques; u < kCliqueNodes; u += kCliques) {
      if (u != v) indices.push_back(u);
    }
    if (v > 0 && v < kCliques) indices.push_back(v - 1);
    std::sort(indices.begin() + static_cast<std::ptrdiff_t>(indptr.back()), indices.end());
    indptr.push_back(indices.size());
  }
  return CscGraph(ChargedArrayOf(budget, indptr), ChargedArrayOf(budget, indices), budget);
}

std::map<uint32_t, uint64_t> ClusterSizes(const ChargedArray<uint32_t>& cluster_of) {
  std::map<uint32_t, uint64_t> sizes;
  for (size_t v = 0; v < cluster_of.size(); ++v) ++sizes[cluster_of[v]];
  return sizes;
}

TEST(SizeConstrainedClusters, FindsCliquesThatFitWhole) {
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph = InterleavedCliques(budget);
  const ChargedArray<uint32_t> cluster_of = SizeConstrainedClusters(graph, kCliqueSize, 3, budget);
  ASSERT_EQ(cluster_of.size(), kCliqueNodes);
  for (uint32_t v = 0; v < kCliqueNodes; ++v) {
    EXPECT_EQ(cluster_of[v], cluster_of[v % kCliques]) << "node " << v;
  }
  EXPECT_EQ(ClusterSizes(cluster_of).size(), kCliques);
}

TEST(SizeConstrainedClusters, NoClusterExceedsItsLimit) {
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph = InterleavedCliques(budget);
  for (uint64_t limit : {1u, 3u, 4u, 7u}) {
    for (uint32_t rounds : {1u, 5u}) {
      const ChargedArray<uint32_t> cluster_of =
          SizeConstrainedClusters(graph, limit, rounds, budget);
      for (const auto& [cluster, size] : ClusterSizes(cluster_of)) {
        EXPECT_LT(cluster, kCliqueNodes);
        EXPECT_LE(size, limit) << "cluster " << cluster << ", limit " << limit;
      }
      const ChargedArray<uint32_t> again = SizeConstrainedClusters(graph, limit, rounds, budget);
      EXPECT_TRUE(std::equal(cluster_of.data(), cluster_of.data() + kCliqueNodes, again.data()));
    }
  }
}

double CutRatio(const CscGraph& graph, const Partitioning& p) {
  uint64_t cut = 0;
  uint64_t dst = 0;
  graph.ForEachSourceChunk([&](uint64_t first_edge, std::span<const uint64_t> sources) {
    for (size_t i = 0; i < sources.size(); ++i) {
      while (first_edge + i >= graph.EdgeBegin(dst + 1)) ++dst;
      cut += p.part_of[sources[i]] != p.part_of[dst];
    }
  });
  return static_cast<double>(cut) / static_cast<double>(graph.num_edges());
}

TEST(GapClusters, CutFewerEdgesOfNestedCommunitiesAtTheSameBalance) {
  testing::ScratchDir dir;
  GenerateOptions g;
  ApplyGraphPreset("papers100M", g);
  g.out = dir / "in";
  g.nodes = 40000;
  g.feature_dim = 8;
  g.memory_budget_bytes = uint64_t{64} << 20;
  GenerateDataset(g);
  const Dataset in = Dataset::Open(dir / "in");
  MemoryBudget budget(uint64_t{256} << 20);
  const CscGraph graph(in, budget);
  const std::vector<uint32_t> groups(in.meta().num_nodes, 0);
  double cut[2];
  for (uint32_t rounds : {0u, 3u}) {
    GapOptions o;  // the thesis's GAP (no clusters, two passes), or three rounds and a pass
    o.parts = 32;
    o.cluster_rounds = rounds;
    o.passes = rounds == 0 ? 2 : 1;
    const Partitioning p = GapPartition(graph, groups, 1, o, budget);
    std::vector<uint64_t> size(o.parts, 0);
    for (uint64_t v = 0; v < in.meta().num_nodes; ++v) ++size[p.part_of[v]];
    EXPECT_LE(*std::max_element(size.begin(), size.end()), std::ceil(1.05 * 40000 / 32));
    cut[rounds > 0] = CutRatio(graph, p);
  }
  EXPECT_LT(cut[1], 0.95 * cut[0]) << "with clusters " << cut[1] << ", without " << cut[0];
}

}  // namespace
}  // namespace strata
