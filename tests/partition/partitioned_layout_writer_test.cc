// WritePartitionedLayout with a partitioning chosen by hand, one partition left empty: new ids
// run by partition, then by input id; every row, label, split member and edge follows its node;
// the hub section repeats the hubs' rows and in-neighbour lists; and however the rows are moved
// (one pass, many passes, a random read each), the bytes written are the same.
#include "partition/partitioned_layout_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dataset/dataset_writer.h"
#include "partition_fixture.h"
#include "storage/file.h"
#include "strata/graph.h"

namespace strata {
namespace {

constexpr uint32_t kLayoutParts = 4;

// Input ids, not sorted: the writer orders the hubs by their new ids.
constexpr uint64_t kHubs[] = {2999, 0, 1234};

class PartitionedLayoutWriterTest : public GeneratedInputTest {
 protected:
  PartitionedLayoutWriterTest()
      : budget_(64 << 20),
        partitioning_{kLayoutParts, ChargedArray<uint32_t>(budget_, kNodes, "test partitioning")} {
    // Partitions 0, 1 and 3, interleaved in the input's order; partition 2 stays empty.
    for (uint64_t v = 0; v < kNodes; ++v) {
      const uint32_t r = (v * 5 + v / 7) % 3;
      partitioning_.part_of[v] = r == 2 ? 3 : r;
    }
  }

  // Writes the partitioned copy of the input to `out` and opens it.
  Dataset Write(const std::string& out, uint64_t row_pass_bytes = 0) {
    const Dataset input = Dataset::Open(dir_ / "in");
    const CscGraph graph(input, budget_);
    DatasetWriter writer(dir_ / out, /*replace_existing=*/false);
    writer.MakeSubdir("partition");
    WritePartitionedLayout(input, graph, partitioning_, kHubs, row_pass_bytes, writer, budget_,
                           nullptr);
    PartitionMeta meta;
    meta.method = "random";
    meta.parts = kLayoutParts;
    meta.hubs = std::size(kHubs);
    writer.meta().partition = meta;
    writer.Publish();
    return Dataset::Open(dir_ / out);
  }

  // The input ids in new-id order: partition by partition, ascending inside each.
  std::vector<uint64_t> ExpectedInputIds() const {
    std::vector<uint64_t> ids;
    for (uint32_t p = 0; p < kLayoutParts; ++p) {
      for (uint64_t v = 0; v < kNodes; ++v) {
        if (partitioning_.part_of[v] == p) ids.push_back(v);
      }
    }
    return ids;
  }

  // new id of every input id.
  std::vector<uint64_t> NewIds() const {
    const std::vector<uint64_t> input_of = ExpectedInputIds();
    std::vector<uint64_t> new_of(kNodes);
    for (uint64_t i = 0; i < kNodes; ++i) new_of[input_of[i]] = i;
    return new_of;
  }

  MemoryBudget budget_;
  Partitioning partitioning_;
};

TEST_F(PartitionedLayoutWriterTest, NumbersNodesByPartitionThenByInputId) {
  const Dataset out = Write("out");
  testing::VerifyDataset(out);
  EXPECT_EQ(out.meta().minor_version, kDatasetFormatMinorVersion);
  EXPECT_EQ(ReadNodeIds(out, kPartitionOriginalIdsFile), ExpectedInputIds());
  uint64_t sizes[kLayoutParts] = {};
  for (uint64_t v = 0; v < kNodes; ++v) ++sizes[partitioning_.part_of[v]];
  ASSERT_EQ(sizes[2], 0u);
  EXPECT_EQ(ReadU64s(out, kPartitionOffsetsFile),
            (std::vector<uint64_t>{0, sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1], kNodes}));
}

TEST_F(PartitionedLayoutWriterTest, RowsLabelsAndSplitsFollowTheirNode) {
  const Dataset in = Dataset::Open(dir_ / "in");
  const Dataset out = Write("out");
  const std::vector<uint64_t> input_of = ExpectedInputIds();
  const uint64_t stride = in.meta().row_stride_bytes;
  ASSERT_EQ(out.meta().row_stride_bytes, stride);
  EXPECT_EQ(out.meta().feature_dtype, FeatureDtype::kFloat16);
  const std::string in_rows = ReadWholeFile(in.PathOf(kFeaturesFile));
  const std::string out_rows = ReadWholeFile(out.PathOf(kFeaturesFile));
  ASSERT_EQ(out_rows.size(), in_rows.size());
  const ChargedArray<int32_t> in_labels = in.ReadLabels(budget_);
  const ChargedArray<int32_t> out_labels = out.ReadLabels(budget_);
  for (uint64_t i = 0; i < kNodes; ++i) {
    ASSERT_EQ(out_rows.substr(i * stride, stride), in_rows.substr(input_of[i] * stride, stride))
        << "row " << i;
    ASSERT_EQ(out_labels[i], in_labels[input_of[i]]) << "node " << i;
  }
  const std::vector<uint64_t> new_of = NewIds();
  for (Split split : kAllSplits) {
    std::vector<uint64_t> expected = in.ReadSplit(split);
    for (uint64_t& id : expected) id = new_of[id];
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(out.ReadSplit(split), expected) << SplitName(split);
  }
}

TEST_F(PartitionedLayoutWriterTest, EveryEdgeOnceUnderTheNewIds) {
  const Dataset in = Dataset::Open(dir_ / "in");
  const Dataset out = Write("out");
  ASSERT_EQ(out.meta().num_edges, in.meta().num_edges);
  const std::vector<uint64_t> new_of = NewIds();
  const CscGraph in_graph(in, budget_), out_graph(out, budget_);
  std::multiset<std::pair<uint64_t, uint64_t>> expected, written;
  for (uint64_t v = 0; v < kNodes; ++v) {
    for (uint64_t k = 0; k < in_graph.InDegree(v); ++k) {
      expected.emplace(new_of[in_graph.InNeighbor(v, k)], new_of[v]);
    }
    for (uint64_t k = 0; k < out_graph.InDegree(v); ++k) {
      written.emplace(out_graph.InNeighbor(v, k), v);
      if (k > 0) {
        ASSERT_LE(out_graph.InNeighbor(v, k - 1), out_graph.InNeighbor(v, k));
      }
    }
  }
  EXPECT_EQ(written, expected);
}

TEST_F(PartitionedLayoutWriterTest, HubSectionHoldsTheHubsRowsAndInNeighbours) {
  const Dataset out = Write("out");
  const std::vector<uint64_t> new_of = NewIds();
  std::vector<uint64_t> expected_hubs;
  for (uint64_t hub : kHubs) expected_hubs.push_back(new_of[hub]);
  std::sort(expected_hubs.begin(), expected_hubs.end());
  const std::vector<uint64_t> hubs = ReadNodeIds(out, kHubIdsFile);
  ASSERT_EQ(hubs, expected_hubs);

  const CscGraph graph(out, budget_);
  const std::vector<uint64_t> indptr = ReadU64s(out, kHubIndptrFile);
  const std::vector<uint64_t> indices = ReadNodeIds(out, kHubIndicesFile);
  ASSERT_EQ(indptr.size(), hubs.size() + 1);
  EXPECT_EQ(indptr.front(), 0u);
  EXPECT_EQ(indptr.back(), indices.size());
  const std::string hub_rows = ReadWholeFile(out.PathOf(kHubFeaturesFile));
  const std::string rows = ReadWholeFile(out.PathOf(kFeaturesFile));
  const uint64_t stride = out.meta().row_stride_bytes;
  // Zero-padded to whole blocks, as features.bin is.
  ASSERT_EQ(hub_rows.size(), (hubs.size() * stride + kBlockBytes - 1) / kBlockBytes * kBlockBytes);
  for (size_t h = 0; h < hubs.size(); ++h) {
    std::vector<uint64_t> neighbours;
    for (uint64_t k = 0; k < graph.InDegree(hubs[h]); ++k) {
      neighbours.push_back(graph.InNeighbor(hubs[h], k));
    }
    EXPECT_EQ(std::vector<uint64_t>(indices.begin() + indptr[h], indices.begin() + indptr[h + 1]),
              neighbours)
        << "hub " << hubs[h];
    EXPECT_EQ(hub_rows.substr(h * stride, stride), rows.substr(hubs[h] * stride, stride))
        << "hub " << hubs[h];
  }
}

// The feature rows move by sequential passes over the input, as many as the budget needs, or
// by a random read per row where that many passes would cost more; neither shows in the output.
TEST_F(PartitionedLayoutWriterTest, RowPassesAndRandomReadsWriteTheSameBytes) {
  const DatasetMeta one = Write("one").meta();
  const uint64_t stride = one.row_stride_bytes;
  for (uint64_t pass_bytes : {uint64_t{1}, 61 * stride, stride * kNodes / 3}) {  // reads, 50, 3
    const DatasetMeta passes = Write("passes", pass_bytes).meta();
    for (const auto& [name, digest] : one.files) {
      EXPECT_EQ(digest.xxh64, passes.files.at(name).xxh64) << name << ", " << pass_bytes;
    }
    std::filesystem::remove_all(dir_ / "passes");
  }
}

}  // namespace
}  // namespace strata
