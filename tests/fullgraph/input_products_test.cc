// The input products on a sparse group equal those on the same rows stored dense (up to the
// order of a sum), so do the rows' inverse norms, sparse input dropout keeps the dense mask,
// and nothing depends on threads.
#include "fullgraph/input_products.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "nn/dropout.h"

namespace strata {
namespace {

constexpr uint64_t kRows = 2000, kDim = 500, kOut = 9;

struct Rows {
  std::vector<float> dense = std::vector<float>(kRows * kDim, 0.0f);
  std::vector<uint64_t> indptr{0};
  std::vector<uint32_t> columns;
  std::vector<float> values;

  InputGroup Dense() const {
    InputGroup g;
    g.rows = kRows;
    g.dense = MatrixSpan<const float>(dense.data(), kRows, kDim);
    return g;
  }
  InputGroup Sparse() const {
    InputGroup g;
    g.rows = kRows;
    g.indptr = indptr;
    g.columns = columns.data();
    g.values = values.data();
    return g;
  }
};

Rows RandomRows() {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1, 1);
  Rows r;
  for (uint64_t i = 0; i < kRows; ++i) {
    for (uint32_t j = 0; j < kDim; ++j) {
      if (rng() % 50 != 0) continue;
      r.dense[i * kDim + j] = value(rng);
      r.columns.push_back(j);
      r.values.push_back(r.dense[i * kDim + j]);
    }
    r.indptr.push_back(r.columns.size());
  }
  return r;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> m(n);
  for (float& x : m) x = value(rng);
  return m;
}

TEST(InputProducts, SparseEqualsDense) {
  const Rows rows = RandomRows();
  const std::vector<float> w = Random(kDim * kOut, 4);
  std::vector<float> grad = Random(kRows * kOut, 5);
  MatrixSpan<const float> weight(w.data(), kDim, kOut);
  MatrixSpan<float> g(grad.data(), kRows, kOut);
  std::vector<float> dense_out(kRows * kOut), sparse_out(kRows * kOut);
  InputTimes(rows.Dense(), weight, {dense_out.data(), kRows, kOut}, 1);
  InputTimes(rows.Sparse(), weight, {sparse_out.data(), kRows, kOut}, 1);
  for (size_t i = 0; i < dense_out.size(); ++i) ASSERT_NEAR(sparse_out[i], dense_out[i], 1e-5);

  std::vector<float> dense_grad(kDim * kOut, NAN), sparse_grad(kDim * kOut, NAN);
  InputTransposedTimes(rows.Dense(), g, {dense_grad.data(), kDim, kOut}, false, 1);
  InputTransposedTimes(rows.Sparse(), g, {sparse_grad.data(), kDim, kOut}, false, 1);
  for (size_t i = 0; i < dense_grad.size(); ++i) ASSERT_NEAR(sparse_grad[i], dense_grad[i], 1e-5);
  // Accumulating adds a second product.
  InputTransposedTimes(rows.Sparse(), g, {sparse_grad.data(), kDim, kOut}, true, 1);
  for (size_t i = 0; i < dense_grad.size(); ++i) {
    ASSERT_NEAR(sparse_grad[i], 2 * dense_grad[i], 2e-5);
  }
}

TEST(InputProducts, ThreadsChangeNoBit) {
  const Rows rows = RandomRows();
  const std::vector<float> w = Random(kDim * kOut, 6);
  std::vector<float> grad = Random(kRows * kOut, 7);
  MatrixSpan<const float> weight(w.data(), kDim, kOut);
  MatrixSpan<float> g(grad.data(), kRows, kOut);
  std::vector<float> out1(kRows * kOut), out3(kRows * kOut), grad1(kDim * kOut), grad3(kDim * kOut);
  InputTimes(rows.Sparse(), weight, {out1.data(), kRows, kOut}, 1);
  InputTimes(rows.Sparse(), weight, {out3.data(), kRows, kOut}, 3);
  InputTransposedTimes(rows.Sparse(), g, {grad1.data(), kDim, kOut}, false, 1);
  InputTransposedTimes(rows.Sparse(), g, {grad3.data(), kDim, kOut}, false, 3);
  EXPECT_EQ(out1, out3);
  EXPECT_EQ(grad1, grad3);
}

// With a row scale, each product row is its sum scaled, and the gradient's rows are scaled before
// their sums (a dense group's in place, for its GEMM; a sparse group's only read): bit for bit
// what scaling outside the products gives, on any threads, dense or sparse, and on a part of the
// group (Rows) what the whole gives for those rows.
TEST(InputProducts, RowScaleIsAppliedAsByTheCaller) {
  const Rows rows = RandomRows();
  const std::vector<float> w = Random(kDim * kOut, 8), grad = Random(kRows * kOut, 9);
  std::vector<float> scale = Random(kRows, 10);
  for (float& x : scale) x = std::abs(x) + 0.5f;
  MatrixSpan<const float> weight(w.data(), kDim, kOut);
  for (const bool sparse : {false, true}) {
    SCOPED_TRACE(sparse ? "sparse" : "dense");
    InputGroup plain = sparse ? rows.Sparse() : rows.Dense();
    InputGroup scaled = plain;
    scaled.row_scale = scale;
    std::vector<float> expected(kRows * kOut), out1(kRows * kOut), out3(kRows * kOut);
    InputTimes(plain, weight, {expected.data(), kRows, kOut}, 1);
    for (uint64_t i = 0; i < kRows; ++i) {
      for (uint64_t j = 0; j < kOut; ++j) expected[i * kOut + j] *= scale[i];
    }
    InputTimes(scaled, weight, {out1.data(), kRows, kOut}, 1);
    InputTimes(scaled, weight, {out3.data(), kRows, kOut}, 3);
    EXPECT_EQ(out1, expected);
    EXPECT_EQ(out3, expected);
    // Rows [700, 1500) alone. A sparse part sums each row as the whole does; a dense part is a
    // BLAS call of its own, whose kernels may sum a row in another order than within the whole
    // (OpenBLAS's Zen kernels do, by an ulp), so it is held to scaling outside its own product.
    const InputGroup part = scaled.Rows(700, 1500);
    EXPECT_EQ(part.first, 700u);
    std::vector<float> part_out(800 * kOut);
    InputTimes(part, weight, {part_out.data(), 800, kOut}, 2);
    std::vector<float> part_expected(expected.begin() + 700 * kOut, expected.begin() + 1500 * kOut);
    if (!sparse) {
      InputTimes(plain.Rows(700, 1500), weight, {part_expected.data(), 800, kOut}, 1);
      for (uint64_t i = 0; i < 800; ++i) {
        for (uint64_t j = 0; j < kOut; ++j) part_expected[i * kOut + j] *= scale[700 + i];
      }
    }
    EXPECT_EQ(part_out, part_expected);

    std::vector<float> d_scaled = grad, want_grad(kDim * kOut);
    for (uint64_t i = 0; i < kRows; ++i) {
      for (uint64_t j = 0; j < kOut; ++j) d_scaled[i * kOut + j] *= scale[i];
    }
    std::vector<float> d_outside = d_scaled;
    InputTransposedTimes(plain, {d_outside.data(), kRows, kOut}, {want_grad.data(), kDim, kOut},
                         false, 1);
    for (const unsigned threads : {1u, 3u, 16u}) {
      SCOPED_TRACE(threads);
      std::vector<float> d = grad, got(kDim * kOut);
      InputTransposedTimes(scaled, {d.data(), kRows, kOut}, {got.data(), kDim, kOut}, false,
                           threads);
      EXPECT_EQ(got, want_grad);
      // GEMM takes D grad, scaled in place; the sparse sums scale as they go.
      EXPECT_EQ(d, sparse ? grad : d_scaled);
    }
  }
}

// dW of three cache lines' width, on enough threads that ForScatterTiles cuts its rows as well
// as its columns (8 threads: 4 row ranges × 2 column ranges; 16: 8 × 2), scaled and accumulated:
// the one-thread sums, bit for bit.
TEST(InputProducts, TransposedSumsAreTheSameInAnyTiles) {
  constexpr size_t kWide = 40;
  const Rows rows = RandomRows();
  std::vector<float> scale = Random(kRows, 12);
  for (float& x : scale) x = std::abs(x) + 0.5f;
  InputGroup group = rows.Sparse();
  group.row_scale = scale;
  const std::vector<float> grad = Random(kRows * kWide, 11), start = Random(kDim * kWide, 13);
  auto weight_grad = [&](unsigned threads, bool accumulate) {
    std::vector<float> d = grad, out = start;
    InputTransposedTimes(group, {d.data(), kRows, kWide}, {out.data(), kDim, kWide}, accumulate,
                         threads);
    return out;
  };
  for (const bool accumulate : {false, true}) {
    const std::vector<float> one = weight_grad(1, accumulate);
    for (const unsigned threads : {2u, 3u, 5u, 8u, 16u}) {
      EXPECT_EQ(weight_grad(threads, accumulate), one) << threads << " threads, " << accumulate;
    }
  }
}

// 1 / each row's L1 norm, summed in column order (1 for a row of zeros), the same on sparse
// and dense rows and on any threads.
TEST(InputProducts, InverseRowNormsSumEachRowInOrder) {
  Rows rows = RandomRows();
  std::fill_n(rows.dense.begin() + 7 * kDim, kDim, 0.0f);  // row 7 of the dense copy: zeros
  std::vector<float> sparse1(kRows), sparse3(kRows), dense1(kRows), dense3(kRows);
  InverseRowNorms(rows.Sparse(), sparse1, 1);
  InverseRowNorms(rows.Sparse(), sparse3, 3);
  InverseRowNorms(rows.Dense(), dense1, 1);
  InverseRowNorms(rows.Dense(), dense3, 3);
  EXPECT_EQ(sparse1, sparse3);
  EXPECT_EQ(dense1, dense3);
  for (uint64_t i = 0; i < kRows; ++i) {
    double l1 = 0;
    for (uint64_t k = rows.indptr[i]; k < rows.indptr[i + 1]; ++k) l1 += std::abs(rows.values[k]);
    ASSERT_EQ(sparse1[i], l1 > 0 ? static_cast<float>(1 / l1) : 1.0f) << i;
    if (i != 7) {
      ASSERT_EQ(dense1[i], sparse1[i]) << i;
    }
  }
  EXPECT_EQ(dense1[7], 1.0f);
}

// A CSR row's dropout keeps exactly the values the dense row's keeps.
TEST(InputProducts, SparseDropoutKeepsTheDenseMask) {
  Rows rows = RandomRows();
  DropoutNonzeros<float>({rows.dense.data(), kRows, kDim}, 0.5, 11, 2);
  DropoutNonzerosCsr<float>(rows.indptr, rows.values, 0.5, 11, 1);
  for (uint64_t i = 0; i < kRows; ++i) {
    for (uint64_t k = rows.indptr[i]; k < rows.indptr[i + 1]; ++k) {
      ASSERT_EQ(rows.values[k], rows.dense[i * kDim + rows.columns[k]]) << i;
    }
  }
}

}  // namespace
}  // namespace strata
