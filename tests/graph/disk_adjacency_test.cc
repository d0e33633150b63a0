#include "graph/disk_adjacency.h"

#include <gtest/gtest.h>

#include "common/random.h"
#include "graph/hotness.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

// Every placement of the topology answers exactly what the resident graph answers: with no
// adjacency cache, a partial one and one holding every list, for 4- and 8-byte ids, through
// io_uring and the pread pool.
class DiskTopologyTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    GenerateOptions g = testing::SmallGraph(dir_ / "g", 4000, 4, 3, 12, 5);
    g.node_id_bytes = GetParam();
    meta_ = GenerateDataset(g);
    resident_ = std::make_unique<CscGraph>(Dataset::Open(dir_ / "g"), budget_);
  }

  std::vector<uint64_t> RandomEdges(size_t count, uint64_t seed) const {
    Rng rng(seed);
    std::vector<uint64_t> edges(count);
    for (auto& e : edges) e = rng.Below(meta_.num_edges);
    edges.push_back(0);
    edges.push_back(meta_.num_edges - 1);
    edges.push_back(edges[3]);  // a repeat
    return edges;
  }

  testing::ScratchDir dir_;
  MemoryBudget budget_{uint64_t{256} << 20};
  DatasetMeta meta_;
  std::unique_ptr<CscGraph> resident_;
};

TEST_P(DiskTopologyTest, ResolveMatchesTheResidentGraph) {
  const uint64_t all_lists = meta_.num_edges * sizeof(uint64_t);
  for (uint64_t cache : {uint64_t{0}, all_lists / 10, all_lists}) {
    for (auto kind : {IoEngineOptions::Kind::kUring, IoEngineOptions::Kind::kPread}) {
      SCOPED_TRACE(::testing::Message()
                   << "cache " << cache << " engine " << static_cast<int>(kind));
      TopologyOptions options;
      options.placement = TopologyPlacement::kDisk;
      options.adjacency_cache_bytes = cache;
      options.io.kind = kind;
      options.io.depth = 16;
      CscGraph disk(Dataset::Open(dir_ / "g"), budget_, options);
      ASSERT_FALSE(disk.indices_resident());
      std::vector<uint64_t> edges = RandomEdges(20000, cache + 1);
      std::vector<uint64_t> want = edges;
      resident_->ResolveSources(want);
      disk.ResolveSources(edges);
      EXPECT_EQ(edges, want);
      const AdjacencyStats stats = disk.adjacency_stats();
      EXPECT_EQ(stats.entries, want.size());
      if (cache == 0) {
        EXPECT_EQ(stats.cache_hits, 0u);
      }
      if (cache == all_lists) {
        EXPECT_EQ(stats.cache_hits, stats.entries);
        EXPECT_EQ(stats.reads, 0u);
      }
      if (cache == all_lists / 10) {
        EXPECT_GT(stats.cache_hits, 0u);
        EXPECT_GT(stats.reads, 0u);
      }
    }
  }
}

TEST_P(DiskTopologyTest, EdgeScansAndHotnessAgreeAcrossPlacements) {
  TopologyOptions options;
  options.placement = TopologyPlacement::kDisk;
  options.adjacency_cache_bytes = 0;
  CscGraph disk(Dataset::Open(dir_ / "g"), budget_, options);
  std::vector<uint64_t> from_disk, from_memory;
  disk.ForEachSourceChunk([&](uint64_t first, std::span<const uint64_t> sources) {
    EXPECT_EQ(first, from_disk.size());
    from_disk.insert(from_disk.end(), sources.begin(), sources.end());
  });
  resident_->ForEachSourceChunk([&](uint64_t, std::span<const uint64_t> sources) {
    from_memory.insert(from_memory.end(), sources.begin(), sources.end());
  });
  EXPECT_EQ(from_disk, from_memory);
  EXPECT_EQ(from_disk.size(), meta_.num_edges);
  auto rpr_disk = ReversePageRankScores(disk, {}, 5, 0.85, budget_);
  auto rpr_memory = ReversePageRankScores(*resident_, {}, 5, 0.85, budget_);
  for (uint64_t v = 0; v < meta_.num_nodes; ++v) ASSERT_EQ(rpr_disk[v], rpr_memory[v]) << v;
}

// Row blocks are whole rows, consecutive from row 0 to the last, and hold each row's sources in
// edge order, from memory or from the file.
TEST_P(DiskTopologyTest, RowBlocksHoldWholeRowsInEitherPlacement) {
  TopologyOptions options;
  options.placement = TopologyPlacement::kDisk;
  options.adjacency_cache_bytes = 0;
  CscGraph disk(Dataset::Open(dir_ / "g"), budget_, options);
  const uint64_t block_edges = 100;  // a few rows per block, and hubs with more on their own
  for (const CscGraph* graph : {resident_.get(), &disk}) {
    uint64_t next_row = 0, blocks = 0;
    graph->ForEachRowBlock(
        [&](uint64_t begin, uint64_t end, std::span<const uint64_t> sources) {
          ASSERT_EQ(begin, next_row);
          ASSERT_GT(end, begin);
          ASSERT_EQ(sources.size(), graph->EdgeBegin(end) - graph->EdgeBegin(begin));
          ASSERT_TRUE(sources.size() <= block_edges || end == begin + 1);
          ++blocks;
          for (uint64_t v = begin; v < end; ++v) {
            for (uint64_t k = 0; k < graph->InDegree(v); ++k) {
              ASSERT_EQ(sources[graph->EdgeBegin(v) - graph->EdgeBegin(begin) + k],
                        resident_->InNeighbor(v, k));
            }
          }
          next_row = end;
        },
        block_edges);
    EXPECT_EQ(next_row, meta_.num_nodes);
    EXPECT_GT(blocks, meta_.num_edges / block_edges);
  }
}

TEST_P(DiskTopologyTest, CacheAndBuffersAreChargedAndReleased) {
  MemoryBudget budget(uint64_t{64} << 20);
  const uint64_t base = budget.used();
  {
    TopologyOptions options;
    options.placement = TopologyPlacement::kDisk;
    options.adjacency_cache_bytes = 100000;
    CscGraph disk(Dataset::Open(dir_ / "g"), budget, options);
    EXPECT_GE(budget.used(), (meta_.num_nodes + 1) * 8 + 16 * 65536);  // indptr, buffers
    EXPECT_LE(budget.used(), (meta_.num_nodes + 1) * 8 + 256 * 65536 + 100000);
    EXPECT_GT(disk.adjacency_stats().cached_nodes, 0u);
  }
  EXPECT_EQ(budget.used(), base);
}

INSTANTIATE_TEST_SUITE_P(IdWidths, DiskTopologyTest, ::testing::Values(4u, 8u),
                         [](const auto& info) { return std::to_string(info.param) + "_byte_ids"; });

}  // namespace
}  // namespace strata
