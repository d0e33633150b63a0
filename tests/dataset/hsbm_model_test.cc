#include "dataset/hsbm_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "common/random.h"

namespace strata {
namespace {

// The share of pairs drawn with `shares` that the blocks at depth j cut.
double PlantedCut(const std::vector<double>& shares, int j) {
  double cut = 0;
  for (int d = 0; d < j; ++d) cut += shares[d] * (1 - std::ldexp(1.0, d - j));
  return cut;
}

TEST(HsbmDepthShares, MeetTheCutsAndTheHomophily) {
  const std::vector<double> cuts = {0.027, 0.066, 0.097, 0.133, 0.175};
  const int levels = 13, class_depth = 6;
  const std::vector<double> same_class = HsbmSameClass(LayOutHsbmClasses(47, 0), levels);
  const std::vector<double> shares = HsbmDepthShares(levels, class_depth, same_class, cuts, 0.8);
  ASSERT_EQ(shares.size(), levels + 1u);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.0, 1e-12);
  for (double share : shares) EXPECT_GE(share, 0);
  for (int j = 1; j <= 5; ++j) EXPECT_NEAR(PlantedCut(shares, j), cuts[j - 1], 1e-12) << j;
  double same = 0;
  for (int d = 0; d <= levels; ++d) same += shares[d] * same_class[d];
  EXPECT_NEAR(same, 0.8, 1e-12);
}

TEST(HsbmDepthShares, CutsThatCannotBeMetAreMetAsNearlyAsTheyCanBe) {
  // A cut at 4 parts below the one at 2 asks for a negative share.
  const std::vector<double> same_class = HsbmSameClass(LayOutHsbmClasses(4, 0), 6);
  const std::vector<double> shares =
      HsbmDepthShares(6, 2, same_class, std::vector<double>{0.4, 0.1}, 0.5);
  for (double share : shares) EXPECT_GE(share, 0);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.0, 1e-12);
  EXPECT_NEAR(PlantedCut(shares, 1), 0.4, 1e-12);
}

TEST(LayOutHsbmClasses, EqualClassesTakeRunsOfOneOrTwoBlocks) {
  const HsbmClassLayout layout = LayOutHsbmClasses(12, 0);
  EXPECT_EQ(layout.depth, 4);
  EXPECT_EQ(layout.first, (std::vector<uint64_t>{0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16}));
  const HsbmClassLayout eight = LayOutHsbmClasses(8, 0);
  EXPECT_EQ(eight.depth, 3);
  EXPECT_EQ(eight.first, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(LayOutHsbmClasses, SkewedClassesFollowTheirShares) {
  // Shares 1, 1/2, 1/3, 1/4 of 25/12: 0.48, 0.24, 0.16, 0.12; the smallest needs depth 4.
  const HsbmClassLayout layout = LayOutHsbmClasses(4, 1);
  EXPECT_EQ(layout.depth, 4);
  EXPECT_EQ(layout.first, (std::vector<uint64_t>{0, 8, 12, 15, 16}));
  // Forty classes with ogbn-arxiv's skew: every class a block, the largest about 23%.
  const HsbmClassLayout forty = LayOutHsbmClasses(40, 1);
  for (size_t k = 0; k + 1 < forty.first.size(); ++k) EXPECT_LT(forty.first[k], forty.first[k + 1]);
  EXPECT_NEAR(std::ldexp(static_cast<double>(forty.first[1]), -forty.depth), 0.234, 0.01);
}

TEST(HsbmSameClass, CountsThePairsInsideEachBlock) {
  // Four classes of blocks {0..7}, {8..11}, {12..14}, {15} at depth 4.
  const std::vector<double> same = HsbmSameClass(LayOutHsbmClasses(4, 1), 6);
  ASSERT_EQ(same.size(), 7u);
  EXPECT_DOUBLE_EQ(same[0], (64.0 + 16 + 9 + 1) / 256);
  EXPECT_DOUBLE_EQ(same[1], 1.0 / 2 + (16.0 + 9 + 1) / 64 / 2);
  EXPECT_DOUBLE_EQ(same[3], (4 + 2 + 1 + (1.0 / 4 + 1.0 / 4)) / 8);
  for (int d = 4; d <= 6; ++d) EXPECT_EQ(same[d], 1.0);
}

// Pairs drawn from the model cross the planted blocks and stay in their class as often as the
// profile says, never loop, and name every class.
TEST(HsbmModel, PairsFollowTheProfile) {
  const std::vector<double> cuts = {0.05, 0.12, 0.18, 0.23, 0.27};
  const uint64_t nodes = 50000;
  const uint32_t classes = 12;
  const HsbmModel model(nodes, classes, 0, cuts, 0.7, 2.5, 0, 3);
  ASSERT_EQ(model.levels(), 9);  // 512 leaves of about 100 nodes
  ASSERT_EQ(model.class_depth(), 4);
  Rng rng(5);
  const int pairs = 400000;
  std::vector<int> crossing(6, 0);
  int same_class = 0;
  for (int i = 0; i < pairs; ++i) {
    uint64_t u, v;
    model.SamplePair(rng, u, v);
    ASSERT_NE(u, v);
    ASSERT_LT(u, nodes);
    ASSERT_LT(v, nodes);
    for (int j = 1; j <= 5; ++j) crossing[j] += model.BlockOf(u, j) != model.BlockOf(v, j);
    same_class += model.ClassOf(u) == model.ClassOf(v);
  }
  for (int j = 1; j <= 5; ++j) {
    EXPECT_NEAR(static_cast<double>(crossing[j]) / pairs, cuts[j - 1], 0.005) << j;
  }
  // The profile's homophily (the cuts reach the class depth, so they set it).
  const std::vector<double>& shares = model.depth_shares();
  double expected = 0;
  for (int d = 0; d <= model.levels(); ++d) expected += shares[d] * model.same_class()[d];
  EXPECT_NEAR(static_cast<double>(same_class) / pairs, expected, 0.005);
  std::vector<bool> seen(classes, false);
  for (uint64_t v = 0; v < nodes; ++v) seen[model.ClassOf(v)] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), classes);
}

TEST(HsbmModel, CommunitiesNestInsideTheClass) {
  const HsbmModel model(20000, 8, 0, std::vector<double>{0.1, 0.2}, 0.8, 2.5, 0, 1);
  const std::vector<uint64_t> counts = model.CommunityCounts();
  ASSERT_EQ(counts.size(), static_cast<size_t>(HsbmModel::kCommunityLevels));
  for (size_t k = 0; k < counts.size(); ++k) EXPECT_EQ(counts[k], uint64_t{16} << k);
  for (uint64_t v = 0; v < 20000; v += 7) {
    for (size_t k = 0; k < counts.size(); ++k) {
      ASSERT_LT(model.CommunityOf(v, k), counts[k]);
      // A community's block lies inside its class's block (one class per block at depth 3).
      EXPECT_EQ(model.CommunityOf(v, k) >> (k + 1), model.ClassOf(v));
    }
  }
}

}  // namespace
}  // namespace strata
