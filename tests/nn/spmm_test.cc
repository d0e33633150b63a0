#include "nn/spmm.h"

#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::MaxRelativeError;
using testing::RandomBlock;
using testing::RandomMatrix;

// Naive references in double, edge by edge.
MatrixD NaiveSpmm(const Block& b, Reduce reduce, const Matrix& in) {
  MatrixD out(b.num_dst(), in.cols());
  for (uint32_t d = 0; d < b.num_dst(); ++d) {
    uint32_t deg = b.indptr[d + 1] - b.indptr[d];
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
      for (size_t j = 0; j < in.cols(); ++j) {
        out(d, j) += in(b.indices[e], j) / (reduce == Reduce::kMean ? deg : 1.0);
      }
    }
  }
  return out;
}

MatrixD NaiveSpmmTransposed(const Block& b, Reduce reduce, const Matrix& grad_out) {
  MatrixD grad_in(b.num_src(), grad_out.cols());
  for (uint32_t d = 0; d < b.num_dst(); ++d) {
    uint32_t deg = b.indptr[d + 1] - b.indptr[d];
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
      for (size_t j = 0; j < grad_out.cols(); ++j) {
        grad_in(b.indices[e], j) += grad_out(d, j) / (reduce == Reduce::kMean ? deg : 1.0);
      }
    }
  }
  return grad_in;
}

TEST(SpMM, SumAndMeanMatchNaive) {
  Block b = RandomBlock(40, 90, 12, 7);
  BlockCsr g = CsrOf(b);
  Matrix in = RandomMatrix<float>(90, 37, 1);  // 37: vector blocks plus a scalar tail
  for (Reduce reduce : {Reduce::kSum, Reduce::kMean}) {
    Matrix out(40, 37);
    out.Fill(99);  // every row must be written, the empty destination included
    Spmm<float>(g, reduce, in.span(), out.span(), 2);
    MatrixD want = NaiveSpmm(b, reduce, in);
    EXPECT_LT(MaxRelativeError(out.span(), want.span(), 1.0), 1e-5);
    for (size_t j = 0; j < 37; ++j) EXPECT_EQ(out(1, j), 0.0f);  // destination 1 has no edges
  }
}

TEST(SpMM, TransposeMatchesNaiveAndAccumulates) {
  Block b = RandomBlock(40, 90, 12, 8);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  Matrix grad_out = RandomMatrix<float>(40, 19, 2);
  for (Reduce reduce : {Reduce::kSum, Reduce::kMean}) {
    Matrix grad_in(90, 19);
    grad_in.Fill(5);
    SpmmTransposed<float>(g, csc, reduce, grad_out.span(), grad_in.span(), false, 2);
    MatrixD want = NaiveSpmmTransposed(b, reduce, grad_out);
    EXPECT_LT(MaxRelativeError(grad_in.span(), want.span(), 1.0), 1e-5);
    SpmmTransposed<float>(g, csc, reduce, grad_out.span(), grad_in.span(), true, 2);
    for (size_t i = 0; i < want.rows(); ++i) {
      for (size_t j = 0; j < want.cols(); ++j) want(i, j) *= 2;
    }
    EXPECT_LT(MaxRelativeError(grad_in.span(), want.span(), 1.0), 1e-5);
  }
}

TEST(SpMM, TransposeIsTheAdjoint) {
  // <Spmm(x), y> == <x, SpmmTransposed(y)> for the mean aggregation, in double.
  Block b = RandomBlock(30, 70, 9, 9);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  MatrixD x = RandomMatrix<double>(70, 5, 1);
  MatrixD y = RandomMatrix<double>(30, 5, 2);
  MatrixD ax(30, 5), aty(70, 5);
  Spmm<double>(g, Reduce::kMean, x.span(), ax.span());
  SpmmTransposed<double>(g, csc, Reduce::kMean, y.span(), aty.span(), false);
  EXPECT_NEAR(testing::WeightedSum(ax.span(), y.span()), testing::WeightedSum(x.span(), aty.span()),
              1e-12);
}

TEST(SpMM, WeightedMultiHeadMatchesNaive) {
  Block b = RandomBlock(25, 60, 8, 10);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  const size_t heads = 3, f = 5;
  Matrix w = RandomMatrix<float>(g.num_edges(), heads, 1);
  Matrix in = RandomMatrix<float>(60, heads * f, 2);
  Matrix out(25, heads * f);
  SpmmWeighted<float>(g, w.span(), in.span(), out.span(), 2);
  Matrix grad_out = RandomMatrix<float>(25, heads * f, 3);
  Matrix grad_in(60, heads * f);
  SpmmWeightedTransposed<float>(csc, w.span(), grad_out.span(), grad_in.span(), false, 2);
  MatrixD want(25, heads * f), want_t(60, heads * f);
  for (uint32_t d = 0; d < 25; ++d) {
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
      uint32_t s = b.indices[e];
      for (size_t h = 0; h < heads; ++h) {
        for (size_t j = 0; j < f; ++j) {
          want(d, h * f + j) += double(w(e, h)) * in(s, h * f + j);
          want_t(s, h * f + j) += double(w(e, h)) * grad_out(d, h * f + j);
        }
      }
    }
  }
  EXPECT_LT(MaxRelativeError(out.span(), want.span(), 1.0), 1e-5);
  EXPECT_LT(MaxRelativeError(grad_in.span(), want_t.span(), 1.0), 1e-5);
}

TEST(SpMM, GcnNormalisationMatchesNaive) {
  Block b = RandomBlock(30, 80, 10, 11);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  std::vector<float> norm(80);
  Rng rng(3);
  for (float& v : norm) v = static_cast<float>(1.0 / std::sqrt(1.0 + rng.Below(20)));
  Matrix in = RandomMatrix<float>(80, 21, 1);
  Matrix out(30, 21);
  SpmmGcn<float>(g, norm, in.span(), out.span(), 2);
  Matrix grad_out = RandomMatrix<float>(30, 21, 2);
  Matrix grad_in(80, 21);
  SpmmGcnTransposed<float>(csc, norm, grad_out.span(), grad_in.span(), false, 2);
  MatrixD want(30, 21), want_t(80, 21);
  for (uint32_t d = 0; d < 30; ++d) {
    // The self loop, then the sampled edges.
    std::vector<uint32_t> sources = {d};
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) sources.push_back(b.indices[e]);
    for (uint32_t s : sources) {
      double c = double(norm[s]) * norm[d];
      for (size_t j = 0; j < 21; ++j) {
        want(d, j) += c * in(s, j);
        want_t(s, j) += c * grad_out(d, j);
      }
    }
  }
  EXPECT_LT(MaxRelativeError(out.span(), want.span(), 1.0), 1e-5);
  EXPECT_LT(MaxRelativeError(grad_in.span(), want_t.span(), 1.0), 1e-5);
}

TEST(SpMM, BitIdenticalForAnyThreadCount) {
  Block b = RandomBlock(3000, 9000, 15, 12);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  Matrix in = RandomMatrix<float>(9000, 64, 1);
  Matrix grad_out = RandomMatrix<float>(3000, 64, 2);
  Matrix out1(3000, 64), out3(3000, 64), gi1(9000, 64), gi3(9000, 64);
  Spmm<float>(g, Reduce::kMean, in.span(), out1.span(), 1);
  Spmm<float>(g, Reduce::kMean, in.span(), out3.span(), 3);
  SpmmTransposed<float>(g, csc, Reduce::kMean, grad_out.span(), gi1.span(), false, 1);
  SpmmTransposed<float>(g, csc, Reduce::kMean, grad_out.span(), gi3.span(), false, 3);
  EXPECT_TRUE(BitIdentical<float>(out1.span(), out3.span()));
  EXPECT_TRUE(BitIdentical<float>(gi1.span(), gi3.span()));
}

TEST(SpMM, RejectsWrongShapesAndMalformedBlocks) {
  Block b = RandomBlock(5, 9, 3, 13);
  BlockCsr g = CsrOf(b);
  Matrix in(8, 4), out(5, 4);
  EXPECT_THROW(Spmm<float>(g, Reduce::kSum, in.span(), out.span()), Error);
  b.indices.push_back(1);  // indptr no longer ends at the edge count
  EXPECT_THROW(CsrOf(b), Error);
  b.indices.pop_back();
  b.indices[0] = 9;  // out of range
  EXPECT_THROW(CheckCsr(CsrOf(b)), Error);
}

TEST(SpMM, CscGroupsEdgesBySourceInEdgeOrder) {
  Block b = RandomBlock(20, 30, 6, 14);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  ASSERT_EQ(csc.indptr.size(), 31u);
  ASSERT_EQ(csc.edge.size(), g.num_edges());
  for (uint32_t s = 0; s < 30; ++s) {
    for (uint32_t j = csc.indptr[s]; j < csc.indptr[s + 1]; ++j) {
      EXPECT_EQ(b.indices[csc.edge[j]], s);
      EXPECT_GE(csc.edge[j], b.indptr[csc.dst[j]]);
      EXPECT_LT(csc.edge[j], b.indptr[csc.dst[j] + 1]);
      if (j > csc.indptr[s]) {
        EXPECT_LT(csc.edge[j - 1], csc.edge[j]);
      }
    }
  }
}

}  // namespace
}  // namespace strata
