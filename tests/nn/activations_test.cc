#include "nn/activations.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "nn_test_util.h"

namespace strata {
namespace {

using testing::RandomMatrix;

TEST(NnActivations, ReluAndBackward) {
  Matrix x = RandomMatrix<float>(7, 19, 1);
  Matrix y(7, 19);
  Relu<float>(x.span(), y.span());
  Matrix g = RandomMatrix<float>(7, 19, 2);
  Matrix gi(7, 19);
  ReluBackward<float>(y.span(), g.span(), gi.span());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y.data()[i], std::max(0.0f, x.data()[i]));
    EXPECT_EQ(gi.data()[i], x.data()[i] > 0 ? g.data()[i] : 0.0f);
  }
}

TEST(NnActivations, LeakyReluAndBackward) {
  Matrix x = RandomMatrix<float>(5, 9, 3);
  Matrix y(5, 9), gi(5, 9);
  LeakyRelu<float>(x.span(), y.span());
  Matrix g = RandomMatrix<float>(5, 9, 4);
  LeakyReluBackward<float>(x.span(), g.span(), gi.span());
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x.data()[i];
    EXPECT_FLOAT_EQ(y.data()[i], v > 0 ? v : 0.2f * v);
    EXPECT_FLOAT_EQ(gi.data()[i], v > 0 ? g.data()[i] : 0.2f * g.data()[i]);
  }
}

}  // namespace
}  // namespace strata
