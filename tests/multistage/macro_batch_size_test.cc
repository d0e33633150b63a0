// ChooseMacroBatch: the largest candidate whose two buffers fit half of what the budget leaves;
// a requested size kept when it fits, clamped to the last candidate; and one input error, naming
// the need, the room and what would fit, when nothing or the request does not.
#include "multistage/macro_batch_size.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {
namespace {

const MacroBatchUnit kUnit = {"--multistage partition", "partition", "partition into more parts"};

// Two buffers of n units of 1 MiB each.
uint64_t TwoBuffers(uint32_t n) { return uint64_t{2} * n << 20; }

std::string InputErrorOf(uint32_t requested, const std::vector<uint32_t>& candidates,
                         const MemoryBudget& budget) {
  try {
    ChooseMacroBatch(requested, candidates, TwoBuffers, budget, kUnit);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(ChooseMacroBatch, TakesTheLargestCandidateThatFitsHalfOfWhatIsLeft) {
  MemoryBudget budget(uint64_t{64} << 20);
  const std::vector<uint32_t> every = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  // Room 32 MiB: 16 units of 2 MiB fit, 17 do not.
  EXPECT_EQ(ChooseMacroBatch(0, every, TwoBuffers, budget, kUnit), 16u);
  budget.Charge(uint64_t{24} << 20, "the model");  // room 20 MiB
  EXPECT_EQ(ChooseMacroBatch(0, every, TwoBuffers, budget, kUnit), 10u);
  const std::vector<uint32_t> powers = {1, 2, 4, 8, 16};
  EXPECT_EQ(ChooseMacroBatch(0, powers, TwoBuffers, budget, kUnit), 8u);
  // A candidate list that ends below what fits: its last.
  EXPECT_EQ(ChooseMacroBatch(0, std::vector<uint32_t>{1, 2, 3}, TwoBuffers, budget, kUnit), 3u);
}

TEST(ChooseMacroBatch, KeepsARequestThatFitsClampedToTheLastCandidate) {
  MemoryBudget budget(uint64_t{64} << 20);
  const std::vector<uint32_t> candidates = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(ChooseMacroBatch(5, candidates, TwoBuffers, budget, kUnit), 5u);
  EXPECT_EQ(ChooseMacroBatch(1000, candidates, TwoBuffers, budget, kUnit), 8u);
}

TEST(ChooseMacroBatch, RefusesWithTheNeedTheRoomAndWhatFits) {
  MemoryBudget budget(uint64_t{64} << 20);
  const std::vector<uint32_t> candidates = {1, 2, 4, 8, 16, 32};
  EXPECT_EQ(InputErrorOf(32, candidates, budget),
            "--macro-batch 32 needs 64.0 MiB for its two buffers, half of what the budget leaves "
            "is 32.0 MiB: --macro-batch 16 fits");

  budget.Charge(uint64_t{63} << 20, "the model");  // room 512 KiB: not even one unit
  EXPECT_EQ(InputErrorOf(0, candidates, budget),
            "the memory budget is too small for --multistage partition: two buffers of one "
            "partition need 2.00 MiB, half of what the budget leaves is 512 KiB; raise "
            "--memory-budget to 67.0 MiB or partition into more parts");
  // Twice the buffers beside what is in use: the buffers take half of what is left.
  const std::string too_big = InputErrorOf(4, candidates, budget);
  EXPECT_NE(too_big.find("raise --memory-budget to 79.0 MiB"), std::string::npos) << too_big;
}

}  // namespace
}  // namespace strata
