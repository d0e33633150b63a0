#include "nn/sage_conv.h"

#include <gtest/gtest.h>

#include "layer_check.h"
#include "nn_test_util.h"

namespace strata {
namespace {

using testing::RandomBlock;
using testing::RandomMatrix;

// Layer widths that make the layer take each order of its neighbour products
// (nn/product_order.h) on the blocks below: wide inputs into few outputs transform first.
struct Widths {
  size_t in, out;
};

class SageConvOrder : public ::testing::TestWithParam<Widths> {};

TEST_P(SageConvOrder, BackwardMatchesFiniteDifferences) {
  const Widths w = GetParam();
  // Destination 1 has no neighbours; destination 0 repeats a source and lists itself.
  Block block = RandomBlock(6, 14, 4, 1);
  MatrixD features = RandomMatrix<double>(14, w.in, 2);
  BasicSageConv<double> layer(w.in, w.out, 3);
  testing::CheckLayerGradients(layer, block, features);
}

TEST_P(SageConvOrder, ForwardMatchesFormula) {
  const size_t in = GetParam().in, width = GetParam().out;
  Block block = RandomBlock(7, 20, 5, 4);
  Matrix features = RandomMatrix<float>(20, in, 5);
  SageConv layer(in, width, 6);
  auto params = layer.Parameters("");
  // Give the bias non-zero values so that it is checked too.
  for (size_t j = 0; j < width; ++j) params[2].value(0, j) = 0.1f * (j + 1);
  LayerInput<float> input{CsrOf(block), features.span(), {}, false, 0};
  Matrix out;
  layer.Forward(input, out);
  for (uint32_t d = 0; d < 7; ++d) {
    uint32_t deg = block.indptr[d + 1] - block.indptr[d];
    std::vector<double> mean(in, 0.0);
    for (uint32_t e = block.indptr[d]; e < block.indptr[d + 1]; ++e) {
      for (size_t j = 0; j < in; ++j) mean[j] += features(block.indices[e], j) / double(deg);
    }
    for (size_t o = 0; o < width; ++o) {
      double want = params[2].value(0, o);
      for (size_t j = 0; j < in; ++j) {
        want += features(d, j) * params[0].value(j, o) + mean[j] * params[1].value(j, o);
      }
      EXPECT_NEAR(out(d, o), want, 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, SageConvOrder, ::testing::Values(Widths{5, 4}, Widths{2, 8}),
                         [](const auto& info) {
                           return info.param.in > info.param.out ? "TransformFirst"
                                                                 : "AggregateFirst";
                         });

TEST(SageConv, SameSeedSameWeightsAndThreadCountDoesNotMatter) {
  Block block = RandomBlock(2000, 6000, 10, 7);
  Matrix features = RandomMatrix<float>(6000, 48, 8);
  Matrix grad = RandomMatrix<float>(2000, 32, 9);
  Matrix out[2], grad_in[2];
  std::vector<Matrix> weight_grads[2];
  for (int run = 0; run < 2; ++run) {
    SageConv layer(48, 32, 10);
    layer.set_threads(run == 0 ? 1 : 2);
    layer.Forward({CsrOf(block), features.span(), {}, true, 0}, out[run]);
    layer.Backward(grad.span(), &grad_in[run]);
    for (auto& p : layer.Parameters("")) {
      weight_grads[run].emplace_back();
      weight_grads[run].back().CopyFrom(p.grad);
    }
  }
  EXPECT_TRUE(testing::BitIdentical<float>(out[0].span(), out[1].span()));
  EXPECT_TRUE(testing::BitIdentical<float>(grad_in[0].span(), grad_in[1].span()));
  for (size_t i = 0; i < weight_grads[0].size(); ++i) {
    EXPECT_TRUE(testing::BitIdentical<float>(weight_grads[0][i].span(), weight_grads[1][i].span()));
  }
}

}  // namespace
}  // namespace strata
