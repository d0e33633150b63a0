#include "nn/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace strata {
namespace {

TEST(PartsFor, OneThreadBelowTheThresholdThenOnePerHalfOfIt) {
  EXPECT_EQ(PartsFor(16, 0), 1u);
  EXPECT_EQ(PartsFor(16, kMinParallelWork - 1), 1u);
  EXPECT_EQ(PartsFor(16, kMinParallelWork), 2u);
  EXPECT_EQ(PartsFor(16, 5 * kMinPartWork + kMinPartWork / 2), 5u);
  EXPECT_EQ(PartsFor(16, 16 * kMinPartWork), 16u);
  EXPECT_EQ(PartsFor(16, uint64_t{1} << 40), 16u);
  EXPECT_EQ(PartsFor(1, uint64_t{1} << 40), 1u);
  EXPECT_EQ(PartsFor(0, uint64_t{1} << 40), 1u);
  // Two threads share everything that is parallel at all, as before the parts were sized.
  EXPECT_EQ(PartsFor(2, kMinParallelWork), 2u);
}

// The ranges fn was called with, sorted.
template <typename Loop>
std::vector<std::pair<uint64_t, uint64_t>> Ranges(Loop loop) {
  std::mutex mutex;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  loop([&](uint64_t begin, uint64_t end) {
    std::lock_guard lock(mutex);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

void ExpectCover(const std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t count) {
  ASSERT_FALSE(ranges.empty());
  EXPECT_EQ(ranges.front().first, 0u);
  EXPECT_EQ(ranges.back().second, count);
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].first, ranges[i - 1].second);
}

TEST(ForRows, SplitsIntoAsManyRangesAsTheWorkAffords) {
  // 128 rows of 1,024 operations: 4 parts of kMinPartWork on 16 threads.
  const auto sized = Ranges([](auto fn) { ForRows(16, 128, 1024, fn); });
  EXPECT_EQ(sized.size(), 4u);
  ExpectCover(sized, 128);
  const auto all = Ranges([](auto fn) { ForRows(16, 1024, 1024, fn); });
  EXPECT_EQ(all.size(), 16u);
  ExpectCover(all, 1024);
  const auto one = Ranges([](auto fn) { ForRows(16, 63, 1024, fn); });
  EXPECT_EQ(one.size(), 1u);
  ExpectCover(one, 63);
}

TEST(ForSegments, SplitsIntoAsManyRangesAsTheWorkAffords) {
  // 100 destinations of 9 edges each: (900 + 100) × 100 = 100,000 operations, 3 parts.
  std::vector<uint32_t> indptr(101);
  for (uint32_t d = 0; d <= 100; ++d) indptr[d] = 9 * d;
  const auto ranges = Ranges([&](auto fn) {
    ForSegments(16, indptr, 100, [&](uint32_t begin, uint32_t end) { fn(begin, end); });
  });
  EXPECT_EQ(ranges.size(), 3u);
  ExpectCover(ranges, 100);
}

}  // namespace
}  // namespace strata
