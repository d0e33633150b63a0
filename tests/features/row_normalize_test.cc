// NormalizeRows: each row divided by its L1 norm (signs kept, magnitudes summed), all-zero rows
// left zero, rows independent of each other, a single row and no rows at all.
#include "features/row_normalize.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata {
namespace {

TEST(NormalizeRows, DividesEachRowByItsL1Norm) {
  std::vector<float> rows = {1,    3, 0,  0,   // sum 4
                             0,    0, 0,  0,   // zero: stays
                             -2,   2, -4, 0,   // |.| sums to 8
                             0.5f, 0, 0,  0};  // one non-zero: becomes 1
  NormalizeRows(rows, 4);
  const std::vector<float> expected = {0.25f,  0.75f, 0,     0, 0,    0, 0, 0,
                                       -0.25f, 0.25f, -0.5f, 0, 1.0f, 0, 0, 0};
  EXPECT_EQ(rows, expected);
}

TEST(NormalizeRows, RowsAreIndependentAndAnEmptySpanIsFine) {
  std::vector<float> one = {2, 6};
  NormalizeRows(one, 2);
  EXPECT_EQ(one, (std::vector<float>{0.25f, 0.75f}));
  std::vector<float> both = {2, 6, 1, 1};
  NormalizeRows(both, 2);
  EXPECT_EQ(both, (std::vector<float>{0.25f, 0.75f, 0.5f, 0.5f}));
  std::vector<float> none;
  NormalizeRows(none, 3);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace strata
