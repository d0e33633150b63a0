// StreamedRows under failing reads: an EIO, a read that meets the end of the file early, or a
// file truncated after the source was planned, in a block past the first, ends the pass with
// one error naming the file, after the blocks before it were handed over intact; nothing is
// left in flight, so the source can be destroyed or run another pass. A pass that returns has
// the next pass's first block read ahead (RoBW): passes in a row hand over every row intact,
// and a failed read-ahead ends the pass that needs it. Each case runs on both engines,
// double-buffered (RoBW) and as MaxMemory (a resident prefix, no read-ahead). Passes pulled a
// block at a time (RowBlockPass) walk two sources side by side; one left early or by an
// exception leaves nothing in flight, and one pulled to its last block keeps the read-ahead.
#include "fullgraph/row_block_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using Kind = IoEngineOptions::Kind;

// 64 rows of 16 KiB: a 64 KiB buffer holds blocks of 4 rows.
constexpr uint64_t kSourceRows = 64;
constexpr uint64_t kRowBytes = 16 << 10;
constexpr uint64_t kBufferBytes = 64 << 10;
// Reads from row 40 on fail: 10 blocks (RoBW) or the prefix and 8 blocks (MaxMemory) come first.
constexpr uint64_t kFailRow = 40;

uint32_t Word(uint64_t row, uint64_t i) { return static_cast<uint32_t>(row * 1000003 + i); }

// (engine, overlap): overlap false is the MaxMemory mode, with 8 rows resident.
class StreamedRowsFaultTest : public ::testing::TestWithParam<std::tuple<Kind, bool>> {
 protected:
  void SetUp() override {
    if (kind() == Kind::kUring) {
      if (const std::string why = testing::UringUnavailableReason(); !why.empty()) {
        GTEST_SKIP() << "io_uring unavailable here: " << why;
      }
    }
    std::vector<uint32_t> words(kSourceRows * kRowBytes / 4);
    for (uint64_t i = 0; i < words.size(); ++i) words[i] = Word(i / (kRowBytes / 4), i);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(words.data()), kSourceRows * kRowBytes);
  }

  Kind kind() const { return std::get<0>(GetParam()); }
  bool overlap() const { return std::get<1>(GetParam()); }

  std::unique_ptr<StreamedRows> Make(std::function<int(const ReadRequest&, int)> hook = {}) {
    IoEngineOptions io;
    io.kind = kind();
    io.depth = 4;
    io.pread_threads = 2;
    io.fault_hook = std::move(hook);
    return std::make_unique<StreamedRows>(
        std::vector{path_}, kSourceRows, 1, [](uint64_t row) { return row * kRowBytes; },
        kBufferBytes, io, budget_, "test buffers", overlap() ? 0 : 8 * kRowBytes, overlap());
  }

  // Checks every row of a block handed over.
  static void CheckBlock(const RowBlock& block, const RowAddress& row) {
    for (uint64_t r = block.begin; r < block.end; ++r) {
      const auto* words = reinterpret_cast<const uint32_t*>(row(0, r));
      for (uint64_t i = 0; i < kRowBytes / 4; i += 511) {
        ASSERT_EQ(words[i], Word(r, r * (kRowBytes / 4) + i)) << "row " << r << ", word " << i;
      }
    }
  }

  // Runs a pass, checking every row handed over; returns the rows seen before it ended.
  static uint64_t Pass(StreamedRows& source) {
    uint64_t next_row = 0;
    source.ForEachBlock([&](const RowBlock& block, const RowAddress& row) {
      EXPECT_EQ(block.begin, next_row);
      CheckBlock(block, row);
      next_row = block.end;
    });
    return next_row;
  }

  // Bytes a whole pass reads (MaxMemory keeps 8 rows resident).
  uint64_t StreamedBytes() const { return (kSourceRows - (overlap() ? 0 : 8)) * kRowBytes; }

  // A pass that must fail at kFailRow with an error of `kind` whose message holds the file's
  // name and `what`.
  void ExpectFailedPass(StreamedRows& source, Error::Kind kind, const std::string& what) {
    uint64_t rows_seen = 0;
    try {
      source.ForEachBlock([&](const RowBlock& block, const RowAddress&) { rows_seen = block.end; });
      FAIL() << "the pass read past a failed read";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), kind) << message;
      EXPECT_NE(message.find(path_), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    EXPECT_EQ(rows_seen, kFailRow) << "the blocks before the failed one were not all handed over";
  }

  testing::ScratchDir dir_;
  const std::string path_ = dir_ / "rows.bin";
  MemoryBudget budget_{uint64_t{64} << 20};
};

TEST_P(StreamedRowsFaultTest, AnEioEndsThePassWithOneErrorAndTheNextPassIsWhole) {
  bool failing = true;
  auto source = Make([&](const ReadRequest& r, int result) {
    return failing && r.offset >= kFailRow * kRowBytes ? -EIO : result;
  });
  ASSERT_GT(source->blocks().size(), 10u);
  ExpectFailedPass(*source, Error::Kind::kInternal,
                   "cannot read 65536 bytes at offset " + std::to_string(kFailRow * kRowBytes));
  // Nothing of the failed pass is left to be reaped by the next.
  failing = false;
  EXPECT_EQ(Pass(*source), kSourceRows);
  const uint64_t used = budget_.used();
  source.reset();
  EXPECT_EQ(budget_.used(), 0u) << used;
}

TEST_P(StreamedRowsFaultTest, AReadEndingEarlyIsATruncatedFile) {
  // A short count is continued (the bytes so far are good); a read that returns nothing before
  // the end the file had when opened means the file is shorter now.
  auto halves = Make([](const ReadRequest& r, int result) {
    return result > 8192 && r.length == kBufferBytes ? result / 2 : result;
  });
  EXPECT_EQ(Pass(*halves), kSourceRows);
  auto ends = Make([](const ReadRequest& r, int result) {
    return r.offset >= kFailRow * kRowBytes ? 0 : result;
  });
  ExpectFailedPass(*ends, Error::Kind::kInput, "file is truncated");
}

TEST_P(StreamedRowsFaultTest, AFileTruncatedAfterPlanningIsOneErrorNamingIt) {
  auto source = Make();
  // Mid-row and off the sector alignment, as a crashed copy would leave it.
  ASSERT_EQ(::truncate(path_.c_str(), (kFailRow + 1) * kRowBytes + 1000), 0) << strerror(errno);
  ExpectFailedPass(*source, Error::Kind::kInput, "file is truncated");
  source.reset();
}

TEST_P(StreamedRowsFaultTest, AThrowingCallerLeavesNoReadInFlight) {
  auto source = Make();
  EXPECT_THROW(source->ForEachBlock([](const RowBlock& block, const RowAddress&) {
    if (block.end > kFailRow) throw Error::Input("the caller gave up");
  }),
               Error);
  EXPECT_EQ(Pass(*source), kSourceRows);
}

TEST_P(StreamedRowsFaultTest, PassesInARowHandOverEveryRowAndCountTheirOwnReads) {
  auto source = Make();
  for (int pass = 1; pass <= 3; ++pass) {
    EXPECT_EQ(Pass(*source), kSourceRows) << "pass " << pass;
    // A read-ahead counts when the pass that uses it waits for it.
    EXPECT_EQ(source->stats().bytes_read, pass * StreamedBytes()) << "pass " << pass;
  }
}

TEST_P(StreamedRowsFaultTest, PassesPulledSideBySideHandOverEveryRow) {
  // Two sources walked in step, a block of one and then of the other, twice over: each hands
  // over its rows intact while the other's reads are in flight, and reads each row once a pass.
  auto first = Make();
  auto second = Make();
  for (int round = 1; round <= 2; ++round) {
    RowBlockPass a(*first), b(*second);
    RowBlock block_a, block_b;
    RowAddress row_a, row_b;
    uint64_t rows = 0;
    while (a.Next(block_a, row_a)) {
      ASSERT_TRUE(b.Next(block_b, row_b));
      EXPECT_EQ(block_a.begin, rows);
      EXPECT_EQ(block_b.begin, rows);
      CheckBlock(block_b, row_b);
      CheckBlock(block_a, row_a);
      rows = block_a.end;
    }
    EXPECT_FALSE(b.Next(block_b, row_b));
    EXPECT_EQ(rows, kSourceRows);
  }
  EXPECT_EQ(first->stats().bytes_read, 2 * StreamedBytes());
  EXPECT_EQ(second->stats().bytes_read, 2 * StreamedBytes());
  EXPECT_EQ(Pass(*first), kSourceRows);
}

TEST_P(StreamedRowsFaultTest, APullEndedEarlyOrByAnExceptionLeavesNoReadInFlight) {
  // A pass left after 3 blocks, and one whose caller throws after 5: each abandons its reads
  // (the next one's included), and the next pass is whole.
  auto source = Make();
  RowBlock block;
  RowAddress row;
  {
    RowBlockPass pass(*source);
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(pass.Next(block, row));
  }
  try {
    RowBlockPass pass(*source);
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(pass.Next(block, row));
    throw Error::Input("the caller gave up");
  } catch (const Error&) {
  }
  EXPECT_EQ(Pass(*source), kSourceRows);
}

TEST_P(StreamedRowsFaultTest, APullToTheLastBlockKeepsTheNextPassReadAhead) {
  // Pulled to its last block, without the final false, a pass ends as one that returns: the
  // next pass's first block stays read ahead (RoBW), and that pass does not read it again. The
  // first streamed block is read by the pulled pass, read ahead by it (RoBW), read ahead again
  // by the pass after it (RoBW), or read by that pass (MaxMemory); every read is counted once
  // the source is gone.
  const uint64_t first_offset = overlap() ? 0 : 8 * kRowBytes;
  int first_block_reads = 0;
  auto source = Make([&](const ReadRequest& r, int result) {
    first_block_reads += r.offset == first_offset;
    return result;
  });
  {
    RowBlockPass pass(*source);
    RowBlock block;
    RowAddress row;
    for (size_t k = 0; k < source->blocks().size(); ++k) ASSERT_TRUE(pass.Next(block, row));
  }
  EXPECT_EQ(Pass(*source), kSourceRows);
  source.reset();
  EXPECT_EQ(first_block_reads, overlap() ? 3 : 2);
}

TEST_P(StreamedRowsFaultTest, AFailedReadAheadEndsThePassThatNeedsIt) {
  // The first streamed block's second read fails: RoBW's read-ahead during pass 1, MaxMemory's
  // read in pass 2.
  const uint64_t first_offset = overlap() ? 0 : 8 * kRowBytes;
  int first_block_reads = 0;
  auto source = Make([&](const ReadRequest& r, int result) {
    return r.offset == first_offset && ++first_block_reads == 2 ? -EIO : result;
  });
  EXPECT_EQ(Pass(*source), kSourceRows);
  uint64_t rows_seen = 0;
  EXPECT_THROW(source->ForEachBlock(
                   [&](const RowBlock& block, const RowAddress&) { rows_seen = block.end; }),
               Error);
  EXPECT_EQ(rows_seen, overlap() ? 0u : 8u);  // only the resident prefix
  EXPECT_EQ(Pass(*source), kSourceRows);
}

INSTANTIATE_TEST_SUITE_P(Engines, StreamedRowsFaultTest,
                         ::testing::Combine(::testing::Values(Kind::kUring, Kind::kPread),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == Kind::kUring ? "uring"
                                                                                      : "pread") +
                                  (std::get<1>(info.param) ? "_robw" : "_maxmemory");
                         });

}  // namespace
}  // namespace strata
