// StaticRowCache: each hot id finds the row written to its slot, other ids find none, and what
// it charges to the budget (charged_bytes()) is released when it goes.
#include "features/static_row_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace strata {
namespace {

TEST(StaticRowCache, FindsEachHotRowAndNothingElse) {
  MemoryBudget budget(uint64_t{1} << 20);
  {
    const std::vector<uint64_t> ids = {7, 3, uint64_t{1} << 40, 0};
    StaticRowCache cache(ids, 16, budget);
    EXPECT_EQ(cache.ids(), ids);
    EXPECT_EQ(budget.used(), cache.charged_bytes());
    EXPECT_GE(cache.charged_bytes(), ids.size() * (16 + sizeof(uint64_t)));
    for (size_t slot = 0; slot < ids.size(); ++slot) {
      std::memset(cache.SlotData(slot), static_cast<int>(0x10 + slot), 16);
    }
    for (size_t slot = 0; slot < ids.size(); ++slot) {
      const std::byte* row = cache.Lookup(ids[slot]);
      ASSERT_NE(row, nullptr) << ids[slot];
      for (int b = 0; b < 16; ++b) EXPECT_EQ(row[b], std::byte(0x10 + slot)) << ids[slot];
    }
    for (uint64_t absent : {uint64_t{1}, uint64_t{8}, (uint64_t{1} << 40) + 1}) {
      EXPECT_EQ(cache.Lookup(absent), nullptr) << absent;
    }
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(StaticRowCache, AnEmptyTierFindsNothing) {
  MemoryBudget budget(uint64_t{1} << 20);
  StaticRowCache cache({}, 64, budget);
  EXPECT_EQ(cache.Lookup(0), nullptr);
  EXPECT_EQ(budget.used(), cache.charged_bytes());
}

}  // namespace
}  // namespace strata
