// IntermediateRows in memory and on disk: rows read back as written over several chunks and
// widths, only the chunk buffers charged, nothing left in the scratch directory, pieces out
// of order refused, and a scratch directory that cannot be used or a write the OS refuses
// surfacing as one clear error.
#include "fullgraph/intermediate_rows.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <csignal>
#include <cstdlib>
#include <string>

#include "common/float16.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

constexpr uint64_t kMatrixRows = 2500;  // chunks of 1024, 1024 and 452 rows
constexpr uint64_t kChunk = 1024;

uint64_t RoundUpForTest(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

float Value(uint64_t row, size_t col, size_t pass) {
  return static_cast<float>(row * 1000 + col * 10 + pass);
}

// Writes rows in pieces of `piece` rows cut at chunk boundaries, then reads them back.
void RoundTrip(IntermediateRows& rows, size_t width, uint64_t piece, size_t pass) {
  rows.BeginWrite(width);
  for (uint64_t begin = 0, end; begin < kMatrixRows; begin = end) {
    end = std::min({kMatrixRows, begin + piece, (begin / kChunk + 1) * kChunk});
    MatrixSpan<float> out = rows.Write(begin, end);
    ASSERT_EQ(out.rows(), end - begin);
    ASSERT_EQ(out.cols(), width);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < width; ++j) out(i - begin, j) = Value(i, j, pass);
    }
  }
  rows.EndWrite();
  rows.BeginRead();
  for (uint64_t begin = 0, end; begin < kMatrixRows; begin = end) {
    end = std::min({kMatrixRows, begin + 100, (begin / kChunk + 1) * kChunk});
    MatrixSpan<float> in = rows.Read(begin, end);
    for (uint64_t i = begin; i < end; ++i) {
      for (size_t j = 0; j < width; ++j) ASSERT_EQ(in(i - begin, j), Value(i, j, pass)) << i;
    }
  }
  rows.EndRead();
}

class IntermediateRowsTest : public ::testing::TestWithParam<bool> {
 protected:
  std::string ScratchPath() const { return GetParam() ? scratch_.path() : std::string(); }
  ScratchDir scratch_;
};

TEST_P(IntermediateRowsTest, ReadsBackWhatWasWritten) {
  MemoryBudget budget(uint64_t{64} << 20);
  {
    IntermediateRows rows(kMatrixRows, 16, kChunk, ScratchPath(), budget, "test rows");
    EXPECT_EQ(rows.on_disk(), GetParam());
    EXPECT_EQ(budget.used(), GetParam() ? IntermediateRows::OnDiskBytes(kMatrixRows, 16, kChunk)
                                        : IntermediateRows::ResidentBytes(kMatrixRows, 16));
    RoundTrip(rows, 16, 300, 0);
    RoundTrip(rows, 3, kChunk, 1);  // narrower, whole chunks
    RoundTrip(rows, 16, 7, 2);
    EXPECT_TRUE(testing::ListDirectory(scratch_.path()).empty());
    if (GetParam()) {
      EXPECT_GT(rows.stats().bytes_written, 0u);
      EXPECT_EQ(rows.stats().bytes_read, rows.stats().bytes_written);
    }
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST_P(IntermediateRowsTest, AReadPassMayStopEarly) {
  MemoryBudget budget(uint64_t{64} << 20);
  IntermediateRows rows(kMatrixRows, 4, kChunk, ScratchPath(), budget, "test rows");
  RoundTrip(rows, 4, 500, 0);
  rows.BeginRead();
  EXPECT_EQ(rows.Read(0, 10)(9, 3), Value(9, 3, 0));
  rows.EndRead();
  RoundTrip(rows, 4, 500, 1);
}

// Store and Load move a whole matrix, a pass each, whatever its stride: rows written by pieces
// come back whole, and a stored matrix reads back by pieces.
TEST_P(IntermediateRowsTest, WholeMatricesStoreAndLoad) {
  MemoryBudget budget(uint64_t{64} << 20);
  IntermediateRows rows(kMatrixRows, 6, kChunk, ScratchPath(), budget, "test rows");
  RoundTrip(rows, 5, 300, 0);
  Matrix whole(kMatrixRows, 8);
  const MatrixSpan<float> five(whole.data(), kMatrixRows, 5, 8);
  rows.Load(five);
  for (uint64_t i = 0; i < kMatrixRows; i += 7) {
    for (size_t j = 0; j < 5; ++j) ASSERT_EQ(five(i, j), Value(i, j, 0)) << i;
  }
  for (uint64_t i = 0; i < kMatrixRows; ++i) {
    for (size_t j = 0; j < 5; ++j) five(i, j) = Value(i, j, 1);
  }
  rows.Store(five);
  rows.BeginRead();
  for (uint64_t begin = 0; begin < kMatrixRows; begin += kChunk) {
    const uint64_t end = std::min(kMatrixRows, begin + kChunk);
    const MatrixSpan<float> in = rows.Read(begin, end);
    ASSERT_EQ(in.cols(), 5u);
    for (uint64_t i = begin; i < end; ++i) ASSERT_EQ(in(i - begin, 4), Value(i, 4, 1)) << i;
  }
  rows.EndRead();
}

// Rows mostly zero (as ReLU and dropout leave a hidden layer's) travel without their zeros and
// read back bit for bit; dense rows travel whole.
TEST(IntermediateRows, ZerosAreNotTransferred) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  IntermediateRows rows(kMatrixRows, 64, kChunk, scratch.path(), budget, "test rows");
  auto value = [](uint64_t i, size_t j) {
    if (i == 5 && j == 3) return -0.0f;  // stored: only +0.0 is elided
    return (i * 7 + j) % 4 == 0 ? Value(i, j, 2) : 0.0f;
  };
  rows.Store(Matrix(kMatrixRows, 64).span());  // dense zeros first: overwritten below
  for (bool sparse : {true, false}) {
    const uint64_t written = rows.stats().bytes_written, read = rows.stats().bytes_read;
    rows.BeginWrite(64);
    for (uint64_t begin = 0, end; begin < kMatrixRows; begin = end) {
      end = std::min({kMatrixRows, begin + 500, (begin / kChunk + 1) * kChunk});
      MatrixSpan<float> out = rows.Write(begin, end);
      for (uint64_t i = begin; i < end; ++i) {
        for (size_t j = 0; j < 64; ++j) out(i - begin, j) = sparse ? value(i, j) : Value(i, j, 3);
      }
    }
    rows.EndWrite();
    rows.BeginRead();
    for (uint64_t begin = 0; begin < kMatrixRows; begin += kChunk) {
      const uint64_t end = std::min(kMatrixRows, begin + kChunk);
      const MatrixSpan<float> in = rows.Read(begin, end);
      for (uint64_t i = begin; i < end; ++i) {
        for (size_t j = 0; j < 64; ++j) {
          const float want = sparse ? value(i, j) : Value(i, j, 3);
          ASSERT_EQ(std::bit_cast<uint32_t>(in(i - begin, j)), std::bit_cast<uint32_t>(want));
        }
      }
    }
    rows.EndRead();
    // A quarter of the values and a bit per value, in 4 KiB units per chunk; or all of them.
    const uint64_t whole = kMatrixRows * 64 * 4 + 3072;  // the last chunk padded to 4 KiB
    const uint64_t moved = rows.stats().bytes_written - written;
    EXPECT_EQ(rows.stats().bytes_read - read, moved);
    if (sparse) {
      EXPECT_LT(moved, whole * 3 / 10);
    } else {
      EXPECT_EQ(moved, whole);
    }
  }
}

// Load reads chunks straight into contiguous, 4 KiB-aligned rows (a last chunk that does not fill
// whole 4 KiB units through its buffer), sparse and dense chunks alike, and gives what was
// written, bit for bit, whether the rows are read in place or not.
TEST(IntermediateRows, LoadsAlignedRowsInPlace) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  for (const size_t width : {16, 5}) {
    IntermediateRows rows(kMatrixRows, 16, kChunk, scratch.path(), budget, "test rows");
    // Chunk 0 dense, chunk 1 mostly zero, the last (452 rows) both.
    auto value = [](uint64_t i, size_t j) {
      return i < kChunk || (i * 7 + j) % 5 == 0 ? Value(i, j, 5) : 0.0f;
    };
    Matrix m(kMatrixRows, width);
    for (uint64_t i = 0; i < kMatrixRows; ++i) {
      for (size_t j = 0; j < width; ++j) m(i, j) = value(i, j);
    }
    rows.Store(m.span());
    const uint64_t written = rows.stats().bytes_written;
    EXPECT_LT(written, kMatrixRows * width * 4);
    // The rows, then sentinels up to a whole 4 KiB unit past them: a read in place of the last
    // chunk would overrun into them.
    const uint64_t floats = RoundUpForTest(kMatrixRows * width * 4, 4096) / 4 + 1024;
    void* memory = std::aligned_alloc(4096, floats * 4);
    ASSERT_NE(memory, nullptr);
    std::fill_n(static_cast<float*>(memory), floats, 9.0f);
    const MatrixSpan<float> back(static_cast<float*>(memory), kMatrixRows, width);
    rows.Load(back);
    for (uint64_t i = 0; i < kMatrixRows; ++i) {
      for (size_t j = 0; j < width; ++j) {
        ASSERT_EQ(std::bit_cast<uint32_t>(back(i, j)), std::bit_cast<uint32_t>(value(i, j))) << i;
      }
    }
    for (uint64_t k = kMatrixRows * width; k < floats; ++k) {
      ASSERT_EQ(static_cast<float*>(memory)[k], 9.0f) << k;
    }
    EXPECT_EQ(rows.stats().bytes_read, written);
    std::free(memory);
  }
}

// A matrix shorter than a chunk has buffers of its rows only, and its zero bits after them.
TEST(IntermediateRows, AMatrixShorterThanAChunkTravelsWithoutItsZeros) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  constexpr uint64_t kRows = 1000;
  IntermediateRows rows(kRows, 16, 4096, scratch.path(), budget, "test rows");
  EXPECT_EQ(budget.used(), IntermediateRows::OnDiskBytes(kRows, 16, 4096));
  EXPECT_EQ(IntermediateRows::OnDiskBytes(kRows, 16, 4096),
            RoundUpForTest(2 * (kRows * 16 * 4 + kRows * 16 / 8), 4096));
  Matrix m(kRows, 16);
  for (uint64_t i = 0; i < kRows; ++i) m(i, i % 16) = Value(i, i % 16, 4);
  rows.Store(m.span());
  Matrix back(kRows, 16);
  rows.Load(back.span());
  for (uint64_t i = 0; i < kRows; ++i) {
    for (size_t j = 0; j < 16; ++j) ASSERT_EQ(back(i, j), m(i, j)) << i;
  }
  EXPECT_LT(rows.stats().bytes_written, kRows * 16 * 4 / 4);
}

TEST_P(IntermediateRowsTest, PiecesOutOfOrderAreInternalErrors) {
  MemoryBudget budget(uint64_t{64} << 20);
  IntermediateRows rows(kMatrixRows, 4, kChunk, ScratchPath(), budget, "test rows");
  EXPECT_THROW(rows.BeginRead(), Error);   // nothing written yet
  EXPECT_THROW(rows.Write(0, 10), Error);  // outside a pass
  RoundTrip(rows, 4, 500, 0);
  EXPECT_THROW(rows.Read(0, 10), Error);  // outside a pass
  rows.BeginWrite(4);
  EXPECT_THROW(rows.BeginRead(), Error);           // the write pass is not complete
  EXPECT_THROW(rows.Write(10, 20), Error);         // a gap before it
  EXPECT_THROW(rows.Write(0, kChunk + 1), Error);  // across a chunk boundary
  rows.Write(0, 10);
  EXPECT_THROW(rows.EndWrite(), Error);     // rows left unwritten
  EXPECT_THROW(rows.BeginWrite(5), Error);  // wider than the matrix
}

INSTANTIATE_TEST_SUITE_P(Placement, IntermediateRowsTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "OnDisk" : "InMemory"; });

// float16 on disk: every value comes back as FloatToHalf rounds it (exactly, for values a half
// holds), in half the bytes, over several chunks, odd widths and a last chunk's tail.
TEST(IntermediateRows, Float16OnDiskRoundsEachValueOnce) {
  ScratchDir scratch;
  MemoryBudget budget(uint64_t{64} << 20);
  constexpr uint64_t kMatrixRows = 5000;  // chunks of 2048, 2048 and 904 rows
  for (size_t width : {7, 16}) {
    IntermediateRows rows(kMatrixRows, width, 2048, scratch.path(), budget, "test rows",
                          /*half_on_disk=*/true);
    auto value = [](uint64_t i, size_t j) { return 0.001f * static_cast<float>(i * 31 + j) - 70; };
    rows.BeginWrite(width);
    for (uint64_t begin = 0, end; begin < kMatrixRows; begin = end) {
      end = std::min({kMatrixRows, begin + 500, (begin / 2048 + 1) * 2048});
      MatrixSpan<float> out = rows.Write(begin, end);
      for (uint64_t i = begin; i < end; ++i) {
        for (size_t j = 0; j < width; ++j) out(i - begin, j) = value(i, j);
      }
    }
    rows.EndWrite();
    auto units = [](uint64_t bytes) { return (bytes + 4095) / 4096 * 4096; };
    EXPECT_EQ(rows.stats().bytes_written, 2 * units(2048 * width * 2) + units(904 * width * 2));
    for (int pass = 0; pass < 2; ++pass) {
      rows.BeginRead();
      for (uint64_t begin = 0, end; begin < kMatrixRows; begin = end) {
        end = std::min({kMatrixRows, begin + 700, (begin / 2048 + 1) * 2048});
        MatrixSpan<float> in = rows.Read(begin, end);
        for (uint64_t i = begin; i < end; ++i) {
          for (size_t j = 0; j < width; ++j) {
            ASSERT_EQ(in(i - begin, j), HalfToFloat(FloatToHalf(value(i, j)))) << i << ", " << j;
          }
        }
      }
      rows.EndRead();
    }
  }
}

TEST(IntermediateRows, AMissingScratchDirectoryIsOneInputError) {
  MemoryBudget budget(uint64_t{64} << 20);
  ScratchDir scratch;
  const std::string missing = scratch / "no-such-dir";
  try {
    IntermediateRows rows(kMatrixRows, 4, kChunk, missing, budget, "test rows");
    FAIL() << "made a scratch file in a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_EQ(budget.used(), 0u);
}

// The file-size limit makes the OS refuse first the reservation and then, for a file made
// before it was lowered, the writes past it: both are one error naming the directory.
TEST(IntermediateRows, RefusedSpaceAndWritesAreOneClearError) {
  MemoryBudget budget(uint64_t{64} << 20);
  ScratchDir scratch;
  IntermediateRows made_before(kMatrixRows, 16, kChunk, scratch.path(), budget, "test rows");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 << 10;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string reserve_error, write_error;
  try {
    IntermediateRows rows(kMatrixRows, 16, kChunk, scratch.path(), budget, "test rows");
  } catch (const Error& e) {
    reserve_error = e.what();
  }
  try {
    made_before.BeginWrite(16);
    for (uint64_t begin = 0; begin < kMatrixRows; begin += kChunk) {
      made_before.Write(begin, std::min(kMatrixRows, begin + kChunk));
    }
    made_before.EndWrite();
  } catch (const Error& e) {
    write_error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(reserve_error.find("cannot reserve"), std::string::npos) << reserve_error;
  EXPECT_NE(reserve_error.find(scratch.path()), std::string::npos) << reserve_error;
  EXPECT_NE(write_error.find("cannot write"), std::string::npos) << write_error;
  EXPECT_NE(write_error.find(scratch.path()), std::string::npos) << write_error;
  EXPECT_TRUE(testing::ListDirectory(scratch.path()).empty());
}

}  // namespace
}  // namespace strata
