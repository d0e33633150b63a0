// Partition quality and label groups on graphs small enough to count by hand.
#include "partition/partitioning.h"

#include <gtest/gtest.h>

#include <vector>

#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ChargedArrayOf;

// Six nodes, partitions {0, 1, 2} and {3, 4}; node 5 in a third. Edges (source -> destination):
// 1->0, 2->0, 3->1, 4->3, 5->4: two of five cross a partition boundary (3->1, 5->4).
TEST(MeasurePartitioning, CountsTheCutTheSizesAndTheLabelBalance) {
  MemoryBudget budget(uint64_t{1} << 20);
  const CscGraph graph(ChargedArrayOf<uint64_t>(budget, {0, 2, 3, 3, 4, 5, 5}),
                       ChargedArrayOf<uint32_t>(budget, {1, 2, 3, 4, 5}), budget);
  const Partitioning partitioning{3, ChargedArrayOf<uint32_t>(budget, {0, 0, 0, 1, 1, 2})};
  // Training nodes 0, 1 (labels 0, 1: part 0 half and half), 3, 4 (both label 0: part 1 all 0);
  // over the training set 3/4 label 0. Part 0 is off by |1/2 - 3/4| + |1/2 - 1/4| = 1/2, so a
  // total-variation distance of 1/4; part 1 by 1/4 + 1/4, also 1/4. Node 2's label -1 and node
  // 5 (not training) do not count.
  const std::vector<int32_t> labels = {0, 1, -1, 0, 0, 1};
  const std::vector<uint64_t> train = {0, 1, 3, 4};
  const PartitionQuality q = MeasurePartitioning(graph, partitioning, labels, train, 2);
  EXPECT_DOUBLE_EQ(q.edge_cut_ratio, 2.0 / 5);
  EXPECT_EQ(q.max_part_nodes, 3u);
  EXPECT_EQ(q.min_part_nodes, 1u);
  EXPECT_DOUBLE_EQ(q.label_balance, 0.25);

  // Every node in one partition: no cut, perfect balance.
  const Partitioning one{1, ChargedArrayOf<uint32_t>(budget, {0, 0, 0, 0, 0, 0})};
  const PartitionQuality whole = MeasurePartitioning(graph, one, labels, train, 2);
  EXPECT_EQ(whole.edge_cut_ratio, 0);
  EXPECT_EQ(whole.label_balance, 0);
  EXPECT_EQ(whole.max_part_nodes, 6u);
}

TEST(LabelGroups, ATrainingNodesLabelElseOneGroupForEveryOtherNode) {
  MemoryBudget budget(uint64_t{1} << 20);
  const std::vector<int32_t> labels = {2, 0, -1, 1, 5};
  const ChargedArray<uint32_t> groups =
      LabelGroups(labels, std::vector<uint64_t>{0, 2, 4}, 3, budget);
  // Node 0 trains with label 2; node 2 trains unlabelled and node 4 with a label past the
  // classes: both the extra group 3, as are nodes 1 and 3, which do not train.
  EXPECT_EQ(std::vector<uint32_t>(groups.data(), groups.data() + groups.size()),
            (std::vector<uint32_t>{2, 3, 3, 3, 3}));
}

}  // namespace
}  // namespace strata
