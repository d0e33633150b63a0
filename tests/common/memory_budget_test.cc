#include "strata/memory_budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>

#include "strata/error.h"

namespace strata {
namespace {

TEST(TrackedCharge, FollowsGrowthAndShrinkAndReleasesOnDestruction) {
  MemoryBudget budget(1000);
  {
    TrackedCharge charge(budget, "activations");
    charge.Update(300);
    EXPECT_EQ(budget.used(), 300u);
    charge.Update(700);
    EXPECT_EQ(budget.used(), 700u);
    charge.Update(100);
    EXPECT_EQ(budget.used(), 100u);
    EXPECT_EQ(budget.peak(), 700u);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(TrackedCharge, GrowthPastTheBudgetThrowsAndKeepsTheOldCharge) {
  MemoryBudget budget(1000);
  ChargedArray<char> other(budget, 600, "cache");
  TrackedCharge charge(budget, "model activations");
  charge.Update(300);
  try {
    charge.Update(500);
    FAIL() << "a charge past the budget was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model activations"), std::string::npos) << e.what();
  }
  EXPECT_EQ(charge.bytes(), 300u);
  EXPECT_EQ(budget.used(), 900u);
}

// Resident bytes of this process, from /proc/self/statm.
uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Once a budget exists, a large block freed leaves the process at once, even after a larger
// one was freed (which by default makes glibc keep blocks below it in its heaps).
TEST(MemoryBudget, FreedLargeBlocksLeaveTheProcess) {
#ifdef STRATA_SANITIZED
  GTEST_SKIP() << "the sanitizers' allocator keeps freed blocks in quarantine";
#endif
  MemoryBudget budget(1 << 20);
  constexpr size_t kLarger = 24 << 20, kBlock = 16 << 20;
  auto larger = std::make_unique<char[]>(kLarger);
  std::memset(larger.get(), 1, kLarger);
  larger.reset();
  const uint64_t before = ResidentBytes();
  auto block = std::make_unique<char[]>(kBlock);
  std::memset(block.get(), 1, kBlock);
  EXPECT_GE(ResidentBytes(), before + kBlock / 2);
  block.reset();
  EXPECT_LT(ResidentBytes(), before + (4 << 20));
}

TEST(FormatBytesRoundedUp, NamesAValueNoSmallerThanTheBytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  EXPECT_EQ(FormatBytesRoundedUp(169 * kMiB + kMiB / 3), "170 MiB");  // FormatBytes: 169
  EXPECT_EQ(FormatBytesRoundedUp(170 * kMiB), "170 MiB");
  EXPECT_EQ(FormatBytesRoundedUp(2 * kMiB + 190 * 1024), "2.19 MiB");  // 2.1855…
  EXPECT_EQ(FormatBytesRoundedUp(99 * kMiB + 970 * 1024), "100 MiB");  // carries
  EXPECT_EQ(FormatBytesRoundedUp(1023 * kMiB + kMiB / 2), "1.00 GiB");
  EXPECT_EQ(FormatBytesRoundedUp(1000), "1000 B");
  EXPECT_EQ(FormatBytesRoundedUp(1025), "1.01 KiB");
}

}  // namespace
}  // namespace strata
