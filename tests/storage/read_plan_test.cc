#include "storage/read_plan.h"

#include <gtest/gtest.h>

#include "features/row_codec.h"

namespace strata {
namespace {

RowLayout Layout(uint64_t dim, FeatureDtype dtype) {
  RowLayout layout;
  layout.num_rows = 1 << 20;
  layout.dim = dim;
  layout.dtype = dtype;
  layout.stride = RowStrideBytes(dim, dtype);
  return layout;
}

ReadPlan Plan(std::vector<uint64_t> ids, const RowLayout& layout, uint32_t max_read,
              uint32_t alignment = 4096) {
  std::vector<uint32_t> keys(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) keys[i] = static_cast<uint32_t>(i);
  ReadPlan plan;
  PlanReads(ids, keys, {layout.stride, layout.row_bytes()}, {alignment, max_read, true}, plan);
  return plan;
}

TEST(ReadPlan, RowsSharingABlockBecomeOneRead) {
  // 128 float32 = 512-byte rows, 8 per block.
  ReadPlan plan = Plan({0, 3, 7, 8, 100}, Layout(128, FeatureDtype::kFloat32), 1 << 16);
  ASSERT_EQ(plan.reads.size(), 2u);
  EXPECT_EQ(plan.reads[0].offset, 0u);
  EXPECT_EQ(plan.reads[0].length, 8192u);  // blocks 0 and 1 (row 8 starts block 1)
  EXPECT_EQ(plan.reads[0].row_count, 4u);
  EXPECT_EQ(plan.rows[1].offset_in_read, 3u * 512);
  EXPECT_EQ(plan.rows[3].offset_in_read, 8u * 512);
  EXPECT_EQ(plan.reads[1].offset, 100u * 512 / 4096 * 4096);
  EXPECT_EQ(plan.rows[4].offset_in_read, 100u * 512 % 4096);
}

TEST(ReadPlan, CoalescedReadsRespectTheBound) {
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 1000; ++i) ids.push_back(i);
  ReadPlan plan = Plan(ids, Layout(128, FeatureDtype::kFloat32), 16384);
  for (const auto& read : plan.reads) {
    EXPECT_LE(read.length, 16384u);
    EXPECT_EQ(read.offset % 4096, 0u);
    EXPECT_EQ(read.length % 4096, 0u);
  }
  EXPECT_EQ(plan.reads.size(), 1000u * 512 / 16384 + (1000 * 512 % 16384 ? 1 : 0));
}

TEST(ReadPlan, MultiBlockRowsGetBlockAlignedReads) {
  // 1433 float32 = 5732 bytes, stride 8192: each row is two blocks.
  ReadPlan plan = Plan({2, 3, 9}, Layout(1433, FeatureDtype::kFloat32), 1 << 16);
  ASSERT_EQ(plan.reads.size(), 2u);
  EXPECT_EQ(plan.reads[0].offset, 2u * 8192);
  EXPECT_EQ(plan.reads[0].length, 8192u + 8192u);  // row 2 (2 blocks) then row 3 adjacent
  EXPECT_EQ(plan.reads[1].offset, 9u * 8192);
  EXPECT_EQ(plan.reads[1].length, 8192u);
}

TEST(ReadPlan, SectorAlignedReadsCoverOnlyTheRowsAndShortGaps) {
  // 256 float32 = 1 KiB rows, 4 per block. Rows 1 and 2 share block 0; row 9 starts 6 KiB
  // after row 2 ends (a separate read); row 12 starts 2 KiB after row 9 ends (joins it).
  ReadPlan plan = Plan({1, 2, 9, 12}, Layout(256, FeatureDtype::kFloat32), 1 << 16, 512);
  ASSERT_EQ(plan.reads.size(), 2u);
  EXPECT_EQ(plan.reads[0].offset, 1024u);
  EXPECT_EQ(plan.reads[0].length, 2048u);
  EXPECT_EQ(plan.reads[1].offset, 9u * 1024);
  EXPECT_EQ(plan.reads[1].length, 4u * 1024);
  EXPECT_EQ(plan.rows[3].offset_in_read, 3u * 1024);
}

TEST(ReadPlan, EveryRowLiesInsideItsRead) {
  for (uint32_t alignment : {512u, 4096u}) {
    auto layout = Layout(100, FeatureDtype::kFloat16);  // 200-byte rows, stride 256
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < 5000; i += 1 + i % 7) ids.push_back(i);
    ReadPlan plan = Plan(ids, layout, 8192, alignment);
    size_t row = 0;
    uint64_t previous_end = 0;
    for (const auto& read : plan.reads) {
      ASSERT_EQ(read.first_row, row);
      EXPECT_EQ(read.offset % alignment, 0u);
      EXPECT_EQ(read.length % alignment, 0u);
      EXPECT_LE(read.length, 8192u);
      EXPECT_GE(read.offset, previous_end);
      previous_end = read.offset + read.length;
      for (uint32_t r = 0; r < read.row_count; ++r, ++row) {
        uint64_t id = ids[plan.rows[row].key];
        EXPECT_EQ(read.offset + plan.rows[row].offset_in_read, layout.offset(id));
        EXPECT_LE(plan.rows[row].offset_in_read + layout.row_bytes(), read.length);
      }
    }
    EXPECT_EQ(row, ids.size());
  }
}

}  // namespace
}  // namespace strata
