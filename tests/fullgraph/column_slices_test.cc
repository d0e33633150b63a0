// ColumnSlices: slice widths and first columns, only the buffers charged, full rows written and
// read back through the slices, one slice overwritten on its own and assembled with the others,
// and a narrower matrix using fewer slices.
#include "fullgraph/column_slices.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

constexpr uint64_t kSlicedRows = 2500;  // chunks of 1024, 1024 and 452 rows
constexpr uint64_t kSliceChunk = 1024;

float SlicedValue(uint64_t row, size_t col, size_t pass) {
  return static_cast<float>(row * 1000 + col * 10 + pass);
}

// Calls fn(begin, end) for pieces of at most `piece` rows cut at chunk boundaries.
template <typename Fn>
void ForEachPiece(uint64_t piece, Fn fn) {
  for (uint64_t begin = 0, end; begin < kSlicedRows; begin = end) {
    end = std::min({kSlicedRows, begin + piece, (begin / kSliceChunk + 1) * kSliceChunk});
    fn(begin, end);
  }
}

void WriteRows(ColumnSlices& slices, size_t width, uint64_t piece, size_t pass) {
  slices.BeginWrite(width);
  ForEachPiece(piece, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slices.Write(begin, end);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < width; ++j) rows(i - begin, j) = SlicedValue(i, j, pass);
    }
  });
  slices.EndWrite();
}

// The full rows read back equal value(row, column).
template <typename ValueFn>
void ExpectRows(ColumnSlices& slices, size_t width, uint64_t piece, ValueFn value) {
  slices.BeginRead(width);
  ForEachPiece(piece, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slices.Read(begin, end);
    ASSERT_EQ(rows.rows(), end - begin);
    ASSERT_EQ(rows.cols(), width);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < width; ++j)
        ASSERT_EQ(rows(i - begin, j), value(i, j)) << i << " " << j;
    }
  });
  slices.EndRead();
}

TEST(ColumnSlices, SlicesCoverTheColumnsInOrder) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  ColumnSlices slices(kSlicedRows, 16, 6, kSliceChunk, scratch.path(), budget, "test slices");
  EXPECT_EQ(slices.SliceCount(16), 3u);
  EXPECT_EQ(slices.SliceCount(12), 2u);
  EXPECT_EQ(slices.SliceCount(6), 1u);
  EXPECT_EQ(slices.FirstColumn(2), 12u);
  EXPECT_EQ(slices.SliceWidth(2, 16), 4u);
  EXPECT_EQ(slices.SliceWidth(1, 12), 6u);
  EXPECT_EQ(budget.used(), ColumnSlices::ChargedBytes(kSlicedRows, 16, 6, kSliceChunk));
  // Two chunk buffers per slice and one chunk of full rows.
  EXPECT_EQ(ColumnSlices::ChargedBytes(kSlicedRows, 16, 6, kSliceChunk),
            2 * kSliceChunk * 16 * 4 + kSliceChunk * 16 * 4);
}

TEST(ColumnSlices, FullRowsReadBackAsWritten) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  {
    ColumnSlices slices(kSlicedRows, 16, 6, kSliceChunk, scratch.path(), budget, "test slices");
    WriteRows(slices, 16, 128, 0);
    ExpectRows(slices, 16, 300, [](uint64_t i, size_t j) { return SlicedValue(i, j, 0); });
    // Narrower: two slices, whole chunks.
    WriteRows(slices, 9, kSliceChunk, 1);
    ExpectRows(slices, 9, 7, [](uint64_t i, size_t j) { return SlicedValue(i, j, 1); });
    EXPECT_TRUE(testing::ListDirectory(scratch.path()).empty());
    EXPECT_GT(slices.stats().bytes_written, 0u);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(ColumnSlices, ASliceOverwrittenAloneIsAssembledWithTheOthers) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  ColumnSlices slices(kSlicedRows, 16, 6, kSliceChunk, scratch.path(), budget, "test slices");
  WriteRows(slices, 16, 128, 0);
  // Slice 1 (columns 6 to 11) loaded, then overwritten by pass 1's values.
  IntermediateRows& slice = slices.slice(1);
  slice.BeginRead();
  ForEachPiece(kSliceChunk, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slice.Read(begin, end);
    ASSERT_EQ(rows.cols(), 6u);
    for (uint64_t i = begin; i < end; ++i) ASSERT_EQ(rows(i - begin, 0), SlicedValue(i, 6, 0));
  });
  slice.EndRead();
  slice.BeginWrite(6);
  ForEachPiece(500, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slice.Write(begin, end);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < 6; ++j) rows(i - begin, j) = SlicedValue(i, 6 + j, 1);
    }
  });
  slice.EndWrite();
  ExpectRows(slices, 16, 100,
             [](uint64_t i, size_t j) { return SlicedValue(i, j, j >= 6 && j < 12 ? 1 : 0); });
}

TEST(ColumnSlices, SlicesNeedAWidthAndADirectory) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  EXPECT_THROW(ColumnSlices(kSlicedRows, 16, 0, kSliceChunk, scratch.path(), budget, "s"), Error);
  EXPECT_THROW(ColumnSlices(kSlicedRows, 16, 17, kSliceChunk, scratch.path(), budget, "s"), Error);
  EXPECT_THROW(ColumnSlices(kSlicedRows, 16, 4, kSliceChunk, "", budget, "s"), Error);
}

}  // namespace
}  // namespace strata
