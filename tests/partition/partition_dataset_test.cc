// strata partition as a library call: the partitioned copy is a permutation of the input
// (every edge, feature row, label and split member present exactly once under the map), the
// hub section matches the rewritten graph, GAP's balance bounds hold, and both methods are
// deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "partition/gap_partitioner.h"
#include "partition/metis_partitioner.h"
#include "partition/random_partitioner.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/feature_store.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "strata/partition.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

constexpr uint64_t kNodes = 3000;
constexpr uint32_t kParts = 6;

std::vector<uint64_t> ReadIds(const Dataset& dataset, std::string_view file) {
  const std::string bytes = ReadWholeFile(dataset.PathOf(file));
  const uint32_t width = dataset.meta().node_id_bytes;
  std::vector<uint64_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = LoadNodeId(reinterpret_cast<const std::byte*>(bytes.data()) + i * width, width);
  }
  return ids;
}

std::vector<uint64_t> ReadU64(const Dataset& dataset, std::string_view file) {
  const std::string bytes = ReadWholeFile(dataset.PathOf(file));
  std::vector<uint64_t> values(bytes.size() / 8);
  std::memcpy(values.data(), bytes.data(), values.size() * 8);
  return values;
}

std::vector<float> Rows(const Dataset& dataset, const std::vector<uint64_t>& ids,
                        MemoryBudget& budget) {
  auto store = OpenFeatureStore(dataset, FeatureStoreKind::kMemory, {}, budget);
  std::vector<float> rows(ids.size() * dataset.meta().feature_dim);
  store->Gather(ids, rows);
  return rows;
}

class PartitionDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GenerateOptions g = testing::SmallGraph(dir_ / "in", kNodes, 24, 5, 8, 11);
    g.feature_dtype = FeatureDtype::kFloat16;  // rewritten without a round-trip loss
    GenerateDataset(g);
  }
  PartitionOptions Options(const std::string& out, PartitionMethod method) const {
    PartitionOptions o;
    o.input = dir_ / "in";
    o.out = dir_ / out;
    o.parts = kParts;
    o.method = method;
    o.hub_fraction = 0.02;
    o.seed = 5;
    o.memory_budget_bytes = 64 << 20;
    return o;
  }
  ScratchDir dir_;
};

TEST_F(PartitionDatasetTest, IsAPermutationOfTheInput) {
  const DatasetMeta written = PartitionDataset(Options("gap", PartitionMethod::kGap));
  const Dataset in = Dataset::Open(dir_ / "in");
  const Dataset out = Dataset::Open(dir_ / "gap");
  out.Verify();
  ASSERT_TRUE(out.meta().partition.has_value());
  EXPECT_EQ(out.meta().minor_version, kDatasetFormatMinorVersion);
  EXPECT_EQ(out.meta().partition->parts, kParts);
  EXPECT_EQ(out.meta().partition->hubs, kNodes * 2 / 100);
  EXPECT_EQ(out.meta().num_edges, in.meta().num_edges);

  // original_ids is a permutation, and each partition's ids are contiguous and ascending in
  // the input's order.
  const std::vector<uint64_t> original = ReadIds(out, kPartitionOriginalIdsFile);
  const std::vector<uint64_t> offsets = ReadU64(out, kPartitionOffsetsFile);
  ASSERT_EQ(original.size(), kNodes);
  ASSERT_EQ(offsets.size(), kParts + 1);
  EXPECT_EQ(offsets.front(), 0u);
  EXPECT_EQ(offsets.back(), kNodes);
  std::vector<uint64_t> sorted = original;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < kNodes; ++i) ASSERT_EQ(sorted[i], i);
  for (uint32_t p = 0; p < kParts; ++p) {
    ASSERT_LE(offsets[p], offsets[p + 1]);
    for (uint64_t i = offsets[p] + 1; i < offsets[p + 1]; ++i) {
      EXPECT_LT(original[i - 1], original[i]);
    }
  }
  std::vector<uint64_t> new_of(kNodes);
  for (uint64_t i = 0; i < kNodes; ++i) new_of[original[i]] = i;

  // Features and labels follow their node.
  MemoryBudget budget(256 << 20);
  std::vector<uint64_t> all(kNodes);
  for (uint64_t i = 0; i < kNodes; ++i) all[i] = i;
  EXPECT_EQ(Rows(out, all, budget), Rows(in, original, budget));
  const ChargedArray<int32_t> in_labels = in.ReadLabels(budget);
  const ChargedArray<int32_t> out_labels = out.ReadLabels(budget);
  for (uint64_t i = 0; i < kNodes; ++i) ASSERT_EQ(out_labels[i], in_labels[original[i]]);

  // Every edge once, under the map; lists sorted as the format requires.
  const CscGraph in_graph(in, budget), out_graph(out, budget);
  std::multiset<std::pair<uint64_t, uint64_t>> in_edges, out_edges;
  for (uint64_t v = 0; v < kNodes; ++v) {
    for (uint64_t k = 0; k < in_graph.InDegree(v); ++k) {
      in_edges.emplace(new_of[in_graph.InNeighbor(v, k)], new_of[v]);
    }
    for (uint64_t k = 0; k < out_graph.InDegree(v); ++k) {
      out_edges.emplace(out_graph.InNeighbor(v, k), v);
      if (k > 0) {
        EXPECT_LE(out_graph.InNeighbor(v, k - 1), out_graph.InNeighbor(v, k));
      }
    }
  }
  EXPECT_EQ(in_edges, out_edges);

  // Splits hold the same nodes.
  for (Split split : kAllSplits) {
    std::vector<uint64_t> mapped = in.ReadSplit(split);
    for (uint64_t& id : mapped) id = new_of[id];
    std::sort(mapped.begin(), mapped.end());
    EXPECT_EQ(out.ReadSplit(split), mapped) << SplitName(split);
  }

  // The hub section repeats the hubs' rows and in-neighbour lists of the rewritten dataset.
  const std::vector<uint64_t> hubs = ReadIds(out, kHubIdsFile);
  ASSERT_EQ(hubs.size(), out.meta().partition->hubs);
  EXPECT_TRUE(std::is_sorted(hubs.begin(), hubs.end()));
  const std::vector<uint64_t> hub_indptr = ReadU64(out, kHubIndptrFile);
  const std::vector<uint64_t> hub_indices = ReadIds(out, kHubIndicesFile);
  ASSERT_EQ(hub_indptr.size(), hubs.size() + 1);
  for (size_t h = 0; h < hubs.size(); ++h) {
    std::vector<uint64_t> expected;
    for (uint64_t k = 0; k < out_graph.InDegree(hubs[h]); ++k) {
      expected.push_back(out_graph.InNeighbor(hubs[h], k));
    }
    EXPECT_EQ(std::vector<uint64_t>(hub_indices.begin() + hub_indptr[h],
                                    hub_indices.begin() + hub_indptr[h + 1]),
              expected);
  }
  const std::string hub_rows = ReadWholeFile(out.PathOf(kHubFeaturesFile));
  const std::string all_rows = ReadWholeFile(out.PathOf(kFeaturesFile));
  const uint64_t stride = out.meta().row_stride_bytes;
  for (size_t h = 0; h < hubs.size(); ++h) {
    EXPECT_EQ(hub_rows.substr(h * stride, stride), all_rows.substr(hubs[h] * stride, stride));
  }
  EXPECT_EQ(written.partition->edge_cut_ratio, out.meta().partition->edge_cut_ratio);
}

TEST_F(PartitionDatasetTest, GapCutsFewerEdgesThanRandomAndBalancesLabels) {
  const DatasetMeta gap = PartitionDataset(Options("gap", PartitionMethod::kGap));
  const DatasetMeta random = PartitionDataset(Options("random", PartitionMethod::kRandom));
  // The SBM's classes are its communities: GAP keeps many more edges inside than the 1/k
  // that random keeps.
  EXPECT_LT(gap.partition->edge_cut_ratio, 0.7 * random.partition->edge_cut_ratio);
  EXPECT_NEAR(random.partition->edge_cut_ratio, 1.0 - 1.0 / kParts, 0.05);
  EXPECT_LT(gap.partition->label_balance, 0.2);
  EXPECT_LE(random.partition->max_part_nodes - random.partition->min_part_nodes, 1u);
}

TEST_F(PartitionDatasetTest, SameOptionsSameBytes) {
  for (PartitionMethod method :
       {PartitionMethod::kGap, PartitionMethod::kRandom, PartitionMethod::kMetis}) {
    PartitionDataset(Options("a", method));
    PartitionOptions again = Options("b", method);
    PartitionDataset(again);
    const DatasetMeta a = Dataset::Open(dir_ / "a").meta();
    const DatasetMeta b = Dataset::Open(dir_ / "b").meta();
    ASSERT_EQ(a.files.size(), b.files.size());
    for (const auto& [name, digest] : a.files) {
      EXPECT_EQ(digest.xxh64, b.files.at(name).xxh64) << name;
    }
    std::filesystem::remove_all(dir_ / "a");
    std::filesystem::remove_all(dir_ / "b");
  }
}

// The feature rows move by sequential passes over the input, as many as the budget needs, or
// by a random read per row where that many passes would cost more; neither shows in the output.
TEST_F(PartitionDatasetTest, RowPassesAndRandomReadsWriteTheSameBytes) {
  PartitionDataset(Options("one", PartitionMethod::kGap));
  const DatasetMeta one = Dataset::Open(dir_ / "one").meta();
  const uint64_t stride = one.row_stride_bytes;
  for (uint64_t pass_bytes : {uint64_t{1}, 61 * stride, stride * kNodes / 3}) {  // reads, 50, 3
    PartitionOptions o = Options("passes", PartitionMethod::kGap);
    o.row_pass_bytes = pass_bytes;
    PartitionDataset(o);
    const DatasetMeta passes = Dataset::Open(dir_ / "passes").meta();
    for (const auto& [name, digest] : one.files) {
      EXPECT_EQ(digest.xxh64, passes.files.at(name).xxh64) << name << ", " << pass_bytes;
    }
    std::filesystem::remove_all(dir_ / "passes");
  }
}

TEST_F(PartitionDatasetTest, GapRespectsTheCapacityOfEveryLabelGroup) {
  const Dataset in = Dataset::Open(dir_ / "in");
  MemoryBudget budget(64 << 20);
  const CscGraph graph(in, budget);
  const ChargedArray<int32_t> labels = in.ReadLabels(budget);
  const std::vector<uint64_t> train = in.ReadSplit(Split::kTrain);
  const uint32_t classes = in.meta().num_classes;
  const ChargedArray<uint32_t> groups =
      LabelGroups({labels.data(), labels.size()}, train, classes, budget);
  for (double imbalance : {1.0, 1.05, 1.5}) {
    for (uint32_t parts : {1u, 7u, 64u}) {
      SCOPED_TRACE(::testing::Message() << parts << " parts, imbalance " << imbalance);
      GapOptions o;
      o.parts = parts;
      o.imbalance = imbalance;
      const Partitioning p =
          GapPartition(graph, {groups.data(), groups.size()}, classes + 1, o, budget);
      std::vector<uint64_t> size(classes + 1, 0);
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> count;
      for (uint64_t v = 0; v < kNodes; ++v) {
        ASSERT_LT(p.part_of[v], parts);
        ++size[groups[v]];
        ++count[{groups[v], p.part_of[v]}];
      }
      for (const auto& [key, n] : count) {
        const double capacity = std::ceil(imbalance * size[key.first] / parts);
        EXPECT_LE(n, capacity) << "group " << key.first << " partition " << key.second;
      }
    }
  }
}

TEST_F(PartitionDatasetTest, MetisMinimisesTheCutButNotTheLabelImbalance) {
  const DatasetMeta metis = PartitionDataset(Options("metis", PartitionMethod::kMetis));
  const DatasetMeta gap = PartitionDataset(Options("gap", PartitionMethod::kGap));
  Dataset::Open(dir_ / "metis").Verify();
  EXPECT_LT(metis.partition->edge_cut_ratio, gap.partition->edge_cut_ratio);
  EXPECT_GT(metis.partition->label_balance, gap.partition->label_balance);
}

TEST_F(PartitionDatasetTest, MetisBeyondTheBudgetIsRefusedInOneLine) {
  const Dataset in = Dataset::Open(dir_ / "in");
  MemoryBudget budget(8 << 20);
  const CscGraph graph(in, budget);
  MemoryBudget small(MetisMemoryEstimate(graph) - 1);
  try {
    MetisPartition(graph, kParts, 0, small);
    FAIL() << "METIS ran beyond the budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--method metis"), std::string::npos) << e.what();
  }
}

TEST(RandomPartition, SizesDifferByAtMostOne) {
  MemoryBudget budget(1 << 20);
  for (uint64_t nodes : {1u, 10u, 1001u}) {
    for (uint32_t parts : {1u, 3u, 10u}) {
      if (parts > nodes) continue;
      const Partitioning p = RandomPartition(nodes, parts, 9, budget);
      std::vector<uint64_t> size(parts, 0);
      for (uint64_t v = 0; v < nodes; ++v) ++size[p.part_of[v]];
      EXPECT_LE(
          *std::max_element(size.begin(), size.end()) - *std::min_element(size.begin(), size.end()),
          1u);
    }
  }
}

}  // namespace
}  // namespace strata
