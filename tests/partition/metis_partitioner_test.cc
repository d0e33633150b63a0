// MetisPartition refuses, in one line naming --method metis, a graph whose estimated need is
// beyond the budget, before METIS allocates anything.
#include "partition/metis_partitioner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "partition_fixture.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

using MetisPartitionTest = GeneratedInputTest;

TEST_F(MetisPartitionTest, BeyondTheBudgetIsRefusedInOneLine) {
  const Dataset in = Dataset::Open(dir_ / "in");
  MemoryBudget budget(8 << 20);
  const CscGraph graph(in, budget);
  MemoryBudget small(MetisMemoryEstimate(graph, 1) - 1);
  const std::vector<uint32_t> groups(graph.num_nodes(), 0);
  try {
    MetisPartition(graph, 6, MetisBalance::kNodes, groups, 1, 0, small);
    FAIL() << "METIS ran beyond the budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--method metis"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
