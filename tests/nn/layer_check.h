// Gradient checking for one layer in double precision: the loss is sum(out .* R) for a fixed
// random R, so dL/dout = R; every parameter's and the input's analytic gradient must match
// central finite differences of that loss to a relative error < 1e-4.
#pragma once

#include <gtest/gtest.h>

#include <span>

#include "nn/layer.h"
#include "nn_test_util.h"

namespace strata::testing {

inline void CheckLayerGradients(BasicLayer<double>& layer, const Block& block, MatrixD& features,
                                std::span<const double> gcn_norm = {}, bool training = false,
                                uint64_t seed = 0) {
  LayerInput<double> input;
  input.graph = CsrOf(block);
  input.features = features.span();
  input.gcn_norm = gcn_norm;
  input.training = training;
  input.seed = seed;
  MatrixD out;
  layer.Forward(input, out);
  ASSERT_EQ(out.rows(), block.num_dst());
  ASSERT_EQ(out.cols(), layer.out_dim());
  MatrixD weights = RandomMatrix<double>(out.rows(), out.cols(), 99);
  MatrixD grad_in;
  layer.Backward(weights.span(), &grad_in);
  ASSERT_EQ(grad_in.rows(), block.num_src());
  ASSERT_EQ(grad_in.cols(), layer.in_dim());
  MatrixD scratch;
  auto loss = [&] {
    layer.Forward(input, scratch);
    return WeightedSum(scratch.span(), weights.span());
  };
  for (auto& p : layer.Parameters("")) ExpectGradientMatches(p.name, p.grad, p.value, loss);
  ExpectGradientMatches("input features", grad_in.span(), features.span(), loss);

  // Without an input gradient, the parameter gradients are the same.
  std::vector<MatrixD> before;
  for (auto& p : layer.Parameters("")) {
    before.emplace_back();
    before.back().CopyFrom(p.grad);
  }
  layer.Forward(input, scratch);
  layer.Backward(weights.span(), nullptr);
  size_t i = 0;
  for (auto& p : layer.Parameters("")) {
    EXPECT_TRUE(BitIdentical<double>(p.grad, before[i++].span())) << p.name;
  }
}

}  // namespace strata::testing
