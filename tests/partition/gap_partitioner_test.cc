// GapPartition: every node placed in a partition below `parts`, every (partition, label group)
// within its capacity ⌈imbalance · n_g / k⌉ (so exactly its share at imbalance 1 when the share
// is whole), the same assignment for the same input, a graph of separate cliques cut along them
// with and without clustering first, and the options it cannot meet refused.
#include "partition/gap_partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "partition_fixture.h"
#include "strata/error.h"
#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ChargedArrayOf;

// A CSC graph of `nodes` nodes whose in-neighbours `sources(v)` lists, ascending.
template <typename Sources>
CscGraph GraphOf(uint64_t nodes, Sources sources, MemoryBudget& budget) {
  std::vector<uint64_t> indptr = {0};
  std::vector<uint32_t> indices;
  for (uint64_t v = 0; v < nodes; ++v) {
    for (uint32_t u : sources(v)) indices.push_back(u);
    indptr.push_back(indices.size());
  }
  return CscGraph(ChargedArrayOf(budget, indptr), ChargedArrayOf(budget, indices), budget);
}

// A ring of 12 nodes, each the in-neighbour of the nodes beside it.
CscGraph Ring(MemoryBudget& budget) {
  constexpr uint32_t kRing = 12;
  return GraphOf(
      kRing,
      [](uint64_t v) {
        std::vector<uint32_t> sources = {static_cast<uint32_t>((v + kRing - 1) % kRing),
                                         static_cast<uint32_t>((v + 1) % kRing)};
        std::sort(sources.begin(), sources.end());
        return sources;
      },
      budget);
}

using GapPartitionTest = GeneratedInputTest;

TEST_F(GapPartitionTest, RespectsTheCapacityOfEveryLabelGroup) {
  const Dataset in = Dataset::Open(dir_ / "in");
  MemoryBudget budget(64 << 20);
  const CscGraph graph(in, budget);
  const ChargedArray<int32_t> labels = in.ReadLabels(budget);
  const std::vector<uint64_t> train = in.ReadSplit(Split::kTrain);
  const uint32_t classes = in.meta().num_classes;
  const ChargedArray<uint32_t> groups =
      LabelGroups({labels.data(), labels.size()}, train, classes, budget);
  for (double imbalance : {1.0, 1.05, 1.5}) {
    for (uint32_t parts : {1u, 7u, 64u}) {
      SCOPED_TRACE(::testing::Message() << parts << " parts, imbalance " << imbalance);
      GapOptions o;
      o.parts = parts;
      o.imbalance = imbalance;
      const Partitioning p =
          GapPartition(graph, {groups.data(), groups.size()}, classes + 1, o, budget);
      ASSERT_EQ(p.parts, parts);
      ASSERT_EQ(p.part_of.size(), kNodes);
      std::vector<uint64_t> size(classes + 1, 0);
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> count;
      for (uint64_t v = 0; v < kNodes; ++v) {
        ASSERT_LT(p.part_of[v], parts);
        ++size[groups[v]];
        ++count[{groups[v], p.part_of[v]}];
      }
      for (const auto& [key, n] : count) {
        const double capacity = std::ceil(imbalance * size[key.first] / parts);
        EXPECT_LE(n, capacity) << "group " << key.first << " partition " << key.second;
      }
    }
  }
}

TEST_F(GapPartitionTest, SameInputSameAssignment) {
  const Dataset in = Dataset::Open(dir_ / "in");
  MemoryBudget budget(64 << 20);
  const CscGraph graph(in, budget);
  const std::vector<uint32_t> groups(kNodes, 0);
  GapOptions o;
  o.parts = 7;
  o.passes = 3;
  const Partitioning a = GapPartition(graph, groups, 1, o, budget);
  const Partitioning b = GapPartition(graph, groups, 1, o, budget);
  for (uint64_t v = 0; v < kNodes; ++v) ASSERT_EQ(a.part_of[v], b.part_of[v]) << "node " << v;
}

// Twelve nodes in two alternating groups of six: at imbalance 1 each of three partitions may
// hold two of each group, and twelve nodes fill those places exactly.
TEST(GapPartition, ImbalanceOneGivesEachPartitionExactlyItsShareOfEachGroup) {
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph = Ring(budget);
  const std::vector<uint32_t> groups = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  GapOptions o;
  o.parts = 3;
  o.imbalance = 1.0;
  const Partitioning p = GapPartition(graph, groups, 2, o, budget);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> count;
  for (uint64_t v = 0; v < groups.size(); ++v) ++count[{p.part_of[v], groups[v]}];
  ASSERT_EQ(count.size(), 6u);
  for (const auto& [key, n] : count) {
    EXPECT_EQ(n, 2u) << "partition " << key.first << " group " << key.second;
  }
}

// Four cliques of eight with interleaved ids (node v in clique v % 4), each joined to the next
// by one edge: four partitions get one clique each, and only the joining edges are cut.
TEST(GapPartition, CutsSeparateCliquesAlongThem) {
  constexpr uint32_t kCliques = 4, kCliqueSize = 8, kNodes = kCliques * kCliqueSize;
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph = GraphOf(
      kNodes,
      [](uint64_t v) {
        std::vector<uint32_t> sources;
        for (uint32_t u = v % kCliques; u < kNodes; u += kCliques) {
          if (u != v) sources.push_back(u);
        }
        // Node c (the first of clique c) feeds node c + 1, the first of the next clique.
        if (v > 0 && v < kCliques) sources.push_back(static_cast<uint32_t>(v - 1));
        std::sort(sources.begin(), sources.end());
        return sources;
      },
      budget);
  for (uint32_t rounds : {0u, 3u}) {
    SCOPED_TRACE(::testing::Message() << rounds << " clustering rounds");
    GapOptions o;
    o.parts = kCliques;
    o.cluster_rounds = rounds;
    const Partitioning p = GapPartition(graph, std::vector<uint32_t>(kNodes, 0), 1, o, budget);
    std::vector<uint32_t> part_of_clique;
    for (uint32_t c = 0; c < kCliques; ++c) part_of_clique.push_back(p.part_of[c]);
    for (uint32_t v = 0; v < kNodes; ++v) {
      EXPECT_EQ(p.part_of[v], part_of_clique[v % kCliques]) << "node " << v;
    }
    std::sort(part_of_clique.begin(), part_of_clique.end());
    EXPECT_EQ(part_of_clique, (std::vector<uint32_t>{0, 1, 2, 3}));
  }
}

TEST(GapPartition, RefusesOptionsItCannotMeet) {
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph = Ring(budget);
  const std::vector<uint32_t> groups(12, 0);
  auto refusal = [&](uint32_t parts, uint32_t passes, double imbalance) -> std::string {
    GapOptions o;
    o.parts = parts;
    o.passes = passes;
    o.imbalance = imbalance;
    try {
      GapPartition(graph, groups, 1, o, budget);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(refusal(0, 2, 1.05), "--parts must be between 1 and the number of nodes");
  EXPECT_EQ(refusal(13, 2, 1.05), "--parts must be between 1 and the number of nodes");
  EXPECT_EQ(refusal(3, 0, 1.05), "--passes must be at least 1");
  EXPECT_EQ(refusal(3, 2, 0.99), "--imbalance must be at least 1");
}

}  // namespace
}  // namespace strata
