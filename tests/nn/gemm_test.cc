#include "nn/gemm.h"

#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::MaxRelativeError;
using testing::RandomMatrix;

// C = alpha * op(A) op(B) + beta * C in double, the obvious way.
MatrixD NaiveGemm(Trans ta, Trans tb, double alpha, MatrixSpan<const float> a,
                  MatrixSpan<const float> b, double beta, MatrixSpan<const float> c) {
  MatrixD out(c.rows(), c.cols());
  size_t k = ta == Trans::kNo ? a.cols() : a.rows();
  for (size_t i = 0; i < c.rows(); ++i) {
    for (size_t j = 0; j < c.cols(); ++j) {
      double sum = 0;
      for (size_t p = 0; p < k; ++p) {
        double x = ta == Trans::kNo ? a(i, p) : a(p, i);
        double y = tb == Trans::kNo ? b(p, j) : b(j, p);
        sum += x * y;
      }
      out(i, j) = alpha * sum + beta * c(i, j);
    }
  }
  return out;
}

TEST(Gemm, MatchesNaiveForEveryTransposeAndStridedViews) {
  const size_t m = 37, n = 29, k = 41;
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      // Operands are submatrices of larger ones, so strides exceed widths.
      Matrix a_store = RandomMatrix<float>(60, 60, 1);
      Matrix b_store = RandomMatrix<float>(60, 60, 2);
      Matrix c_store = RandomMatrix<float>(50, 50, 3);
      MatrixSpan<float> a =
          ta == Trans::kNo ? a_store.span().Sub(1, 2, m, k) : a_store.span().Sub(1, 2, k, m);
      MatrixSpan<float> b =
          tb == Trans::kNo ? b_store.span().Sub(3, 1, k, n) : b_store.span().Sub(3, 1, n, k);
      MatrixSpan<float> c = c_store.span().Sub(2, 3, m, n);
      MatrixD want = NaiveGemm(ta, tb, 0.5, a, b, 2.0, c);
      Gemm<float>(ta, tb, 0.5f, a, b, 2.0f, c, 2);
      EXPECT_LT(MaxRelativeError(c, want.span(), 1.0), 1e-5);
      // Outside the view nothing changed.
      Matrix fresh = RandomMatrix<float>(50, 50, 3);
      EXPECT_EQ(c_store(0, 0), fresh(0, 0));
      EXPECT_EQ(c_store(2, 2), fresh(2, 2));
    }
  }
}

TEST(Gemm, BetaZeroIgnoresNaN) {
  Matrix a = RandomMatrix<float>(4, 3, 1);
  Matrix b = RandomMatrix<float>(3, 5, 2);
  Matrix c(4, 5);
  c.Fill(std::numeric_limits<float>::quiet_NaN());
  Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b.span(), 0, c.span());
  for (float v : c.values()) EXPECT_FALSE(std::isnan(v));
}

TEST(Gemm, DoubleMatchesNaive) {
  MatrixD a = RandomMatrix<double>(7, 5, 1);
  MatrixD b = RandomMatrix<double>(7, 6, 2);
  MatrixD c(5, 6);
  Gemm<double>(Trans::kYes, Trans::kNo, 1, a.span(), b.span(), 0, c.span());
  for (size_t i = 0; i < 5; ++i) {
    for (size_t j = 0; j < 6; ++j) {
      double sum = 0;
      for (size_t p = 0; p < 7; ++p) sum += a(p, i) * b(p, j);
      EXPECT_NEAR(c(i, j), sum, 1e-12);
    }
  }
}

TEST(Gemm, BitIdenticalForAnyThreadCount) {
  // Large enough to be split into chunks, in both directions.
  for (auto [m, n] : {std::pair<size_t, size_t>{1500, 64}, {48, 1300}}) {
    Matrix a = RandomMatrix<float>(m, 300, 1);
    Matrix b = RandomMatrix<float>(300, n, 2);
    Matrix c1(m, n), c2(m, n), c3(m, n);
    Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b.span(), 0, c1.span(), 1);
    Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b.span(), 0, c2.span(), 2);
    Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b.span(), 0, c3.span(), 3);
    EXPECT_TRUE(BitIdentical<float>(c1.span(), c2.span()));
    EXPECT_TRUE(BitIdentical<float>(c1.span(), c3.span()));
  }
}

TEST(Gemm, RejectsMismatchedShapesAndCounts) {
  Matrix a(3, 4), b(5, 2), c(3, 2);
  EXPECT_THROW(Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b.span(), 0, c.span()), Error);
  ResetGemmCounters();
  Matrix b2(4, 2);
  Gemm<float>(Trans::kNo, Trans::kNo, 1, a.span(), b2.span(), 0, c.span());
  GemmCounters counters = ReadGemmCounters();
  EXPECT_EQ(counters.calls, 1u);
  EXPECT_EQ(counters.flops, 2u * 3 * 2 * 4);
}

}  // namespace
}  // namespace strata
