#include "features/windowed_cache.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <vector>

#include "common/random.h"
#include "strata/error.h"

namespace strata {
namespace {

std::vector<std::byte> RowOf(uint64_t id, uint64_t row_bytes) {
  std::vector<std::byte> row(row_bytes);
  for (uint64_t i = 0; i < row_bytes; ++i) row[i] = static_cast<std::byte>((id * 31 + i) & 0xFF);
  return row;
}

class WindowedCacheTest : public ::testing::TestWithParam<CachePolicyKind> {};

TEST_P(WindowedCacheTest, NeverEvictsPinnedRowAndReturnsWhatWasAdmitted) {
  MemoryBudget budget(uint64_t{64} << 20);
  const uint64_t row_bytes = 24, capacity = 200;
  WindowedCache cache(capacity, row_bytes, GetParam(), 4096, budget);
  Rng rng(GetParam() == CachePolicyKind::kClock ? 1 : 2);
  std::deque<std::vector<uint64_t>> window;
  for (int batch = 0; batch < 300; ++batch) {
    // The window: the next 3 batches of 40 ids each, pinned as they are drawn.
    while (window.size() < 4) {
      std::vector<uint64_t> ids;
      for (int k = 0; k < 40; ++k) ids.push_back(rng.Below(1500));
      cache.Pin(ids);
      window.push_back(ids);
    }
    std::vector<uint64_t> current = window.front();
    window.pop_front();
    // Snapshot of rows pinned by the remaining window and resident now.
    std::set<uint64_t> must_stay;
    for (const auto& b : window) {
      for (uint64_t id : b) {
        ASSERT_TRUE(cache.IsPinned(id));
        if (cache.Lookup(id) != nullptr) must_stay.insert(id);
      }
    }
    for (uint64_t id : current) {
      const std::byte* row = cache.Lookup(id);
      if (row != nullptr) {
        ASSERT_EQ(std::vector<std::byte>(row, row + row_bytes), RowOf(id, row_bytes));
      } else {
        cache.Admit(id, RowOf(id, row_bytes).data());
      }
      ASSERT_LE(cache.size(), capacity);
    }
    for (uint64_t id : must_stay) ASSERT_NE(cache.Lookup(id), nullptr) << "evicted pinned " << id;
    cache.Unpin(current);
  }
  EXPECT_GT(cache.stats().evictions, 0u);
}

TEST_P(WindowedCacheTest, RefusesAdmissionWhenEveryRowIsPinned) {
  MemoryBudget budget(uint64_t{16} << 20);
  WindowedCache cache(4, 8, GetParam(), 64, budget);
  std::vector<uint64_t> pinned = {1, 2, 3, 4};
  cache.Pin(pinned);
  for (uint64_t id : pinned) cache.Admit(id, RowOf(id, 8).data());
  cache.Admit(9, RowOf(9, 8).data());
  EXPECT_EQ(cache.Lookup(9), nullptr);
  EXPECT_EQ(cache.stats().refused, 1u);
  for (uint64_t id : pinned) EXPECT_NE(cache.Lookup(id), nullptr);
  cache.Unpin(pinned);
  cache.Admit(9, RowOf(9, 8).data());
  EXPECT_NE(cache.Lookup(9), nullptr);
}

TEST_P(WindowedCacheTest, StaysWithinItsBudget) {
  MemoryBudget budget(uint64_t{1} << 20);
  EXPECT_THROW(WindowedCache(100000, 64, GetParam(), 0, budget), Error);
  EXPECT_EQ(budget.used(), 0u);
  {
    WindowedCache cache(1000, 64, GetParam(), 100, budget);
    EXPECT_EQ(budget.used(), cache.charged_bytes());
    EXPECT_LE(budget.used(), budget.limit());
  }
  EXPECT_EQ(budget.used(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, WindowedCacheTest,
                         ::testing::Values(CachePolicyKind::kClock, CachePolicyKind::kSieve,
                                           CachePolicyKind::kS3Fifo),
                         [](const auto& info) {
                           return std::string(CachePolicyKindName(info.param));
                         });

}  // namespace
}  // namespace strata
