#include "nn/loss.h"

#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::RandomMatrix;

TEST(NnLoss, CrossEntropyMatchesHandComputedValue) {
  Matrix logits(2, 3);
  float values[] = {1, 2, 3, 0, 0, 0};
  std::copy(values, values + 6, logits.data());
  std::vector<int32_t> labels = {2, 0};
  Matrix grad(2, 3);
  LossResult r = SoftmaxCrossEntropy<float>(logits.span(), labels, grad.span());
  double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double want = ((lse0 - 3) + std::log(3.0)) / 2;
  EXPECT_NEAR(r.loss, want, 1e-6);
  EXPECT_EQ(r.labelled, 2u);
  EXPECT_NEAR(grad(0, 2), (std::exp(3 - lse0) - 1) / 2, 1e-6);
  EXPECT_NEAR(grad(1, 1), (1.0 / 3) / 2, 1e-6);
}

TEST(NnLoss, GradientMatchesFiniteDifferencesAndIgnoresUnlabelled) {
  MatrixD logits = RandomMatrix<double>(6, 4, 1, 3.0);
  std::vector<int32_t> labels = {0, -1, 3, 2, -1, 1};
  MatrixD grad(6, 4), scratch(6, 4);
  SoftmaxCrossEntropy<double>(logits.span(), labels, grad.span());
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_EQ(grad(1, j), 0.0);
    EXPECT_EQ(grad(4, j), 0.0);
  }
  auto loss = [&] {
    return SoftmaxCrossEntropy<double>(logits.span(), labels, scratch.span()).loss;
  };
  // Rows without labels have zero gradient; check the labelled rows' values.
  MatrixD numeric = testing::NumericGradient(logits.span(), loss);
  EXPECT_LT(testing::MaxRelativeError(grad.span(), numeric.span(), 1e-6), 1e-4);
}

TEST(NnLoss, StableForLargeLogits) {
  Matrix logits(1, 2);
  logits(0, 0) = 1e4f;
  logits(0, 1) = -1e4f;
  std::vector<int32_t> labels = {1};
  Matrix grad(1, 2);
  LossResult r = SoftmaxCrossEntropy<float>(logits.span(), labels, grad.span());
  EXPECT_NEAR(r.loss, 2e4, 1);
  EXPECT_NEAR(grad(0, 0), 1.0f, 1e-6);
  Matrix log_probs(1, 2);
  LogSoftmax<float>(logits.span(), log_probs.span());
  EXPECT_EQ(log_probs(0, 0), 0.0f);
}

TEST(NnLoss, LogSoftmaxMatchesNaive) {
  Matrix logits = RandomMatrix<float>(5, 7, 3, 4.0);
  Matrix out(5, 7);
  LogSoftmax<float>(logits.span(), out.span());
  for (size_t i = 0; i < 5; ++i) {
    double sum = 0;
    for (size_t j = 0; j < 7; ++j) sum += std::exp(double(logits(i, j)));
    for (size_t j = 0; j < 7; ++j) EXPECT_NEAR(out(i, j), logits(i, j) - std::log(sum), 1e-5);
  }
}

TEST(NnLoss, NoLabelsGiveZeroLossAndBadLabelsThrow) {
  Matrix logits = RandomMatrix<float>(3, 4, 2);
  Matrix grad(3, 4);
  std::vector<int32_t> none = {-1, -1, -1};
  LossResult r = SoftmaxCrossEntropy<float>(logits.span(), none, grad.span());
  EXPECT_EQ(r.loss, 0.0);
  EXPECT_EQ(r.labelled, 0u);
  std::vector<int32_t> bad = {0, 4, 1};
  EXPECT_THROW(SoftmaxCrossEntropy<float>(logits.span(), bad, grad.span()), Error);
}

TEST(NnLoss, AccuracyCountsArgmaxOfLabelledRows) {
  Matrix logits(4, 3);
  float values[] = {0, 5, 1, 9, 0, 0, 0, 0, 1, 2, 2, 0};
  std::copy(values, values + 12, logits.data());
  std::vector<int32_t> labels = {1, 1, -1, 0};  // row 3 ties: the first maximum (0) wins
  AccuracyCount count = CountCorrect(logits.span(), labels);
  EXPECT_EQ(count.labelled, 3u);
  EXPECT_EQ(count.correct, 2u);
  EXPECT_NEAR(count.accuracy(), 2.0 / 3, 1e-12);
}

}  // namespace
}  // namespace strata
