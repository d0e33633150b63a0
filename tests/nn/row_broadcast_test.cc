#include "nn/row_broadcast.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn_test_util.h"

namespace strata {
namespace {

using testing::RandomMatrix;

TEST(NnRowBroadcast, BroadcastRowsAndColumnSums) {
  std::vector<float> bias = {1, 2, 3};
  Matrix m(4, 3);
  BroadcastRows<float>(bias, m.span());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(m(i, 2), 3.0f);
  Matrix x = RandomMatrix<float>(1000, 37, 8);
  std::vector<float> sums1(37), sums2(37);
  ColumnSums<float>(x.span(), sums1, 1);
  ColumnSums<float>(x.span(), sums2, 2);
  for (size_t j = 0; j < 37; ++j) {
    double want = 0;
    for (size_t i = 0; i < 1000; ++i) want += x(i, j);
    EXPECT_NEAR(sums1[j], want, 1e-3);
    EXPECT_EQ(sums1[j], sums2[j]);
  }
}

}  // namespace
}  // namespace strata
