// Linear, the MLP's layer: gradients against finite differences (sources that are not
// destinations get a zero input gradient), outputs W^T h_d + b whatever the block's edges, and
// layer-wise inference's halves (TransformSelf, then Aggregate) equal to Forward.
#include "nn/linear.h"

#include <gtest/gtest.h>

#include "layer_check.h"
#include "nn_test_util.h"

namespace strata {
namespace {

using testing::RandomBlock;
using testing::RandomMatrix;

TEST(Linear, BackwardMatchesFiniteDifferences) {
  Block block = RandomBlock(6, 14, 4, 1);
  MatrixD features = RandomMatrix<double>(14, 5, 2);
  BasicLinear<double> layer(5, 3, 3);
  testing::CheckLayerGradients(layer, block, features);
  MatrixD out, grad_in;
  layer.Forward({CsrOf(block), features.span(), {}, true, 0}, out);
  const MatrixD grad_out = RandomMatrix<double>(6, 3, 4);
  layer.Backward(grad_out.span(), &grad_in);
  for (size_t i = 6; i < 14; ++i) {
    for (size_t j = 0; j < 5; ++j) EXPECT_EQ(grad_in(i, j), 0.0) << i << ", " << j;
  }
}

TEST(Linear, ReadsOnlyTheDestinationsOwnRows) {
  const Block sparse = RandomBlock(7, 20, 1, 4);
  const Block dense = RandomBlock(7, 20, 6, 5);
  const MatrixD features = RandomMatrix<double>(20, 4, 6);
  BasicLinear<double> layer(4, 3, 7);
  auto params = layer.Parameters("");
  ASSERT_EQ(params.size(), 2u);
  for (size_t j = 0; j < 3; ++j) params[1].value(0, j) = 0.25 * (j + 1);
  MatrixD a, b;
  layer.Forward({CsrOf(sparse), features.span(), {}, false, 0}, a);
  layer.Forward({CsrOf(dense), features.span(), {}, false, 0}, b);
  for (size_t d = 0; d < 7; ++d) {
    for (size_t j = 0; j < 3; ++j) {
      double want = params[1].value(0, j);
      for (size_t k = 0; k < 4; ++k) want += features(d, k) * params[0].value(k, j);
      EXPECT_NEAR(a(d, j), want, 1e-12);
      EXPECT_EQ(a(d, j), b(d, j));
    }
  }
}

TEST(Linear, LayerwiseHalvesEqualForward) {
  const Block block = RandomBlock(5, 12, 3, 8);
  const MatrixD features = RandomMatrix<double>(12, 6, 9);
  BasicLinear<double> layer(6, 4, 10);
  auto params = layer.Parameters("");
  for (size_t j = 0; j < 4; ++j) params[1].value(0, j) = -0.5 * j;
  MatrixD forward;
  layer.Forward({CsrOf(block), features.span(), {}, false, 0}, forward);
  ASSERT_EQ(layer.gathered_width(), 0u);
  MatrixD self(5, layer.self_width()), gathered(12, 0), out(5, 4);
  layer.TransformSelf(features.span().RowRange(0, 5), self.span());
  layer.Aggregate(CsrOf(block), gathered.span(), self.span(), {}, out.span());
  for (size_t i = 0; i < 5; ++i) {
    for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(out(i, j), forward(i, j), 1e-12);
  }
}

}  // namespace
}  // namespace strata
