#include "sampling/khop_sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "strata/error.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

TEST(KHopSampler, BatchesAreDistinctNeighbourhoodsAndDeterministic) {
  testing::ScratchDir dir;
  DatasetMeta meta = GenerateDataset(testing::SmallGraph(dir / "g", 5000, 4, 3, 10));
  MemoryBudget budget(uint64_t{64} << 20);
  CscGraph graph(Dataset::Open(dir / "g"), budget);
  std::vector<uint64_t> pool = Dataset::Open(dir / "g").ReadSplit(Split::kTrain);
  KHopSampler a(graph, pool, {3, 2}, 50, 11, budget);
  KHopSampler b(graph, pool, {3, 2}, 50, 11, budget);
  auto batch = a.Batch(4);
  a.Batch(5);
  EXPECT_EQ(a.Batch(4), batch);
  EXPECT_EQ(b.Batch(4), batch);
  std::set<uint64_t> unique(batch.begin(), batch.end());
  EXPECT_EQ(unique.size(), batch.size());
  // Seeds (at most 50) then at most 2 neighbours each, then at most 3 of each of those.
  EXPECT_LE(batch.size(), 50u + 50 * 2 + 50 * 2 * 3);
  EXPECT_GT(batch.size(), 50u);
  // Every node after the seeds is an in-neighbour of an earlier node.
  std::set<uint64_t> seen;
  std::set<uint64_t> pool_set(pool.begin(), pool.end());
  for (uint64_t v : batch) {
    bool reached = false;
    for (uint64_t u : seen) {
      for (uint64_t k = 0; k < graph.InDegree(u) && !reached; ++k) {
        reached = graph.InNeighbor(u, k) == v;
      }
    }
    EXPECT_TRUE(reached || pool_set.count(v)) << v;
    seen.insert(v);
  }
}

}  // namespace
}  // namespace strata
