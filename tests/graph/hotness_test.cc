#include "graph/hotness.h"

#include <gtest/gtest.h>

#include "sampling/khop_sampler.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

// A small generated SBM graph (undirected, power-law degrees).
class HotnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    meta_ = GenerateDataset(testing::SmallGraph(dir_ / "g", 3000, 4, 3, 8, 7));
    graph_ = std::make_unique<CscGraph>(Dataset::Open(dir_ / "g"), budget_);
  }
  testing::ScratchDir dir_;
  MemoryBudget budget_{uint64_t{256} << 20};
  DatasetMeta meta_;
  std::unique_ptr<CscGraph> graph_;
};

TEST_F(HotnessTest, DegreeCountsAppearancesInNeighbourLists) {
  auto scores = DegreeScores(*graph_, budget_);
  double total = 0;
  for (uint64_t v = 0; v < graph_->num_nodes(); ++v) total += scores[v];
  EXPECT_EQ(total, static_cast<double>(graph_->num_edges()));
  // The graph is undirected, so appearances equal in-degrees.
  for (uint64_t v = 0; v < graph_->num_nodes(); ++v) {
    ASSERT_EQ(scores[v], static_cast<float>(graph_->InDegree(v)));
  }
}

TEST_F(HotnessTest, ReversePageRankIsADistributionFavouringHubs) {
  auto scores = ReversePageRankScores(*graph_, {}, 20, 0.85, budget_);
  double total = 0;
  for (uint64_t v = 0; v < graph_->num_nodes(); ++v) total += scores[v];
  EXPECT_NEAR(total, 1.0, 1e-3);
  auto top = TopScored(scores, 10, budget_);
  auto degree_top = TopScored(DegreeScores(*graph_, budget_), 10, budget_);
  // On an undirected graph PageRank's top nodes are the hubs.
  int shared = 0;
  for (uint64_t v : top) shared += std::count(degree_top.begin(), degree_top.end(), v);
  EXPECT_GE(shared, 7);
}

TEST_F(HotnessTest, PresampleCountsBatchMembership) {
  KHopSampler sampler(*graph_, {}, {5, 5}, 64, 1, budget_);
  auto scores = PresampleScores([&](uint64_t b) { return sampler.Batch(b); }, 10,
                                graph_->num_nodes(), budget_);
  double total = 0;
  for (uint64_t v = 0; v < graph_->num_nodes(); ++v) {
    ASSERT_LE(scores[v], 10.0f);
    total += scores[v];
  }
  double expected = 0;
  for (uint64_t b = 0; b < 10; ++b) expected += sampler.Batch(b).size();
  EXPECT_EQ(total, expected);
}

TEST(TopScored, OrdersByScoreThenId) {
  MemoryBudget budget(1 << 20);
  ChargedArray<float> scores(budget, 6, "test");
  float values[] = {1, 5, 3, 5, 0, 3};
  std::copy(values, values + 6, scores.data());
  EXPECT_EQ(TopScored(scores, 3, budget), (std::vector<uint64_t>{1, 3, 2}));
  EXPECT_EQ(TopScored(scores, 10, budget).size(), 6u);
}

}  // namespace
}  // namespace strata
