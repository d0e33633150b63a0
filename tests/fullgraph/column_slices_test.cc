// ColumnSlices: slice widths and first columns, only the buffers charged, full rows written and
// read back through the slices, slices written and read on their own, a narrower matrix using
// fewer slices, one slice passing full rows straight through (in memory too), slice 0 held
// in the caller's memory, and full rows split and assembled on two threads.
#include "fullgraph/column_slices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

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
  slices.BeginRead();
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
  // Two chunk buffers per slice (with a 4 KiB unit of zero bits) and one chunk of full rows.
  EXPECT_EQ(ColumnSlices::ChargedBytes(kSlicedRows, 16, 6, kSliceChunk),
            2 * kSliceChunk * 16 * 4 + 3 * 4096 + kSliceChunk * 16 * 4);
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

TEST(ColumnSlices, SlicesWrittenAloneAreReadAsFullRowsAndAlone) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  ColumnSlices slices(kSlicedRows, 16, 6, kSliceChunk, scratch.path(), budget, "test slices");
  // Slice by slice, in pieces of different sizes per slice, as a sliced propagation writes.
  slices.BeginWrite(16);
  for (size_t s = 0; s < 3; ++s) {
    ForEachPiece(100 + 400 * s, [&](uint64_t begin, uint64_t end) {
      MatrixSpan<float> rows = slices.WriteSlice(s, begin, end);
      ASSERT_EQ(rows.cols(), slices.SliceWidth(s, 16));
      for (uint64_t i = begin; i < end; ++i) {
        for (size_t j = 0; j < rows.cols(); ++j) {
          rows(i - begin, j) = SlicedValue(i, slices.FirstColumn(s) + j, 2);
        }
      }
    });
  }
  slices.EndWrite();
  ExpectRows(slices, 16, 300, [](uint64_t i, size_t j) { return SlicedValue(i, j, 2); });
  // Slice 1 alone, read while slice 2 waits in the same pass.
  slices.BeginRead();
  for (size_t s : {1, 2}) {
    ForEachPiece(kSliceChunk, [&](uint64_t begin, uint64_t end) {
      MatrixSpan<float> rows = slices.ReadSlice(s, begin, end);
      for (uint64_t i = begin; i < end; ++i) {
        ASSERT_EQ(rows(i - begin, 0), SlicedValue(i, slices.FirstColumn(s), 2));
      }
    });
  }
  slices.EndRead();
}

TEST(ColumnSlices, OneSlicePassesFullRowsThrough) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  for (const std::string& dir : {scratch.path(), std::string()}) {
    ColumnSlices slices(kSlicedRows, 16, 32, kSliceChunk, dir, budget, "test rows");
    EXPECT_EQ(slices.SliceCount(16), 1u);
    // Nothing staged: the slice's own buffers on disk, the whole matrix in memory.
    EXPECT_EQ(budget.used(), dir.empty()
                                 ? IntermediateRows::ResidentBytes(kSlicedRows, 16)
                                 : ColumnSlices::ChargedBytes(kSlicedRows, 16, 32, kSliceChunk));
    EXPECT_EQ(ColumnSlices::ChargedBytes(kSlicedRows, 16, 32, kSliceChunk),
              IntermediateRows::OnDiskBytes(kSlicedRows, 16, kSliceChunk));
    WriteRows(slices, 16, 128, 3);
    ExpectRows(slices, 16, 300, [](uint64_t i, size_t j) { return SlicedValue(i, j, 3); });
    WriteRows(slices, 5, 1000, 4);
    ExpectRows(slices, 5, 7, [](uint64_t i, size_t j) { return SlicedValue(i, j, 4); });
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(ColumnSlices, TheFirstSliceHeldInMemoryIsReadThereUntilAnotherIsLoaded) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  ColumnSlices slices(kSlicedRows, 16, 6, kSliceChunk, scratch.path(), budget, "test slices");
  WriteRows(slices, 16, 128, 0);
  std::vector<float> resident(kSlicedRows * 6);
  const MatrixSpan<float> held(resident.data(), kSlicedRows, 6);
  slices.BeginWrite(16, held);
  ForEachPiece(128, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slices.Write(begin, end);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < 16; ++j) rows(i - begin, j) = SlicedValue(i, j, 5);
    }
  });
  slices.EndWrite();
  for (uint64_t i = 0; i < kSlicedRows; ++i) ASSERT_EQ(held(i, 5), SlicedValue(i, 5, 5));
  ExpectRows(slices, 16, 300, [](uint64_t i, size_t j) { return SlicedValue(i, j, 5); });
  const uint64_t read = slices.stats().bytes_read;
  slices.Load(0, held);  // already there: nothing read
  EXPECT_EQ(slices.stats().bytes_read, read);
  std::vector<float> other(kSlicedRows * 6);
  EXPECT_THROW(slices.Load(0, MatrixSpan<float>(other.data(), kSlicedRows, 6)), Error);
  // Loading slice 1 over it ends the hold: slice 0 is lost until it is written again.
  slices.Load(1, held);
  ASSERT_EQ(held(7, 0), SlicedValue(7, 6, 5));
  EXPECT_THROW(slices.BeginRead(), Error);
  EXPECT_THROW(slices.Load(0, held), Error);
  WriteRows(slices, 16, 128, 6);
  ExpectRows(slices, 16, 300, [](uint64_t i, size_t j) { return SlicedValue(i, j, 6); });
}

TEST(ColumnSlices, FullRowsAreSplitAndAssembledOnTwoThreads) {
  // Slices of 64, 64 and 32 columns: a chunk of 1024 rows of the first two is enough work to
  // share (ForRows), not the third's, nor the last chunk's 452 rows. The first slice is held.
  constexpr size_t kWidth = 160, kSlice = 64;
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  ColumnSlices slices(kSlicedRows, kWidth, kSlice, kSliceChunk, scratch.path(), budget,
                      "test slices", 2);
  // Pieces of 300 rows, which do not divide a chunk: staged until the one a chunk's end cuts.
  WriteRows(slices, kWidth, 300, 0);
  ExpectRows(slices, kWidth, kSliceChunk,
             [](uint64_t i, size_t j) { return SlicedValue(i, j, 0); });
  std::vector<float> resident(kSlicedRows * kSlice);
  const MatrixSpan<float> held(resident.data(), kSlicedRows, kSlice);
  // Pieces of 128 rows, staged together and split a chunk at a time.
  slices.BeginWrite(kWidth, held);
  ForEachPiece(128, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = slices.Write(begin, end);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < kWidth; ++j) rows(i - begin, j) = SlicedValue(i, j, 1);
    }
  });
  slices.EndWrite();
  for (uint64_t i = 0; i < kSlicedRows; ++i) {
    ASSERT_EQ(held(i, kSlice - 1), SlicedValue(i, kSlice - 1, 1));
  }
  ExpectRows(slices, kWidth, kSliceChunk,
             [](uint64_t i, size_t j) { return SlicedValue(i, j, 1); });
}

// Full rows read a whole chunk at a time expand each slice's coded chunks straight into them:
// mostly-zero rows (which travel without their zeros) and dense ones, slice 0 held or not, on
// disk and in memory, on one and two threads, read back bit for bit; such a pass reads no
// slice alone.
TEST(ColumnSlices, WholeChunksAreExpandedIntoTheFullRows) {
  constexpr size_t kWidth = 40, kSlice = 16;
  auto value = [](uint64_t i, size_t j, size_t pass) {
    return pass == 0 && (i * 3 + j) % 5 != 0 ? 0.0f : SlicedValue(i, j, pass + 1);
  };
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  for (const std::string& dir : {scratch.path(), std::string()}) {
    for (unsigned threads : {1u, 2u}) {
      ColumnSlices slices(kSlicedRows, kWidth, kSlice, kSliceChunk, dir, budget, "test slices",
                          threads);
      std::vector<float> resident(kSlicedRows * kSlice);
      for (size_t pass : {0, 1}) {
        for (bool hold : {false, true}) {
          slices.BeginWrite(kWidth, hold ? MatrixSpan<float>(resident.data(), kSlicedRows, kSlice)
                                         : MatrixSpan<float>());
          ForEachPiece(300, [&](uint64_t begin, uint64_t end) {
            MatrixSpan<float> rows = slices.Write(begin, end);
            for (uint64_t i = begin; i < end; ++i) {
              for (size_t j = 0; j < kWidth; ++j) rows(i - begin, j) = value(i, j, pass);
            }
          });
          slices.EndWrite();
          slices.BeginRead(/*whole_chunks=*/true);
          if (!dir.empty()) {
            EXPECT_THROW(slices.ReadSlice(1, 0, kSliceChunk), Error);
          }
          ForEachPiece(kSliceChunk, [&](uint64_t begin, uint64_t end) {
            const MatrixSpan<float> rows = slices.Read(begin, end);
            for (uint64_t i = begin; i < end; ++i) {
              for (size_t j = 0; j < kWidth; ++j) {
                ASSERT_EQ(std::bit_cast<uint32_t>(rows(i - begin, j)),
                          std::bit_cast<uint32_t>(value(i, j, pass)))
                    << i << " " << j;
              }
            }
          });
          slices.EndRead();
          ExpectRows(slices, kWidth, 300, [&](uint64_t i, size_t j) { return value(i, j, pass); });
        }
      }
    }
  }
}

TEST(ColumnSlices, SlicesNeedAWidth) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  EXPECT_THROW(ColumnSlices(kSlicedRows, 16, 0, kSliceChunk, scratch.path(), budget, "s"), Error);
}

}  // namespace
}  // namespace strata
