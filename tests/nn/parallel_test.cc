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

// Threads writing the same rows side by side get whole cache lines of them: 64 columns go to
// at most 4 threads, 16 each, however many are asked for; 40 columns to 3 at most (16, 16, 8).
TEST(ForColumnRanges, StartsRangesOnCacheLines) {
  for (const unsigned parts : {2u, 3u, 4u, 6u, 8u, 16u}) {
    SCOPED_TRACE(parts);
    const auto ranges = Ranges([&](auto fn) { ForColumnRanges(parts, 64, fn); });
    EXPECT_EQ(ranges.size(), std::min(parts, 4u));
    ExpectCover(ranges, 64);
    for (const auto& [c0, c1] : ranges) EXPECT_EQ(c0 % kLineFloats, 0u) << c0;
  }
  const auto odd = Ranges([](auto fn) { ForColumnRanges(16, 40, fn); });
  EXPECT_EQ(odd, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 16}, {16, 32}, {32, 40}}));
  const auto one = Ranges([](auto fn) { ForColumnRanges(1, 64, fn); });
  EXPECT_EQ(one.size(), 1u);
  ExpectCover(one, 64);
  // Under two lines the columns are shared plainly, rather than left to one thread.
  const auto narrow = Ranges([](auto fn) { ForColumnRanges(2, 16, fn); });
  EXPECT_EQ(narrow, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 8}, {8, 16}}));
  const auto fewer = Ranges([](auto fn) { ForColumnRanges(8, 3, fn); });
  ExpectCover(fewer, 3);
  for (const auto& [c0, c1] : fewer) EXPECT_LT(c0, c1);
}

}  // namespace
}  // namespace strata
