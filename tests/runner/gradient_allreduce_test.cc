// GradientAllreduce with a stand-in for a second rank: the gradients written back are the mean
// over both ranks' seeds (each rank's mean weighted by its count), whatever the counts, every
// layer's sum is started once per step as its backward finishes, and a step's count is checked.
#include "runner/gradient_allreduce.h"

#include <gtest/gtest.h>

#include <vector>

#include "strata/error.h"

namespace strata {
namespace {

// Rank 0 of two, where the other rank's buckets hold `other_scale` times this rank's gradients
// with `other_count` seeds: StartSum adds what the other rank would send.
class TwoRanks final : public Collective {
 public:
  TwoRanks(float other_scale, float other_count)
      : other_scale_(other_scale), other_count_(other_count) {}
  uint32_t rank() const override { return 0; }
  uint32_t size() const override { return 2; }
  void StartSum(std::span<float> values) override {
    // The bucket holds count * gradient and the count last; the other rank's has its own.
    const float mine = values.back();
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      values[i] += values[i] / mine * other_scale_ * other_count_;
    }
    values.back() += other_count_;
    ++started_;
  }
  void Progress() override {}
  void WaitAll() override { ++waits_; }
  void Sum(std::span<double>) override {}
  void Broadcast(std::span<std::byte>, uint32_t) override {}
  int started_ = 0;
  int waits_ = 0;

 private:
  float other_scale_;
  float other_count_;
};

TEST(GradientAllreduce, AveragesOverEveryRanksSeeds) {
  // Layer 0: a 2x3 weight (stride 4: its rows are not contiguous) and a bias; layer 1: a 3x1.
  std::vector<float> w0(8), b0(3), w1(3);
  std::vector<std::vector<Parameter>> layers = {{{"w0", {}, MatrixSpan<float>(w0.data(), 2, 3, 4)},
                                                 {"b0", {}, MatrixSpan<float>(b0.data(), 1, 3)}},
                                                {{"w1", {}, MatrixSpan<float>(w1.data(), 3, 1)}}};
  auto fill = [&] {
    for (size_t i = 0; i < w0.size(); ++i) w0[i] = 1.0f + i;
    for (size_t i = 0; i < b0.size(); ++i) b0[i] = -2.0f * i;
    for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.5f * i;
  };
  // This rank: 3 seeds, gradient g; the other: 1 seed, gradient 5g. Mean: (3g + 5g) / 4 = 2g.
  TwoRanks ranks(5.0f, 1.0f);
  MemoryBudget budget(uint64_t{1} << 20);
  GradientAllreduce allreduce(ranks, layers, budget);
  EXPECT_EQ(budget.used(), allreduce.bytes_per_step());
  EXPECT_EQ(allreduce.bytes_per_step(), (6 + 3 + 1 + 3 + 1) * sizeof(float));
  fill();
  allreduce.BeginStep(3);
  allreduce.LayerDone(1);
  allreduce.LayerDone(0);
  EXPECT_EQ(allreduce.Finish(), 4u);
  EXPECT_EQ(ranks.started_, 2);
  EXPECT_EQ(ranks.waits_, 1);
  for (size_t r = 0; r < 2; ++r) {
    for (size_t c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(w0[r * 4 + c], 2.0f * (1.0f + r * 4 + c));
  }
  EXPECT_FLOAT_EQ(w0[3], 4.0f);  // the stride's padding is not a gradient: untouched
  for (size_t i = 0; i < b0.size(); ++i) EXPECT_FLOAT_EQ(b0[i], 2.0f * -2.0f * i);
  for (size_t i = 0; i < w1.size(); ++i) EXPECT_FLOAT_EQ(w1[i], 2.0f * 0.5f * i);
}

TEST(GradientAllreduce, RefusesAStepItsCountCannotCarry) {
  std::vector<float> w(1);
  TwoRanks ranks(1.0f, 1.0f);
  MemoryBudget budget(uint64_t{1} << 20);
  GradientAllreduce allreduce(ranks, {{{"w", {}, MatrixSpan<float>(w.data(), 1, 1)}}}, budget);
  EXPECT_THROW(allreduce.BeginStep(uint64_t{1} << 24), Error);
}

}  // namespace
}  // namespace strata
