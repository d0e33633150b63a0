// Multistage training's batches: the macro-batch graph is the subgraph induced on its
// partitions and the hubs, every training node is a seed once per pass, the same seed gives
// the same batches whatever the run-ahead, the buffers are sized within the budget, and a
// failed read or a dataset without partitions is one clear error.
#include "multistage/macro_batch_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "multistage/macro_batch_fixture.h"
#include "multistage/partition_loader.h"
#include "sampling/sampled_batch_expectations.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/feature_store.h"
#include "strata/generate.h"
#include "strata/partition.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

constexpr uint32_t kParts = 8;

class MacroBatchTest : public MacroBatchFixture {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    GenerateDataset(testing::SmallGraph(*dir_ / "in", 3000, 16, 4, 8, 21));
    PartitionOptions p;
    p.input = *dir_ / "in";
    p.out = *dir_ / "parts";
    p.parts = kParts;
    p.hub_fraction = 0.02;
    p.memory_budget_bytes = 64 << 20;
    PartitionDataset(p);
    // A third of the nodes hubs: a hub section larger than the partitions.
    p.out = *dir_ / "hub-heavy";
    p.hub_fraction = 0.3;
    PartitionDataset(p);
  }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override { Open(*dir_ / "parts"); }

  TrainOptions Options(uint32_t macro_batch, uint32_t reuse = 1) const {
    TrainOptions o;
    o.sampling.fanouts = {5, 5};
    o.sampling.batch_size = 50;
    o.seed = 3;
    o.multistage.method = MultistageMethod::kPartition;
    o.multistage.macro_batch = macro_batch;
    o.multistage.reuse = reuse;
    o.io_depth = 16;
    return o;
  }

  static ScratchDir* dir_;
};

ScratchDir* MacroBatchTest::dir_ = nullptr;

// `batch`'s graph is the subgraph of `graph` induced on its nodes, each node once.
void ExpectInducedGraph(const MacroBatch& batch, const CscGraph& graph) {
  const std::vector<uint64_t>& global = batch.global_of;
  const std::set<uint64_t> members(global.begin(), global.end());
  ASSERT_EQ(members.size(), global.size()) << "a node twice in the macro-batch";
  ASSERT_EQ(batch.graphs[0]->num_nodes(), global.size());
  for (uint64_t local = 0; local < global.size(); ++local) {
    std::multiset<uint64_t> expected, actual;
    const uint64_t v = global[local];
    for (uint64_t k = 0; k < graph.InDegree(v); ++k) {
      if (members.contains(graph.InNeighbor(v, k))) expected.insert(graph.InNeighbor(v, k));
    }
    for (uint64_t k = 0; k < batch.graphs[0]->InDegree(local); ++k) {
      actual.insert(global[batch.graphs[0]->InNeighbor(local, k)]);
    }
    ASSERT_EQ(actual, expected) << "node " << v;
  }
}

TEST_F(MacroBatchTest, GraphIsInducedOnThePartitionsAndTheHubs) {
  std::vector<bool> train(graph_->num_nodes(), false);
  for (uint64_t v : train_) train[v] = true;
  PartitionLoader loader(*dataset_, *graph_, train, 3, 8, 0, *budget_);
  auto store = OpenFeatureStore(*dataset_, FeatureStoreKind::kMemory, {}, *budget_);
  const uint32_t partitions[] = {5, 0, 2};
  std::unique_ptr<MacroBatch> batch = loader.LoadPartitions(partitions, 1);
  const std::vector<uint64_t>& global = batch->global_of;
  ExpectInducedGraph(*batch, *graph_);
  // Rows and training seeds follow their node.
  std::vector<float> rows(global.size() * 16);
  store->Gather(global, rows);
  for (uint64_t local = 0; local < global.size(); ++local) {
    ASSERT_EQ(std::memcmp(batch->row_of[local], rows.data() + local * 16, 16 * sizeof(float)), 0);
  }
  // The seeds are the training nodes of the three partitions, not the hubs outside them.
  const std::string raw = ReadWholeFile(dataset_->PathOf(kPartitionOffsetsFile));
  std::vector<uint64_t> offsets(raw.size() / 8);
  std::memcpy(offsets.data(), raw.data(), raw.size());
  std::vector<uint64_t> expected_seeds, seeds;
  for (uint64_t v : train_) {
    for (uint32_t p : partitions) {
      if (v >= offsets[p] && v < offsets[p + 1]) expected_seeds.push_back(v);
    }
  }
  for (uint64_t local : batch->train_local) seeds.push_back(global[local]);
  std::sort(seeds.begin(), seeds.end());
  std::sort(expected_seeds.begin(), expected_seeds.end());
  EXPECT_EQ(seeds, expected_seeds);
  EXPECT_GT(batch->bytes_read, 0u);
}

TEST_F(MacroBatchTest, EveryTrainingNodeIsASeedOncePerPass) {
  for (uint32_t reuse : {1u, 2u}) {
    MacroBatchSource source(*dataset_, *graph_, train_, Options(3, reuse), *budget_);
    std::map<uint64_t, int> seen;
    for (const ReadyBatch& ready : Epoch(source, 4)) {
      for (uint64_t v : ready.batch.seeds()) ++seen[v];
      ASSERT_EQ(ready.features.size(), ready.batch.input_nodes().size() * 16);
    }
    ASSERT_EQ(seen.size(), train_.size());
    for (const auto& [v, n] : seen) ASSERT_EQ(n, static_cast<int>(reuse)) << "node " << v;
  }
}

// Batch pieces cut each batch sampled inside a macro-batch: twice the batches, each pair's
// seeds the whole batch's, in order.
TEST_F(MacroBatchTest, PiecesCutTheBatchesOfEachMacroBatch) {
  TrainOptions o = Options(3);
  MacroBatchSource whole_source(*dataset_, *graph_, train_, o, *budget_);
  o.sampling.batch_pieces = 2;
  MacroBatchSource piece_source(*dataset_, *graph_, train_, o, *budget_);
  EXPECT_EQ(piece_source.batches_per_epoch(), 2 * whole_source.batches_per_epoch());
  const std::vector<ReadyBatch> whole = Epoch(whole_source, 1), pieces = Epoch(piece_source, 1);
  ASSERT_EQ(pieces.size(), 2 * whole.size());
  for (size_t b = 0; b < whole.size(); ++b) {
    std::vector<uint64_t> seeds = pieces[2 * b].batch.seeds();
    const std::vector<uint64_t> second = pieces[2 * b + 1].batch.seeds();
    seeds.insert(seeds.end(), second.begin(), second.end());
    EXPECT_EQ(seeds, whole[b].batch.seeds()) << "batch " << b;
    EXPECT_EQ(pieces[2 * b].macro_batch, whole[b].macro_batch);
  }
}

// Adaptive reuse takes, for each macro-batch, the first passes of a fixed reuse of 4: at least
// one and one only for the last macro-batch, whose successor there is no loading to wait for.
TEST_F(MacroBatchTest, AdaptiveReuseTakesTheFirstPassesOfFixedReuse) {
  auto by_macro_batch = [&](const TrainOptions& o) {
    MacroBatchSource source(*dataset_, *graph_, train_, o, *budget_);
    std::map<uint64_t, std::vector<std::vector<uint64_t>>> seeds;
    for (const ReadyBatch& ready : Epoch(source, 2)) {
      seeds[ready.macro_batch].push_back(ready.batch.seeds());
    }
    return seeds;
  };
  const auto fixed = by_macro_batch(Options(2, 4));
  TrainOptions o = Options(2, 4);
  o.multistage.adaptive_reuse = true;
  const auto adaptive = by_macro_batch(o);
  ASSERT_EQ(adaptive.size(), fixed.size());
  for (const auto& [m, batches] : adaptive) {
    SCOPED_TRACE(m);
    const std::vector<std::vector<uint64_t>>& all = fixed.at(m);
    const size_t per_pass = all.size() / 4;
    ASSERT_EQ(batches.size() % per_pass, 0u);
    ASSERT_GE(batches.size(), per_pass);
    if (m + 1 == fixed.size()) {
      EXPECT_EQ(batches.size(), per_pass);
    }
    EXPECT_TRUE(std::equal(batches.begin(), batches.end(), all.begin()));
  }
}

TEST_F(MacroBatchTest, SameSeedSameBatchesWhateverTheRunAhead) {
  ExpectRunAheadChangesNothing(Options(2), 1);
}

TEST_F(MacroBatchTest, BuffersAreChargedAndSizedToTheBudget) {
  const uint64_t before = budget_->used();
  {
    MacroBatchSource source(*dataset_, *graph_, train_, Options(0), *budget_);
    EXPECT_GE(source.macro_batch(), 1u);
    EXPECT_LE(source.macro_batch(), kParts);
    EXPECT_GT(budget_->used(), before);
  }
  EXPECT_EQ(budget_->used(), before);
  MemoryBudget tight(budget_->used() + (2 << 20));
  try {
    MacroBatchSource source(*dataset_, *graph_, train_, Options(kParts), tight);
    FAIL() << "eight partitions fitted in 2 MiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("--macro-batch 8 needs"), std::string::npos) << e.what();
  }
}

// Where the whole hub section does not fit a quarter of what the budget leaves, the loader
// keeps the hubs that fit, and a macro-batch is the graph induced on its partitions and those.
TEST_F(MacroBatchTest, HubsBeyondTheirShareOfTheBudgetLoadWithTheirPartitions) {
  Open(*dir_ / "hub-heavy");
  std::vector<bool> train(graph_->num_nodes(), false);
  const uint32_t partitions[] = {6};
  // The macro-batch's nodes: its partition's and the hubs outside it that the loader kept.
  auto macro_batch_nodes = [&](MemoryBudget& budget) {
    PartitionLoader loader(*dataset_, *graph_, train, 1, 8, 0, budget);
    std::unique_ptr<MacroBatch> batch = loader.LoadPartitions(partitions, 0);
    ExpectInducedGraph(*batch, *graph_);
    return batch->global_of.size();
  };
  MemoryBudget roomy(64 << 20);
  const uint64_t all = macro_batch_nodes(roomy);
  // The smallest budget that opens the loader keeps fewer hubs, and still loads.
  uint64_t low = 0, high = 64 << 20;
  while (high - low > 256) {
    const uint64_t mid = (low + high) / 2;
    MemoryBudget budget(mid);
    try {
      PartitionLoader loader(*dataset_, *graph_, train, 1, 8, 0, budget);
      high = mid;
    } catch (const Error&) {
      low = mid;
    }
  }
  MemoryBudget tight(high);
  EXPECT_LT(macro_batch_nodes(tight), all);
}

// The hub lists a macro-batch builds for the hubs outside its partitions stay within the bound
// its buffers are sized with, which is below the whole hub section.
TEST_F(MacroBatchTest, OutsideHubListsStayWithinTheSizingBound) {
  std::vector<bool> train(graph_->num_nodes(), false);
  PartitionLoader loader(*dataset_, *graph_, train, 1, 8, 0, *budget_);
  EXPECT_LT(loader.MaxKeptHubEdges(1), loader.MaxKeptHubEdges(kParts));
  const std::string raw = ReadWholeFile(dataset_->PathOf(kPartitionOffsetsFile));
  std::vector<uint64_t> offsets(raw.size() / 8);
  std::memcpy(offsets.data(), raw.data(), raw.size());
  uint64_t most = 0;
  for (uint32_t p = 0; p < kParts; ++p) {
    const uint32_t partitions[] = {p};
    std::unique_ptr<MacroBatch> batch = loader.LoadPartitions(partitions, 0);
    const CscGraph& g = *batch->graphs[0];
    // Local ids: the partition's nodes, then the hubs outside it.
    uint64_t kept = 0;
    for (uint64_t local = offsets[p + 1] - offsets[p]; local < g.num_nodes(); ++local) {
      kept += g.InDegree(local);
    }
    EXPECT_LE(kept, loader.MaxKeptHubEdges(1)) << "partition " << p;
    most = std::max(most, kept);
  }
  EXPECT_GT(most, 0u);
}

// The buffers are sized for the largest graph a macro-batch can build (the hub edges that many
// partitions can keep, not every hub edge): at the smallest budget that admits macro-batches
// of one partition, a whole epoch runs within it.
TEST_F(MacroBatchTest, AnEpochRunsAtTheSmallestBudgetThatAdmitsIt) {
  TrainOptions o = Options(1);
  o.max_run_ahead = 1;
  o.threads = 1;
  auto admits = [&](uint64_t limit) {
    MemoryBudget budget(limit);
    try {
      MacroBatchSource source(*dataset_, *graph_, train_, o, budget);
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  uint64_t low = 0, high = 64 << 20;
  ASSERT_TRUE(admits(high));
  while (high - low > 1024) {
    const uint64_t mid = (low + high) / 2;
    (admits(mid) ? high : low) = mid;
  }
  MemoryBudget smallest(high);
  MacroBatchSource source(*dataset_, *graph_, train_, o, smallest);
  std::vector<ReadyBatch> batches;
  EXPECT_NO_THROW(batches = Epoch(source, 0));
  EXPECT_FALSE(batches.empty());
}

// Two ranks take alternate macro-batches, disjoint, and as many batches each; a rank's batches
// are the one-rank run's batches of the same macro-batches.
TEST_F(MacroBatchTest, RanksTakeAlternateMacroBatchesAndEqualSteps) {
  for (const MultistageMethod method :
       {MultistageMethod::kPartition, MultistageMethod::kLargeBatch}) {
    SCOPED_TRACE(MultistageMethodName(method));
    TrainOptions one = Options(1, 2);
    one.multistage.method = method;
    MacroBatchSource whole(*dataset_, *graph_, train_, one, *budget_);
    std::map<uint64_t, std::vector<std::vector<uint64_t>>> seeds_of;  // macro-batch -> batches
    for (const ReadyBatch& b : Epoch(whole, 1)) seeds_of[b.macro_batch].push_back(b.batch.seeds());
    std::vector<size_t> steps;
    for (uint32_t rank : {0u, 1u}) {
      TrainOptions o = one;
      o.multistage.rank = rank;
      o.multistage.world_size = 2;
      MacroBatchSource source(*dataset_, *graph_, train_, o, *budget_);
      std::map<uint64_t, size_t> next;
      const std::vector<ReadyBatch> batches = Epoch(source, 1);
      for (const ReadyBatch& b : batches) {
        EXPECT_EQ(b.macro_batch % 2, rank);  // so the ranks' macro-batches are disjoint
        ASSERT_LT(next[b.macro_batch], seeds_of[b.macro_batch].size());
        EXPECT_EQ(b.batch.seeds(), seeds_of[b.macro_batch][next[b.macro_batch]++]);
      }
      steps.push_back(batches.size());
    }
    EXPECT_EQ(steps[0], steps[1]);
    EXPECT_GT(steps[0], 0u);
  }
}

TEST_F(MacroBatchTest, AFailedReadIsOneErrorFromNext) {
  const std::string copy = *dir_ / "truncated";
  std::filesystem::copy(*dir_ / "parts", copy, std::filesystem::copy_options::recursive);
  const Dataset dataset = Dataset::Open(copy);
  MacroBatchSource source(dataset, *graph_, train_, Options(2), *budget_);
  std::filesystem::resize_file(dataset.PathOf(kFeaturesFile), 0);
  auto stream = source.StartEpoch(0);
  EXPECT_THROW(
      {
        while (stream->Next()) {
        }
      },
      Error);
  stream.reset();
  std::filesystem::remove_all(copy);
}

TEST_F(MacroBatchTest, RefusesADatasetWithoutPartitions) {
  const Dataset plain = Dataset::Open(*dir_ / "in");
  MemoryBudget budget(256 << 20);
  const CscGraph graph(plain, budget);
  try {
    MacroBatchSource source(plain, graph, train_, Options(1), budget);
    FAIL() << "opened macro-batches of an unpartitioned dataset";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("strata partition"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
