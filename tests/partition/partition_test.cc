// strata partition as a library call (PartitionDataset): the output verifies and records the
// quality of the partitioning its layout shows, GAP cuts fewer edges than random and METIS
// fewer than GAP, every method is deterministic, and options it cannot meet are refused.
#include "strata/partition.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "partition/partitioning.h"
#include "partition_fixture.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

constexpr uint32_t kParts = 6;

class PartitionDatasetTest : public GeneratedInputTest {
 protected:
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
};

TEST_F(PartitionDatasetTest, RecordsTheQualityOfThePartitioningItsLayoutShows) {
  const DatasetMeta written = PartitionDataset(Options("gap", PartitionMethod::kGap));
  const Dataset in = Dataset::Open(dir_ / "in");
  const Dataset out = Dataset::Open(dir_ / "gap");
  testing::VerifyDataset(out);
  ASSERT_TRUE(out.meta().partition.has_value());
  const PartitionMeta& meta = *out.meta().partition;
  EXPECT_EQ(meta.method, "gap");
  EXPECT_EQ(meta.parts, kParts);
  EXPECT_EQ(meta.hubs, kNodes * 2 / 100);
  EXPECT_EQ(meta.source, in.dir());
  EXPECT_EQ(out.meta().num_edges, in.meta().num_edges);
  EXPECT_EQ(written.partition->edge_cut_ratio, meta.edge_cut_ratio);

  // Partition p holds the new ids [offsets[p], offsets[p + 1]); measured on the output, that
  // partitioning has the quality meta.json records of the one measured on the input.
  const std::vector<uint64_t> offsets = ReadU64s(out, kPartitionOffsetsFile);
  ASSERT_EQ(offsets.size(), kParts + 1);
  ASSERT_EQ(offsets.front(), 0u);
  ASSERT_EQ(offsets.back(), kNodes);
  MemoryBudget budget(64 << 20);
  Partitioning layout{kParts, ChargedArray<uint32_t>(budget, kNodes, "layout partitioning")};
  for (uint32_t p = 0; p < kParts; ++p) {
    ASSERT_LE(offsets[p], offsets[p + 1]);
    for (uint64_t v = offsets[p]; v < offsets[p + 1]; ++v) layout.part_of[v] = p;
  }
  const CscGraph graph(out, budget);
  const ChargedArray<int32_t> labels = out.ReadLabels(budget);
  const PartitionQuality q =
      MeasurePartitioning(graph, layout, {labels.data(), labels.size()},
                          out.ReadSplit(Split::kTrain), out.meta().num_classes);
  EXPECT_DOUBLE_EQ(q.edge_cut_ratio, meta.edge_cut_ratio);
  EXPECT_DOUBLE_EQ(q.label_balance, meta.label_balance);
  EXPECT_EQ(q.max_part_nodes, meta.max_part_nodes);
  EXPECT_EQ(q.min_part_nodes, meta.min_part_nodes);
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

TEST_F(PartitionDatasetTest, MetisMinimisesTheCutButNotTheLabelImbalance) {
  const DatasetMeta metis = PartitionDataset(Options("metis", PartitionMethod::kMetis));
  const DatasetMeta gap = PartitionDataset(Options("gap", PartitionMethod::kGap));
  testing::VerifyDataset(Dataset::Open(dir_ / "metis"));
  EXPECT_LT(metis.partition->edge_cut_ratio, gap.partition->edge_cut_ratio);
  EXPECT_GT(metis.partition->label_balance, gap.partition->label_balance);
}

// Balance constraints as DistDGL uses them: with each class's training nodes balanced, METIS's
// parts hold the classes as the training set does, at a higher cut; with the training nodes
// balanced, each part holds its share of them.
TEST_F(PartitionDatasetTest, MetisBalanceConstraintsHoldTheirShares) {
  const DatasetMeta plain = PartitionDataset(Options("plain", PartitionMethod::kMetis));
  PartitionOptions o = Options("classes", PartitionMethod::kMetis);
  o.balance = MetisBalance::kClasses;
  const DatasetMeta classes = PartitionDataset(o);
  EXPECT_LT(classes.partition->label_balance, 0.5 * plain.partition->label_balance);
  EXPECT_GT(classes.partition->edge_cut_ratio, plain.partition->edge_cut_ratio);
  o = Options("train", PartitionMethod::kMetis);
  o.balance = MetisBalance::kTrain;
  PartitionDataset(o);
  const Dataset train = Dataset::Open(dir_ / "train");
  const std::vector<uint64_t> offsets = ReadU64s(train, kPartitionOffsetsFile);
  const std::vector<uint64_t> train_ids = train.ReadSplit(Split::kTrain);
  const double share = static_cast<double>(train_ids.size()) / kParts;
  for (uint32_t p = 0; p < kParts; ++p) {
    const auto in_part = std::count_if(train_ids.begin(), train_ids.end(), [&](uint64_t v) {
      return v >= offsets[p] && v < offsets[p + 1];
    });
    EXPECT_NEAR(static_cast<double>(in_part), share, 0.1 * share + 1) << p;
  }
}

TEST_F(PartitionDatasetTest, SameOptionsSameBytes) {
  for (PartitionMethod method :
       {PartitionMethod::kGap, PartitionMethod::kRandom, PartitionMethod::kMetis}) {
    PartitionDataset(Options("a", method));
    PartitionDataset(Options("b", method));
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

TEST_F(PartitionDatasetTest, RefusesOptionsItCannotMeetAndAPartitionedInput) {
  auto refusal = [](const PartitionOptions& o) -> std::string {
    try {
      PartitionDataset(o);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      return e.what();
    }
    return "no error";
  };
  PartitionOptions o = Options("out", PartitionMethod::kGap);
  o.parts = 0;
  EXPECT_EQ(refusal(o), "--parts must be between 1 and the number of nodes (3000), not 0");
  o.parts = kNodes + 1;
  EXPECT_EQ(refusal(o), "--parts must be between 1 and the number of nodes (3000), not 3001");
  o = Options("out", PartitionMethod::kGap);
  o.hub_fraction = 1;
  EXPECT_EQ(refusal(o), "--hubs must be a fraction in [0, 1)");
  o = Options("out", PartitionMethod::kGap);
  o.balance = MetisBalance::kTrain;
  EXPECT_EQ(refusal(o), "--balance is for --method metis");

  PartitionDataset(Options("gap", PartitionMethod::kGap));
  o = Options("out", PartitionMethod::kGap);
  o.input = dir_ / "gap";
  EXPECT_EQ(refusal(o), WithLocation("the input is already partitioned; partition the original "
                                     "dataset",
                                     o.input, {}));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}

}  // namespace
}  // namespace strata
