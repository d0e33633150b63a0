// RoBW plans: blocks of whole row groups that cover every row (and so every nonzero) exactly
// once, each as large as its buffer allows, and a clear refusal when one group cannot fit.
#include "fullgraph/row_blocks.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "strata/error.h"
#include "strata/io_engine.h"

namespace strata {
namespace {

// Rows of random nonzero counts, 4-byte ids: offset_of(r) = indptr[r] * 4.
std::vector<uint64_t> RandomIndptr(uint64_t rows, uint64_t max_degree, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint64_t> indptr{0};
  for (uint64_t r = 0; r < rows; ++r) indptr.push_back(indptr.back() + rng() % (max_degree + 1));
  return indptr;
}

TEST(RowBlocks, CoverEveryRowOnceInWholeGroupsAndFitTheBuffer) {
  for (uint64_t group : {1, 7, 128}) {
    for (uint64_t buffer : {uint64_t{16} << 10, uint64_t{64} << 10, uint64_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "group " << group << ", buffer " << buffer);
      const std::vector<uint64_t> indptr = RandomIndptr(5000, 40, 3);
      const RowOffset offset_of = [&](uint64_t r) { return indptr[r] * 4; };
      if (LargestGroupSpan(5000, group, offset_of) > buffer) continue;
      const std::vector<RowBlock> blocks = PlanRowBlocks(5000, group, buffer, offset_of);
      ASSERT_FALSE(blocks.empty());
      EXPECT_EQ(blocks.front().begin, 0u);
      EXPECT_EQ(blocks.back().end, 5000u);
      uint64_t nonzeros = 0;
      for (size_t k = 0; k < blocks.size(); ++k) {
        const RowBlock& b = blocks[k];
        ASSERT_LT(b.begin, b.end);
        if (k > 0) {
          EXPECT_EQ(b.begin, blocks[k - 1].end) << "a gap or an overlap";
        }
        EXPECT_EQ(b.begin % group, 0u) << "a block starts inside a group";
        EXPECT_LE(AlignedSpan(offset_of, b.begin, b.end), buffer);
        // Maximal: the next group would not have fitted.
        if (b.end < 5000) {
          EXPECT_GT(AlignedSpan(offset_of, b.begin, std::min<uint64_t>(5000, b.end + group)),
                    buffer);
        }
        nonzeros += indptr[b.end] - indptr[b.begin];
      }
      EXPECT_EQ(nonzeros, indptr.back());
    }
  }
}

TEST(RowBlocks, AlignedSpanWidensToTheDirectIoAlignment) {
  const RowOffset offset_of = [](uint64_t r) { return r * 100; };
  EXPECT_EQ(AlignedSpan(offset_of, 0, 1), kDirectIoAlignment);
  EXPECT_EQ(AlignedSpan(offset_of, 40, 41), 2 * kDirectIoAlignment);  // bytes 4000..4100
}

TEST(RowBlocks, AGroupLargerThanTheBufferIsRefused) {
  const RowOffset offset_of = [](uint64_t r) { return r * 8192; };
  EXPECT_EQ(LargestGroupSpan(100, 4, offset_of), 4 * 8192u);
  EXPECT_THROW(PlanRowBlocks(100, 4, 3 * 8192, offset_of), Error);
  EXPECT_EQ(PlanRowBlocks(100, 4, 4 * 8192, offset_of).size(), 25u);
}

}  // namespace
}  // namespace strata
