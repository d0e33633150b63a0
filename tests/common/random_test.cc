// Rng's standard normal (the ziggurat) against the normal distribution: its moments, its CDF at
// points across the body and both tails (beyond the base layer's edge at 3.44 too), symmetry,
// and the same draws from the same seed.
#include "common/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace strata {
namespace {

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(Rng, NormalHasTheStandardNormalsDistribution) {
  constexpr int kDraws = 4000000;
  Rng rng(42);
  const std::vector<double> points = {-4.0, -3.5, -3.0, -2.0, -1.0, -0.5, 0.0,
                                      0.3,  1.0,  1.7,  2.5,  3.44, 3.8,  4.5};
  std::vector<int> below(points.size(), 0);
  double sum = 0, squares = 0, fourth = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = rng.Normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += x * x;
    fourth += x * x * x * x;
    for (size_t p = 0; p < points.size(); ++p) below[p] += x < points[p];
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.003);
  EXPECT_NEAR(squares / kDraws, 1.0, 0.003);
  EXPECT_NEAR(fourth / kDraws, 3.0, 0.03);
  for (size_t p = 0; p < points.size(); ++p) {
    // Five binomial standard deviations, and at least a few draws' worth in the far tails.
    const double expected = NormalCdf(points[p]);
    const double sd = std::sqrt(expected * (1 - expected) / kDraws);
    EXPECT_NEAR(static_cast<double>(below[p]) / kDraws, expected, 5 * sd + 2.0 / kDraws)
        << "P(x < " << points[p] << ")";
  }
}

TEST(Rng, TheSameSeedDrawsTheSameNormals) {
  Rng a(7), b(7), c(8);
  int same = 0;
  for (int i = 0; i < 1000; ++i) {
    const double x = a.Normal();
    ASSERT_EQ(x, b.Normal());
    same += x == c.Normal();
  }
  EXPECT_LT(same, 5);
}

}  // namespace
}  // namespace strata
