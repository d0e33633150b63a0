#include "dataset/csc_builder.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/random.h"
#include "dataset/csc_reference.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using Edges = std::vector<std::pair<uint64_t, uint64_t>>;

struct BuildCase {
  uint64_t num_nodes;
  uint64_t buffer_bytes;
  uint32_t id_bits;
  uint32_t node_id_bytes;
  bool deduplicate;
  bool add_self_loops;
};

// Random edges with many repeats, some self loops, and nodes left isolated (ids only drawn
// from the first 80% of the range).
Edges RandomEdges(uint64_t num_nodes, uint64_t count, uint64_t seed) {
  Rng rng(seed);
  Edges edges;
  uint64_t range = std::max<uint64_t>(1, num_nodes * 4 / 5);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t s = rng.Below(range), d = rng.Below(range);
    if (i % 17 == 0) d = s;
    edges.emplace_back(s, d);
    if (i % 5 == 0) edges.emplace_back(s, d);
  }
  return edges;
}

testing::Csc Build(const Edges& edges, const BuildCase& c, const std::string& dir) {
  MemoryBudget budget(uint64_t{1} << 30);
  std::string spill = dir + "/spill";
  std::filesystem::create_directories(spill);
  CscBuilder builder(budget, c.buffer_bytes, spill, c.id_bits, c.deduplicate);
  // Add in uneven batches so batch boundaries do not line up with spills.
  std::vector<uint64_t> src, dst;
  for (size_t i = 0; i < edges.size(); ++i) {
    src.push_back(edges[i].first);
    dst.push_back(edges[i].second);
    if (src.size() == 1 + i % 97 || i + 1 == edges.size()) {
      builder.Add(src, dst);
      src.clear();
      dst.clear();
    }
  }
  EXPECT_EQ(builder.edges_added(), edges.size());
  CscBuildResult result = builder.Finish(c.num_nodes, c.node_id_bytes, c.add_self_loops,
                                         dir + "/indptr.bin", dir + "/indices.bin", nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(spill)) << "run files left in the spill directory";
  testing::Csc csc =
      testing::ReadCscFiles(dir + "/indptr.bin", dir + "/indices.bin", c.node_id_bytes);
  EXPECT_EQ(result.num_edges, csc.indices.size());
  EXPECT_EQ(result.indptr.bytes, (c.num_nodes + 1) * 8);
  EXPECT_EQ(result.indices.bytes, csc.indices.size() * c.node_id_bytes);
  return csc;
}

void ExpectMatchesReference(const BuildCase& c, uint64_t num_edges, uint64_t seed) {
  testing::ScratchDir dir;
  Edges edges = RandomEdges(c.num_nodes, num_edges, seed);
  testing::Csc expected =
      testing::ReferenceCsc(edges, c.num_nodes, c.deduplicate, c.add_self_loops);
  testing::Csc actual = Build(edges, c, dir.path());
  ASSERT_EQ(actual.indptr, expected.indptr);
  ASSERT_EQ(actual.indices, expected.indices);
}

TEST(CscBuilder, MatchesInMemoryReferenceWithDuplicatesAndSelfLoops) {
  ExpectMatchesReference({1000, 1 << 20, IdBitsFor(1000), 4, true, false}, 20000, 1);
}

TEST(CscBuilder, MatchesReferenceWhenSpillingManyRuns) {
  // 64 KiB of buffer holds 4096 keys: 50k edges make a dozen sorted runs to merge.
  ExpectMatchesReference({5000, 1 << 16, IdBitsFor(5000), 4, true, false}, 50000, 2);
}

TEST(CscBuilder, MergesInSeveralPassesWhenRunsExceedTheFanIn) {
  // The smallest buffer (4096 keys) gives a fan-in of 2 with 1 MiB merge slices, so 30 runs
  // need several merge passes.
  ExpectMatchesReference({3000, 4096, IdBitsFor(3000), 4, true, false}, 60000, 3);
}

TEST(CscBuilder, KeepsParallelEdgesWhenAsked) {
  ExpectMatchesReference({700, 1 << 16, IdBitsFor(700), 4, false, false}, 30000, 4);
}

TEST(CscBuilder, AddsOneSelfLoopPerNode) {
  ExpectMatchesReference({900, 1 << 16, IdBitsFor(900), 4, true, true}, 20000, 5);
  ExpectMatchesReference({900, 1 << 16, IdBitsFor(900), 4, false, true}, 20000, 6);
}

TEST(CscBuilder, WideKeysAndEightByteIdsMatchReference) {
  // id_bits 64 forces 128-bit sort keys; the output uses 8-byte ids.
  ExpectMatchesReference({4000, 1 << 16, 64, 8, true, false}, 40000, 7);
  ExpectMatchesReference({4000, 1 << 16, 64, 8, true, true}, 40000, 8);
}

TEST(CscBuilder, EightByteIdsBeyondTwoToTheThirtyTwo) {
  // Ids above 2^32 need the wide path; the CSC is over few destinations so it stays small.
  testing::ScratchDir dir;
  const uint64_t big = (uint64_t{1} << 33) + 5;
  Edges edges = {{big, 3}, {7, 3}, {big, 3}, {big - 1, 0}, {2, 4}};
  BuildCase c{5, 1 << 16, 64, 8, true, false};
  testing::Csc csc = Build(edges, c, dir.path());
  EXPECT_EQ(csc.indptr, (std::vector<uint64_t>{0, 1, 1, 1, 3, 4}));
  EXPECT_EQ(csc.indices, (std::vector<uint64_t>{big - 1, 7, big, 2}));
}

TEST(CscBuilder, EmptyGraphHasAllZeroIndptr) {
  testing::ScratchDir dir;
  testing::Csc csc = Build({}, {4, 1 << 16, IdBitsFor(4), 4, true, true}, dir.path());
  EXPECT_EQ(csc.indptr, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(csc.indices, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST(CscBuilder, ReportsInDegreeStatistics) {
  testing::ScratchDir dir;
  std::filesystem::create_directories(dir / "spill");
  MemoryBudget budget(uint64_t{1} << 26);
  CscBuilder builder(budget, 1 << 16, dir / "spill", IdBitsFor(4), true);
  std::vector<uint64_t> src = {0, 1, 2, 0}, dst = {1, 1, 1, 2};
  builder.Add(src, dst);
  CscBuildResult r = builder.Finish(4, 4, false, dir / "indptr.bin", dir / "indices.bin", nullptr);
  EXPECT_EQ(r.num_edges, 4u);
  EXPECT_EQ(r.in_degree.min, 0u);
  EXPECT_EQ(r.in_degree.max, 3u);
  EXPECT_EQ(r.in_degree.zero_count, 2u);
  EXPECT_DOUBLE_EQ(r.in_degree.mean, 1.0);
}

TEST(CscBuilder, ChargesItsBuffersToTheBudget) {
  testing::ScratchDir dir;
  MemoryBudget budget(uint64_t{1} << 20);
  EXPECT_THROW(CscBuilder(budget, uint64_t{4} << 20, dir.path(), 20, true), Error);
  {
    CscBuilder builder(budget, uint64_t{512} << 10, dir.path(), 20, true);
    EXPECT_EQ(budget.used(), uint64_t{512} << 10);
  }
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace strata
