// GroupedRowOffsets: every row's offset and every group's offsets equal the file's, over
// several read chunks and a last short group, from any row, with lengths of 1, 2 and 4 bytes;
// only its arrays charged; offsets that do not start at 0, decrease or stop short, and a row
// longer than planned or of 2^32 entries, are one input error naming the file.
#include "fullgraph/grouped_row_offsets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/random.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

void WriteOffsets(const std::string& path, const std::vector<uint64_t>& offsets) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(offsets.data()),
            static_cast<std::streamsize>(offsets.size() * sizeof(uint64_t)));
}

TEST(GroupedRowOffsets, EveryOffsetIsTheFilesOverSeveralReadChunks) {
  // 2^20 + 300 rows: two read chunks, the last group of 128 rows short.
  constexpr uint64_t kRows = (uint64_t{1} << 20) + 300;
  std::vector<uint64_t> offsets(kRows + 1, 0);
  Rng rng(3);
  for (uint64_t r = 0; r < kRows; ++r) offsets[r + 1] = offsets[r] + rng.Next() % 50;
  ScratchDir dir;
  WriteOffsets(dir / "indptr.bin", offsets);
  MemoryBudget budget(uint64_t{64} << 20);
  {
    const GroupedRowOffsets grouped(dir / "indptr.bin", kRows, offsets[kRows], 128, 49, budget,
                                    "test offsets");
    // Rows of at most 49 entries: a byte a row's length.
    EXPECT_EQ(budget.used(), GroupedRowOffsets::ChargedBytes(kRows, 128, 49));
    EXPECT_EQ(GroupedRowOffsets::ChargedBytes(kRows, 128, 49), kRows + 8 * (8195 + 1));
    for (uint64_t r = 0; r <= kRows; r += 7) ASSERT_EQ(grouped.Offset(r), offsets[r]) << r;
    EXPECT_EQ(grouped.Offset(kRows), offsets[kRows]);
    std::vector<uint64_t> group(129);
    for (uint64_t first = 0; first < kRows; first += 128 * 97) {
      grouped.Offsets(first, group);
      for (uint64_t i = 0; i < group.size(); ++i) ASSERT_EQ(group[i], offsets[first + i]);
    }
    const uint64_t last = kRows / 128 * 128;  // 44 rows
    group.resize(kRows - last + 1);
    grouped.Offsets(last, group);
    EXPECT_EQ(group.back(), offsets[kRows]);
    // From inside a group (an adjacency piece starts at any row), across the next one, and
    // from inside the last group to the end.
    group.resize(129);
    grouped.Offsets(100, group);
    for (uint64_t i = 0; i < group.size(); ++i) ASSERT_EQ(group[i], offsets[100 + i]) << i;
    group.resize(11);
    grouped.Offsets(kRows - 10, group);
    for (uint64_t i = 0; i < group.size(); ++i) ASSERT_EQ(group[i], offsets[kRows - 10 + i]) << i;
    group.resize(1);
    grouped.Offsets(kRows, group);
    EXPECT_EQ(group[0], offsets[kRows]);
    EXPECT_THROW(grouped.Offset(kRows + 1), Error);
    // Several groups at once (the trainer's sparse input groups are spans of 8): the last ends
    // at the file's end, past a short group.
    std::vector<uint64_t> span(kRows - 128 * 8190 + 1);
    grouped.Offsets(128 * 8190, span);
    for (uint64_t i = 0; i < span.size(); ++i) ASSERT_EQ(span[i], offsets[128 * 8190 + i]) << i;
    span.push_back(0);
    EXPECT_THROW(grouped.Offsets(128 * 8190, span), Error);  // past the end
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(GroupedRowOffsets, LengthsTakeTheBytesTheLongestRowNeeds) {
  EXPECT_EQ(GroupedRowOffsets::LengthBytes(0), 1u);
  EXPECT_EQ(GroupedRowOffsets::LengthBytes(255), 1u);
  EXPECT_EQ(GroupedRowOffsets::LengthBytes(256), 2u);
  EXPECT_EQ(GroupedRowOffsets::LengthBytes(65535), 2u);
  EXPECT_EQ(GroupedRowOffsets::LengthBytes(65536), 4u);
  ScratchDir dir;
  for (const uint64_t longest : {uint64_t{255}, uint64_t{256}, uint64_t{65535}, uint64_t{70000}}) {
    // 1000 rows in groups of 16, row 333 the longest, the others up to 300 entries.
    constexpr uint64_t kRows = 1000;
    std::vector<uint64_t> offsets(kRows + 1, 0);
    Rng rng(longest);
    for (uint64_t r = 0; r < kRows; ++r) {
      offsets[r + 1] =
          offsets[r] + (r == 333 ? longest : rng.Next() % std::min<uint64_t>(301, longest));
    }
    WriteOffsets(dir / "indptr.bin", offsets);
    MemoryBudget budget(uint64_t{64} << 20);
    const GroupedRowOffsets grouped(dir / "indptr.bin", kRows, offsets[kRows], 16, longest, budget,
                                    "test offsets");
    EXPECT_EQ(budget.used(), GroupedRowOffsets::ChargedBytes(kRows, 16, longest)) << longest;
    EXPECT_EQ(budget.used(),
              GroupedRowOffsets::LengthBytes(longest) * kRows + 8 * (kRows / 16 + 1 + 1));
    for (uint64_t r = 0; r <= kRows; ++r) ASSERT_EQ(grouped.Offset(r), offsets[r]) << longest;
    std::vector<uint64_t> run(kRows - 7 + 1);
    grouped.Offsets(7, run);
    for (uint64_t i = 0; i < run.size(); ++i) ASSERT_EQ(run[i], offsets[7 + i]) << longest;
  }
}

TEST(GroupedRowOffsets, NoRowsAreTheEndOffsetAlone) {
  ScratchDir dir;
  WriteOffsets(dir / "indptr.bin", {0});
  MemoryBudget budget(uint64_t{64} << 20);
  const GroupedRowOffsets grouped(dir / "indptr.bin", 0, 0, 128, 0, budget, "test offsets");
  EXPECT_EQ(budget.used(), GroupedRowOffsets::ChargedBytes(0, 128, 0));
  EXPECT_EQ(budget.used(), 8u);
  EXPECT_EQ(grouped.Offset(0), 0u);
}

TEST(GroupedRowOffsets, BadOffsetsAreOneErrorNamingTheFile) {
  ScratchDir dir;
  MemoryBudget budget(uint64_t{64} << 20);
  auto error = [&](const std::vector<uint64_t>& offsets, uint64_t rows, uint64_t end,
                   uint64_t longest = uint64_t{1} << 32) {
    WriteOffsets(dir / "indptr.bin", offsets);
    try {
      GroupedRowOffsets(dir / "indptr.bin", rows, end, 4, longest, budget, "test offsets");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      EXPECT_NE(std::string(e.what()).find("indptr.bin"), std::string::npos) << e.what();
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error({0, 2, 5, 9}, 3, 9), "accepted");
  EXPECT_NE(error({1, 2, 5, 9}, 3, 9).find("do not run from 0 to 9"), std::string::npos);
  EXPECT_NE(error({0, 2, 5, 8}, 3, 9).find("do not run from 0 to 9"), std::string::npos);
  EXPECT_NE(error({0, 6, 5, 9}, 3, 9).find("decrease at row 1"), std::string::npos);
  EXPECT_NE(error({0, 2, 5}, 3, 9).find("truncated"), std::string::npos);
  // A row longer than the plan measured: the file changed since.
  EXPECT_EQ(error({0, 2, 5, 9}, 3, 9, 4), "accepted");
  EXPECT_NE(error({0, 2, 5, 9}, 3, 9, 3).find("row 2 holds 4 entries, more than the 3"),
            std::string::npos);
  EXPECT_NE(error({0, 2, 5, uint64_t{1} << 32 | 5}, 3, uint64_t{1} << 32 | 5)
                .find("row 2 holds 2^32 entries or more"),
            std::string::npos);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace strata
