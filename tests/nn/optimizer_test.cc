#include <gtest/gtest.h>

#include <cmath>

#include "nn/adam.h"
#include "nn/sgd.h"
#include "strata/error.h"

namespace strata {
namespace {

struct OneParameter {
  Matrix value{1, 2};
  Matrix grad{1, 2};
  std::vector<Parameter> list() { return {{"p", value.span(), grad.span()}}; }
};

TEST(Adam, StepsMatchHandComputedValues) {
  OneParameter p;
  p.value(0, 0) = 1.0f;
  p.value(0, 1) = -2.0f;
  Adam adam(p.list(), {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.5});
  // Step 1: g = grad + 0.5 * value.
  p.grad(0, 0) = 0.2f;
  p.grad(0, 1) = -0.4f;
  adam.Step();
  // g = (0.7, -1.4); m = 0.1 g; v = 0.001 g^2; mhat = g, vhat = g^2: the step is lr * sign(g).
  EXPECT_NEAR(p.value(0, 0), 1.0 - 0.1 * 0.7 / (0.7 + 1e-8), 1e-6);
  EXPECT_NEAR(p.value(0, 1), -2.0 + 0.1 * 1.4 / (1.4 + 1e-8), 1e-6);
  // Step 2 by hand in double.
  double x = p.value(0, 0);
  double g1 = 0.7, g2 = 0.3 + 0.5 * x;
  p.grad(0, 0) = 0.3f;
  p.grad(0, 1) = 0.0f;
  adam.Step();
  double m = 0.9 * (0.1 * g1) + 0.1 * g2;
  double v = 0.999 * (0.001 * g1 * g1) + 0.001 * g2 * g2;
  double mhat = m / (1 - 0.81), vhat = v / (1 - 0.999 * 0.999);
  EXPECT_NEAR(p.value(0, 0), x - 0.1 * mhat / (std::sqrt(vhat) + 1e-8), 1e-6);
  EXPECT_EQ(adam.steps(), 2u);
  EXPECT_EQ(adam.State().size(), 2u);
  EXPECT_EQ(adam.State()[0].name, "adam.m.p");
}

// The scopes PyTorch recipes build with parameter groups.
TEST(WeightDecayScope, PicksParametersByName) {
  Matrix m(1, 1), g(1, 1);
  std::vector<Parameter> params;
  for (const char* name : {"layers.0.weight", "layers.0.attn_l", "layers.0.bias", "layers.1.weight",
                           "layers.1.bias"}) {
    params.push_back({name, m.span(), g.span()});
  }
  using V = std::vector<bool>;
  EXPECT_EQ(DecayedParameters(params, WeightDecayScope::kAll), V(5, true));
  EXPECT_EQ(DecayedParameters(params, WeightDecayScope::kWeights),
            (V{true, true, false, true, false}));
  EXPECT_EQ(DecayedParameters(params, WeightDecayScope::kFirstLayer),
            (V{true, true, false, false, false}));
  EXPECT_EQ(ParseWeightDecayScope("first-layer"), WeightDecayScope::kFirstLayer);
  EXPECT_THROW(ParseWeightDecayScope("biases"), Error);
}

// A parameter outside the scope steps as if weight decay were 0.
TEST(WeightDecayScope, UndecayedParametersIgnoreWeightDecay) {
  OneParameter decayed, kept, plain;
  for (OneParameter* p : {&decayed, &kept, &plain}) {
    p->value(0, 0) = 1.0f;
    p->grad(0, 0) = 0.1f;
  }
  std::vector<Parameter> both = {{"layers.0.weight", decayed.value.span(), decayed.grad.span()},
                                 {"layers.1.weight", kept.value.span(), kept.grad.span()}};
  auto optimizer = MakeOptimizer({.kind = OptimizerKind::kSgd,
                                  .lr = 0.1,
                                  .weight_decay = 0.5,
                                  .weight_decay_scope = WeightDecayScope::kFirstLayer},
                                 both);
  Sgd reference(plain.list(), {.lr = 0.1, .momentum = 0.9});
  optimizer->Step();
  reference.Step();
  EXPECT_FLOAT_EQ(kept.value(0, 0), plain.value(0, 0));
  EXPECT_LT(decayed.value(0, 0), kept.value(0, 0));
}

TEST(Sgd, StepsMatchHandComputedValues) {
  OneParameter plain;
  plain.value(0, 0) = 1.0f;
  plain.grad(0, 0) = 0.5f;
  Sgd sgd(plain.list(), {.lr = 0.1, .weight_decay = 0.2});
  sgd.Step();
  EXPECT_FLOAT_EQ(plain.value(0, 0), 1.0f - 0.1f * (0.5f + 0.2f));
  EXPECT_TRUE(sgd.State().empty());

  OneParameter p;
  p.value(0, 0) = 1.0f;
  Sgd momentum(p.list(), {.lr = 0.1, .momentum = 0.9});
  p.grad(0, 0) = 1.0f;
  momentum.Step();  // buf = 1
  EXPECT_FLOAT_EQ(p.value(0, 0), 0.9f);
  p.grad(0, 0) = 0.5f;
  momentum.Step();  // buf = 0.9 + 0.5
  EXPECT_FLOAT_EQ(p.value(0, 0), 0.9f - 0.1f * 1.4f);
  EXPECT_EQ(momentum.State().size(), 1u);
}

}  // namespace
}  // namespace strata
