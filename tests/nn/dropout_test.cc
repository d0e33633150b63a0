#include "nn/dropout.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "nn/activations.h"
#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::RandomMatrix;

TEST(NnDropout, DropoutKeepsAboutOneMinusPScaledAndBackwardUsesTheSameMask) {
  Matrix x(200, 100);
  x.Fill(1);
  Matrix y(200, 100);
  Dropout<float>(x.span(), y.span(), 0.3, 42, 2);
  size_t kept = 0;
  for (float v : y.values()) {
    if (v != 0) {
      EXPECT_FLOAT_EQ(v, 1 / 0.7f);
      ++kept;
    }
  }
  EXPECT_NEAR(double(kept) / y.size(), 0.7, 0.01);
  Matrix g(200, 100), gi(200, 100);
  g.Fill(1);
  DropoutBackward<float>(g.span(), gi.span(), 0.3, 42, 1);
  EXPECT_TRUE(BitIdentical<float>(y.span(), gi.span()));
  // Another seed, another mask; p = 0 is the identity.
  Matrix y2(200, 100);
  Dropout<float>(x.span(), y2.span(), 0.3, 43);
  EXPECT_FALSE(BitIdentical<float>(y.span(), y2.span()));
  Dropout<float>(x.span(), y2.span(), 0.0, 43);
  EXPECT_TRUE(BitIdentical<float>(x.span(), y2.span()));
  EXPECT_THROW(Dropout<float>(x.span(), y2.span(), 1.0, 1), Error);
}

// Sparse dropout: zeros stay zero and draw nothing, so a row's mask over its nonzeros is the
// same whatever zeros lie between them; a dense row of nonzeros gets Dropout's mask.
TEST(NnDropout, DropoutNonzerosDrawsOnlyForNonzeros) {
  Matrix dense(50, 40);
  dense.Fill(1);
  Matrix expected(50, 40);
  Dropout<float>(dense.span(), expected.span(), 0.4, 9);
  DropoutNonzeros<float>(dense.span(), 0.4, 9, 2);
  EXPECT_TRUE(BitIdentical<float>(dense.span(), expected.span()));
  // The same nonzeros spread over twice the columns, zeros between: the same kept values.
  Matrix spread(50, 80);
  spread.SetZero();
  for (size_t i = 0; i < 50; ++i) {
    for (size_t j = 0; j < 40; ++j) spread(i, 2 * j + 1) = 1;
  }
  DropoutNonzeros<float>(spread.span(), 0.4, 9, 1);
  for (size_t i = 0; i < 50; ++i) {
    for (size_t j = 0; j < 40; ++j) {
      EXPECT_EQ(spread(i, 2 * j), 0.0f);
      EXPECT_EQ(spread(i, 2 * j + 1), expected(i, j));
    }
  }
}

TEST(NnDropout, FusedReluDropoutMatchesSeparateKernels) {
  Matrix x = RandomMatrix<float>(300, 70, 5);
  Matrix fused = x;
  ReluDropout<float>(fused.span(), 0.5, 9, 2);
  Matrix separate(300, 70);
  Relu<float>(x.span(), separate.span());
  Dropout<float>(separate.span(), separate.span(), 0.5, 9);
  EXPECT_TRUE(BitIdentical<float>(fused.span(), separate.span()));
  Matrix g = RandomMatrix<float>(300, 70, 6);
  Matrix want(300, 70);
  DropoutBackward<float>(g.span(), want.span(), 0.5, 9);
  ReluBackward<float>(x.span(), want.span(), want.span());  // x > 0 is relu's condition
  ReluDropoutBackward<float>(fused.span(), g.span(), 0.5, 2);
  EXPECT_TRUE(BitIdentical<float>(g.span(), want.span()));
}

// ELU then dropout, against ELU by hand and Dropout's mask; the backward against the chain
// rule with the same mask, ELU'(x) = 1 for x > 0, exp(x) for x <= 0.
TEST(NnDropout, EluDropoutAndBackward) {
  MatrixD x = RandomMatrix<double>(200, 30, 5);
  x(0, 0) = 0;  // ELU'(0) = 1, and a kept zero output must not read as dropped
  MatrixD y = x;
  EluDropout<double>(y.span(), 0.5, 9, 2);
  MatrixD ones(200, 30);
  for (size_t i = 0; i < 200; ++i) {
    for (size_t j = 0; j < 30; ++j) ones(i, j) = 1;
  }
  MatrixD mask(200, 30);
  Dropout<double>(ones.span(), mask.span(), 0.5, 9);
  MatrixD g = RandomMatrix<double>(200, 30, 6);
  MatrixD grad = g;
  EluDropoutBackward<double>(y.span(), grad.span(), 0.5, 9, 2);
  for (size_t i = 0; i < 200; ++i) {
    for (size_t j = 0; j < 30; ++j) {
      const double v = x(i, j);
      const double elu = v > 0 ? v : std::expm1(v);
      const double derivative = v > 0 ? 1 : std::exp(v);
      EXPECT_NEAR(y(i, j), elu * mask(i, j), 1e-12);
      EXPECT_NEAR(grad(i, j), g(i, j) * mask(i, j) * derivative, 1e-12);
    }
  }
  MatrixD plain = x;
  EluDropout<double>(plain.span(), 0.0, 9);
  EXPECT_NEAR(plain(1, 1), x(1, 1) > 0 ? x(1, 1) : std::expm1(x(1, 1)), 1e-15);
}

TEST(NnDropout, KeyedRowsGetTheirNodesMasksWhereverTheySit) {
  // Two batches listing nodes 11 and 40 in either order: each node's row gets the same mask.
  Matrix a = RandomMatrix<float>(2, 24, 5);
  Matrix b(2, 24);
  std::copy_n(a.row(1), 24, b.row(0));
  std::copy_n(a.row(0), 24, b.row(1));
  const std::vector<uint64_t> keys_a = {11, 40}, keys_b = {40, 11};
  EluDropout<float>(a.span(), 0.5, 9, 1, RowKeys(keys_a));
  EluDropout<float>(b.span(), 0.5, 9, 1, RowKeys(keys_b));
  for (size_t j = 0; j < 24; ++j) {
    EXPECT_EQ(a.row(0)[j], b.row(1)[j]);
    EXPECT_EQ(a.row(1)[j], b.row(0)[j]);
  }
}

TEST(NnDropout, ColumnSlicesGetTheWholeRowsMasks) {
  // Rows 100.. of a matrix, finished whole or as column slices of 16, 5 and 3 columns.
  const Matrix x = RandomMatrix<float>(30, 24, 8);
  for (bool elu : {false, true}) {
    Matrix whole = x;
    Matrix sliced = x;
    auto finish = [&](MatrixSpan<float> m, size_t first_column) {
      if (elu) {
        EluDropout<float>(m, 0.5, 9, 2, 100, first_column);
      } else {
        ReluDropout<float>(m, 0.5, 9, 2, 100, first_column);
      }
    };
    finish(whole.span(), 0);
    for (auto [first, cols] : {std::pair<size_t, size_t>{0, 16}, {16, 5}, {21, 3}}) {
      finish(sliced.span().Sub(0, first, 30, cols), first);
    }
    EXPECT_TRUE(BitIdentical<float>(whole.span(), sliced.span())) << (elu ? "ELU" : "ReLU");
  }
}

TEST(NnDropout, MasksIndependentOfThreadCount) {
  Matrix a = RandomMatrix<float>(5000, 40, 7);
  Matrix b = a;
  ReluDropout<float>(a.span(), 0.4, 11, 1);
  ReluDropout<float>(b.span(), 0.4, 11, 3);
  EXPECT_TRUE(BitIdentical<float>(a.span(), b.span()));
}

// A full-graph input group's nonzeros (128 rows of 40): enough draws to share among threads,
// each row's from its own stream.
TEST(NnDropout, SparseMasksIndependentOfThreadCount) {
  constexpr uint64_t kRows = 128, kPerRow = 40;
  std::vector<uint64_t> indptr(kRows + 1);
  for (uint64_t i = 0; i <= kRows; ++i) indptr[i] = 1000 + i * kPerRow;  // a group past row 0's
  Matrix values = RandomMatrix<float>(kRows, kPerRow, 8);
  Matrix threaded = values;
  DropoutNonzerosCsr<float>(indptr, {values.data(), kRows * kPerRow}, 0.5, 11, 1);
  DropoutNonzerosCsr<float>(indptr, {threaded.data(), kRows * kPerRow}, 0.5, 11, 2);
  EXPECT_TRUE(BitIdentical<float>(values.span(), threaded.span()));
}

}  // namespace
}  // namespace strata
