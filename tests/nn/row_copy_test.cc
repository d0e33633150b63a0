#include "nn/row_copy.h"

#include <gtest/gtest.h>

#include "strata/error.h"

namespace strata {
namespace {

// Columns 16..272 of a 300 x 300 matrix into columns 8..264 of another: 76,800 values, enough
// for two threads' ranges.
TEST(CopyRows, CopiesAColumnRangeIntoAnotherOnAnyThreadCount) {
  Matrix from(300, 300);
  for (size_t i = 0; i < from.rows(); ++i) {
    for (size_t j = 0; j < from.cols(); ++j) from(i, j) = static_cast<float>(i * 1000 + j);
  }
  for (unsigned threads : {1u, 3u}) {
    Matrix to(300, 280);
    to.Fill(-1);
    CopyRows(MatrixSpan<const float>(from.span()).Sub(0, 16, 300, 256),
             to.span().Sub(0, 8, 300, 256), threads);
    for (size_t i = 0; i < to.rows(); ++i) {
      for (size_t j = 0; j < to.cols(); ++j) {
        const float want = j >= 8 && j < 264 ? from(i, j + 8) : -1;
        ASSERT_EQ(to(i, j), want) << "row " << i << " column " << j << ", " << threads;
      }
    }
  }
}

TEST(CopyRows, RefusesShapesThatDiffer) {
  Matrix from(4, 3), to(4, 2);
  EXPECT_THROW(CopyRows(from.span(), to.span()), Error);
}

}  // namespace
}  // namespace strata
