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

// The tiles fn was called with, each once, covering the target: returns them sorted.
std::vector<ScatterTile> Tiles(unsigned parts, uint64_t rows, size_t cols) {
  std::mutex mutex;
  std::vector<ScatterTile> tiles;
  ForScatterTiles(parts, rows, cols, [&](const ScatterTile& tile) {
    std::lock_guard lock(mutex);
    tiles.push_back(tile);
  });
  std::sort(tiles.begin(), tiles.end(), [](const ScatterTile& a, const ScatterTile& b) {
    return std::pair(a.row_begin, a.col_begin) < std::pair(b.row_begin, b.col_begin);
  });
  std::vector<int> covered(rows * cols);
  for (const ScatterTile& t : tiles) {
    EXPECT_LT(t.col_begin, t.col_end);
    for (uint64_t r = t.row_begin; r < t.row_end; ++r) {
      for (size_t c = t.col_begin; c < t.col_end; ++c) ++covered[r * cols + c];
    }
  }
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), static_cast<long>(rows * cols));
  return tiles;
}

// Threads writing the same rows side by side get whole cache lines of them: 64 columns are cut
// into at most 4 ranges of 16, and past 4 threads the rows are cut too; 40 columns into 16, 16
// and 8, or fewer ranges of whole lines where that makes more tiles; under two lines only the
// rows are cut.
TEST(ForScatterTiles, CutsColumnsOnCacheLinesThenRows) {
  for (const unsigned parts : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u}) {
    SCOPED_TRACE(parts);
    const std::vector<ScatterTile> tiles = Tiles(parts, 100, 64);
    EXPECT_EQ(tiles.size(), parts);
    for (const ScatterTile& t : tiles) EXPECT_EQ(t.col_begin % kLineFloats, 0u);
  }
  const std::vector<ScatterTile> sixteen = Tiles(16, 100, 64);
  EXPECT_EQ(sixteen[0].row_end, 25u);
  EXPECT_EQ(sixteen[0].cols(), 16u);
  const std::vector<ScatterTile> odd = Tiles(16, 10, 40);
  ASSERT_EQ(odd.size(), 16u);  // 8 row ranges × 2 column ranges, of 1 and 2 lines
  EXPECT_EQ(odd[0].col_end, 16u);
  EXPECT_EQ(odd[1].col_begin, 16u);
  EXPECT_EQ(odd[1].col_end, 40u);
  const std::vector<ScatterTile> three = Tiles(3, 10, 40);
  ASSERT_EQ(three.size(), 3u);  // the 3 lines, before any row range
  EXPECT_EQ(three[2].col_begin, 32u);
  EXPECT_EQ(three[2].row_end, 10u);
  const std::vector<ScatterTile> narrow = Tiles(4, 10, 16);
  ASSERT_EQ(narrow.size(), 4u);
  for (const ScatterTile& t : narrow) EXPECT_EQ(t.cols(), 16u);
  // More parts than rows: a tile per row.
  EXPECT_EQ(Tiles(8, 3, 3).size(), 3u);
  EXPECT_EQ(Tiles(8, 0, 3).size(), 1u);
}

}  // namespace
}  // namespace strata
