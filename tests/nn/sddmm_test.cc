#include "nn/sddmm.h"

#include <gtest/gtest.h>

#include "nn/edge_softmax.h"
#include "nn_test_util.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::MaxRelativeError;
using testing::RandomBlock;
using testing::RandomMatrix;

TEST(NnSddmm, AddAndDotMatchNaive) {
  Block b = RandomBlock(20, 50, 7, 1);
  BlockCsr g = CsrOf(b);
  const size_t heads = 3, f = 4;
  Matrix el = RandomMatrix<float>(50, heads, 1);
  Matrix er = RandomMatrix<float>(20, heads, 2);
  Matrix add(g.num_edges(), heads);
  SddmmAdd<float>(g, el.span(), er.span(), add.span(), 2);
  Matrix x = RandomMatrix<float>(50, heads * f, 3);
  Matrix y = RandomMatrix<float>(20, heads * f, 4);
  Matrix dot(g.num_edges(), heads);
  SddmmDot<float>(g, y.span(), x.span(), dot.span(), 2);
  for (uint32_t d = 0; d < 20; ++d) {
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
      uint32_t s = b.indices[e];
      for (size_t h = 0; h < heads; ++h) {
        EXPECT_FLOAT_EQ(add(e, h), el(s, h) + er(d, h));
        double want = 0;
        for (size_t j = 0; j < f; ++j) want += double(y(d, h * f + j)) * x(s, h * f + j);
        EXPECT_NEAR(dot(e, h), want, 1e-5);
      }
    }
  }
}

TEST(NnSddmm, EdgeSumsMatchNaive) {
  Block b = RandomBlock(20, 50, 7, 2);
  BlockCsr g = CsrOf(b);
  BlockCsc csc;
  csc.Build(g);
  Matrix values = RandomMatrix<float>(g.num_edges(), 2, 1);
  Matrix by_dst(20, 2), by_src(50, 2);
  SumEdgesByDestination<float>(g, values.span(), by_dst.span(), 2);
  SumEdgesBySource<float>(csc, values.span(), by_src.span(), 2);
  MatrixD want_dst(20, 2), want_src(50, 2);
  for (uint32_t d = 0; d < 20; ++d) {
    for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
      for (size_t h = 0; h < 2; ++h) {
        want_dst(d, h) += values(e, h);
        want_src(b.indices[e], h) += values(e, h);
      }
    }
  }
  EXPECT_LT(MaxRelativeError(by_dst.span(), want_dst.span(), 1.0), 1e-5);
  EXPECT_LT(MaxRelativeError(by_src.span(), want_src.span(), 1.0), 1e-5);
}

TEST(NnSddmm, HeadDotsMatchNaive) {
  Matrix rows = RandomMatrix<float>(9, 6, 1);
  Matrix vectors = RandomMatrix<float>(2, 3, 2);
  Matrix out(9, 2);
  HeadDots<float>(rows.span(), vectors.span(), out.span());
  for (size_t v = 0; v < 9; ++v) {
    for (size_t h = 0; h < 2; ++h) {
      double want = 0;
      for (size_t j = 0; j < 3; ++j) want += double(rows(v, h * 3 + j)) * vectors(h, j);
      EXPECT_NEAR(out(v, h), want, 1e-6);
    }
  }
}

TEST(NnEdgeSoftmax, NormalisesEachDestinationAndIsStable) {
  Block b = RandomBlock(30, 60, 9, 3);
  BlockCsr g = CsrOf(b);
  // Huge logits would overflow a naive exp.
  Matrix logits = RandomMatrix<float>(g.num_edges(), 2, 1, 500.0);
  Matrix probs(g.num_edges(), 2);
  EdgeSoftmax<float>(g, logits.span(), probs.span(), 2);
  for (uint32_t d = 0; d < 30; ++d) {
    for (size_t h = 0; h < 2; ++h) {
      if (b.indptr[d] == b.indptr[d + 1]) continue;
      double max = -1e30, sum = 0, sum_probs = 0;
      for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e)
        max = std::max(max, double(logits(e, h)));
      for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) sum += std::exp(logits(e, h) - max);
      for (uint32_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
        EXPECT_TRUE(std::isfinite(probs(e, h)));
        EXPECT_NEAR(probs(e, h), std::exp(logits(e, h) - max) / sum, 1e-6);
        sum_probs += probs(e, h);
      }
      EXPECT_NEAR(sum_probs, 1.0, 1e-5);
    }
  }
}

TEST(NnEdgeSoftmax, BackwardMatchesFiniteDifferences) {
  Block b = RandomBlock(6, 12, 5, 4);
  BlockCsr g = CsrOf(b);
  MatrixD logits = RandomMatrix<double>(g.num_edges(), 2, 1, 3.0);
  MatrixD weights = RandomMatrix<double>(g.num_edges(), 2, 2);
  MatrixD probs(g.num_edges(), 2);
  auto loss = [&] {
    EdgeSoftmax<double>(g, logits.span(), probs.span());
    return testing::WeightedSum(probs.span(), weights.span());
  };
  loss();
  MatrixD grad(g.num_edges(), 2);
  EdgeSoftmaxBackward<double>(g, probs.span(), weights.span(), grad.span());
  testing::ExpectGradientMatches("edge softmax", grad.span(), logits.span(), loss);
}

TEST(NnEdgeSoftmax, BitIdenticalForAnyThreadCount) {
  Block b = RandomBlock(4000, 8000, 12, 5);
  BlockCsr g = CsrOf(b);
  Matrix logits = RandomMatrix<float>(g.num_edges(), 4, 1, 5.0);
  Matrix p1(g.num_edges(), 4), p2(g.num_edges(), 4);
  EdgeSoftmax<float>(g, logits.span(), p1.span(), 1);
  EdgeSoftmax<float>(g, logits.span(), p2.span(), 2);
  EXPECT_TRUE(BitIdentical<float>(p1.span(), p2.span()));
}

}  // namespace
}  // namespace strata
