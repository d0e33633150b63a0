// SelectHubs on a graph small enough to walk by hand: the hub is the node whose reverse walk
// mass reaches training nodes of other partitions, not the one that only feeds its own
// partition's; count 0 selects none, a count past N every node, ascending.
#include "partition/hub_selection.h"

#include <gtest/gtest.h>

#include <vector>

#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

// Six nodes in two partitions, {0, 1, 2} and {3, 4, 5}; training nodes 0 and 3. Node 0's
// in-neighbours are 1 (its own partition) and 4 (the other); node 3's is 4. One lazy reverse
// step from the training nodes puts 0.25 on node 1, all of it from its own partition, and 0.75
// on node 4: 0.5 from node 3 (its own) and 0.25 from node 0 (foreign). Node 4 scores 0.25,
// every other node 0.
struct TwoPartitions {
  MemoryBudget budget{uint64_t{1} << 20};
  CscGraph graph{testing::ChargedArrayOf<uint64_t>(budget, {0, 2, 2, 2, 3, 3, 3}),
                 testing::ChargedArrayOf<uint32_t>(budget, {1, 4, 4}), budget};
  Partitioning partitioning{2, testing::ChargedArrayOf<uint32_t>(budget, {0, 0, 0, 1, 1, 1})};
  std::vector<uint64_t> train = {0, 3};
};

TEST(SelectHubs, PicksTheNodeThatFeedsOtherPartitionsTrainingNodes) {
  TwoPartitions t;
  EXPECT_EQ(SelectHubs(t.graph, t.partitioning, t.train, 1, 1, t.budget), std::vector<uint64_t>{4});
  // Two steps: node 4 has no in-neighbours and keeps its mass, so it still leads.
  EXPECT_EQ(SelectHubs(t.graph, t.partitioning, t.train, 1, 2, t.budget), std::vector<uint64_t>{4});
}

TEST(SelectHubs, NoneForCountZeroAndEveryNodeAscendingPastN) {
  TwoPartitions t;
  EXPECT_TRUE(SelectHubs(t.graph, t.partitioning, t.train, 0, 1, t.budget).empty());
  EXPECT_EQ(SelectHubs(t.graph, t.partitioning, t.train, 100, 1, t.budget),
            (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(t.budget.used(), 3 * sizeof(uint32_t) + 7 * sizeof(uint64_t) + 6 * sizeof(uint32_t));
}

}  // namespace
}  // namespace strata
