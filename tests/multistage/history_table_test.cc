// The historical embeddings' table: rows start as zeros and unstamped, a partition's rows
// round-trip through its sequential write and read without touching another partition's, and
// a gather of scattered nodes returns each node's row and stamp.
#include "multistage/history_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "storage/aligned_buffer.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

// Three partitions of uneven sizes; rows of 6 values (12 bytes): partitions' rows do not fill
// whole 4 KiB units, so each range's alignment matters.
const std::vector<uint64_t> kOffsets = {0, 700, 701, 2000};
constexpr uint64_t kValues = 6;

// A row whose values name the node and the write.
std::vector<uint16_t> PartitionRows(uint64_t first, uint64_t count, uint16_t write) {
  std::vector<uint16_t> rows(count * kValues);
  for (uint64_t i = 0; i < count; ++i) {
    for (uint64_t k = 0; k < kValues; ++k) {
      rows[i * kValues + k] = static_cast<uint16_t>((first + i) * 7 + k + write * 1000);
    }
  }
  return rows;
}

class HistoryTableTest : public ::testing::Test {
 protected:
  HistoryTableTest() : budget_(64 << 20), table_(kOffsets, kValues, dir_.path(), 8, budget_) {}

  // Writes partition p with rows named by `write`, stamped `step`.
  void Write(uint32_t p, uint16_t write, uint32_t step) {
    const uint64_t count = kOffsets[p + 1] - kOffsets[p];
    AlignedBuffer buffer(budget_, table_.PartitionBytes(p), "test");
    const std::vector<uint16_t> rows = PartitionRows(kOffsets[p], count, write);
    std::memcpy(buffer.data(), rows.data(), rows.size() * 2);
    table_.WritePartition(p, buffer.data(), std::vector<uint32_t>(count, step));
  }

  ScratchDir dir_;
  MemoryBudget budget_;
  HistoryTable table_;
};

TEST_F(HistoryTableTest, StartsAsZerosNeverWritten) {
  std::vector<uint64_t> nodes = {0, 699, 700, 1999};
  std::vector<uint16_t> rows(nodes.size() * kValues, 1);
  std::vector<uint32_t> stamps(nodes.size(), 0);
  table_.Gather(nodes, rows, stamps);
  for (uint16_t v : rows) EXPECT_EQ(v, 0);
  for (uint32_t s : stamps) EXPECT_EQ(s, HistoryTable::kNeverWritten);
}

TEST_F(HistoryTableTest, PartitionsRoundTripWithoutTouchingTheirNeighbours) {
  Write(0, 1, 10);
  Write(2, 2, 20);
  Write(1, 3, 30);
  Write(0, 4, 40);  // again: the second write wins
  for (uint32_t p = 0; p < 3; ++p) {
    const uint64_t count = kOffsets[p + 1] - kOffsets[p];
    AlignedBuffer buffer(budget_, table_.PartitionBytes(p), "test");
    table_.ReadPartition(p, buffer.data());
    const std::vector<uint16_t> expected = PartitionRows(kOffsets[p], count,
                                                         p == 0   ? 4
                                                         : p == 1 ? 3
                                                                  : 2);
    EXPECT_EQ(std::memcmp(buffer.data(), expected.data(), expected.size() * 2), 0) << p;
    for (uint32_t s : table_.PartitionStamps(p)) EXPECT_EQ(s, p == 0 ? 40u : p == 1 ? 30u : 20u);
  }
  EXPECT_EQ(table_.bytes_written(),
            2 * table_.PartitionBytes(0) + table_.PartitionBytes(1) + table_.PartitionBytes(2));
}

TEST_F(HistoryTableTest, GatherReturnsEachNodesRowAndStamp) {
  Write(0, 1, 5);
  Write(2, 2, 6);
  // Neighbours in one unit, nodes across partitions, a partition never written.
  std::vector<uint64_t> nodes = {0, 1, 2, 340, 699, 700, 701, 702, 1500, 1999};
  std::vector<uint16_t> rows(nodes.size() * kValues);
  std::vector<uint32_t> stamps(nodes.size());
  table_.Gather(nodes, rows, stamps);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const uint64_t v = nodes[i];
    const bool unwritten = v == 700;
    const std::vector<uint16_t> expected =
        unwritten ? std::vector<uint16_t>(kValues, 0) : PartitionRows(v, 1, v < 700 ? 1 : 2);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), rows.begin() + i * kValues)) << v;
    EXPECT_EQ(stamps[i], unwritten ? HistoryTable::kNeverWritten : v < 700 ? 5u : 6u) << v;
  }
}

TEST(HistoryTable, AMissingScratchDirectoryIsOneError) {
  MemoryBudget budget(64 << 20);
  try {
    HistoryTable table(kOffsets, kValues, "/nonexistent/scratch", 8, budget);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/scratch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("historical embeddings"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
