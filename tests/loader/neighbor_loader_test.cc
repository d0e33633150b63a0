#include "strata/neighbor_loader.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "minibatch/batch_source.h"
#include "multistage/macro_batch_source.h"
#include "sampling/sampled_batch_expectations.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

constexpr uint64_t kDim = 12;

class NeighborLoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    GenerateOptions g = testing::SmallGraph(*dir_ / "ds", 4000, kDim, 5, 8, 3);
    g.train_ratio = 0.3;
    GenerateDataset(g);
  }
  static void TearDownTestSuite() { delete dir_; }

  static LoaderOptions Options(FeatureStoreKind store) {
    LoaderOptions o;
    o.dataset = *dir_ / "ds";
    o.fanouts = {5, 3};
    o.batch_size = 128;
    o.seed = 11;
    o.features.store = store;
    o.memory_budget_bytes = uint64_t{64} << 20;
    o.max_run_ahead = 3;
    return o;
  }

  static testing::ScratchDir* dir_;
};
testing::ScratchDir* NeighborLoaderTest::dir_ = nullptr;

// The loader hands out `strata train`'s batches: the sampler built as the trainer builds it,
// with the features the in-memory store gathers and the labels of the seeds.
TEST_F(NeighborLoaderTest, BatchesAreTheTrainersWithTheirFeaturesAndLabels) {
  const LoaderOptions o = Options(FeatureStoreKind::kDirect);
  NeighborLoader loader(o);
  const Dataset& dataset = loader.dataset();
  MemoryBudget budget(uint64_t{64} << 20);
  CscGraph graph(dataset, budget);
  NeighborSampler trainer_sampler(graph, dataset.ReadSplit(Split::kTrain), o.fanouts, o.batch_size,
                                  o.seed, budget, 2);
  std::unique_ptr<FeatureStore> memory =
      OpenFeatureStore(dataset, FeatureStoreKind::kMemory, {}, budget);
  const ChargedArray<int32_t> labels = dataset.ReadLabels(budget);
  ASSERT_EQ(loader.batches_per_epoch(), trainer_sampler.batches_per_epoch());
  for (uint64_t epoch : {0, 2}) {
    loader.StartEpoch(epoch);
    uint64_t b = 0;
    while (std::optional<LoaderBatch> batch = loader.Next()) {
      SCOPED_TRACE(::testing::Message() << "epoch " << epoch << " batch " << b);
      ExpectSameBatch(batch->batch, trainer_sampler.Sample(epoch, b));
      const std::vector<uint64_t>& input = batch->batch.input_nodes();
      std::vector<float> expected(input.size() * kDim);
      memory->Gather(input, expected);
      ASSERT_EQ(
          std::vector<float>(batch->features.data(), batch->features.data() + expected.size()),
          expected);
      const std::vector<uint64_t> seeds = batch->batch.seeds();
      ASSERT_EQ(batch->labels.size(), seeds.size());
      for (size_t i = 0; i < seeds.size(); ++i) EXPECT_EQ(batch->labels[i], labels[seeds[i]]);
      ++b;
    }
    EXPECT_EQ(b, loader.batches_per_epoch());
    EXPECT_FALSE(loader.Next().has_value());
  }
}

TEST_F(NeighborLoaderTest, StoresAndRunAheadGiveTheSameBatches) {
  LoaderOptions mmap = Options(FeatureStoreKind::kMmap);
  mmap.max_run_ahead = 1;
  NeighborLoader a(Options(FeatureStoreKind::kMemory));
  NeighborLoader b(mmap);
  a.StartEpoch(1);
  b.StartEpoch(1);
  while (std::optional<LoaderBatch> x = a.Next()) {
    std::optional<LoaderBatch> y = b.Next();
    ASSERT_TRUE(y.has_value());
    ExpectSameBatch(x->batch, y->batch);
    const size_t n = x->batch.input_nodes().size() * kDim;
    EXPECT_TRUE(std::equal(x->features.data(), x->features.data() + n, y->features.data()));
  }
  EXPECT_FALSE(b.Next().has_value());
}

TEST_F(NeighborLoaderTest, UnshuffledTestSplitInTheSplitsOrder) {
  LoaderOptions o = Options(FeatureStoreKind::kMemory);
  o.split = Split::kTest;
  o.order.shuffle = false;
  o.fanouts = {-1, -1};
  NeighborLoader loader(o);
  const std::vector<uint64_t> test = loader.dataset().ReadSplit(Split::kTest);
  loader.StartEpoch(0);
  std::vector<uint64_t> seen;
  while (std::optional<LoaderBatch> batch = loader.Next()) {
    const std::vector<uint64_t> seeds = batch->batch.seeds();
    seen.insert(seen.end(), seeds.begin(), seeds.end());
  }
  EXPECT_EQ(seen, test);
}

// Stopping mid-epoch (a `break` in Python) releases the pipeline's batches; a new epoch starts
// cleanly, and a batch the caller still holds keeps its charge until it is destroyed.
TEST_F(NeighborLoaderTest, StoppingMidEpochReleasesWhatThePipelineHeld) {
  NeighborLoader loader(Options(FeatureStoreKind::kDirect));
  const uint64_t idle = loader.budget().used();
  loader.StartEpoch(0);
  std::optional<LoaderBatch> held = loader.Next();
  ASSERT_TRUE(held.has_value());
  loader.StopEpoch();
  EXPECT_EQ(loader.budget().used(), idle + held->features.size() * sizeof(float));
  held.reset();
  EXPECT_EQ(loader.budget().used(), idle);
  EXPECT_FALSE(loader.Next().has_value());
  loader.StartEpoch(1);
  EXPECT_TRUE(loader.Next().has_value());
}

TEST_F(NeighborLoaderTest, NextWithAPollDeliversTheWholeEpoch) {
  NeighborLoader loader(Options(FeatureStoreKind::kMemory));
  loader.StartEpoch(0);
  uint64_t batches = 0;
  while (loader.Next([] {})) ++batches;
  EXPECT_EQ(batches, loader.batches_per_epoch());
}

// Multistage loading hands out `strata train --multistage`'s batches: those of the macro-batch
// source built from the same options, with the rows of the features file.
TEST_F(NeighborLoaderTest, MultistageBatchesAreTheMacroBatchSources) {
  LoaderOptions o = Options(FeatureStoreKind::kDirect);
  o.multistage.method = MultistageMethod::kLargeBatch;
  o.multistage.macro_batch = 3;
  o.multistage.reuse = 2;
  NeighborLoader loader(o);
  EXPECT_EQ(loader.macro_batch(), 3u);
  const Dataset& dataset = loader.dataset();
  MemoryBudget budget(uint64_t{64} << 20);
  CscGraph graph(dataset, budget);
  TrainOptions run;
  run.sampling.fanouts = o.fanouts;
  run.sampling.batch_size = o.batch_size;
  run.multistage = o.multistage;
  run.seed = o.seed;
  run.threads = 1;
  run.max_run_ahead = 1;
  MacroBatchSource source(dataset, graph, dataset.ReadSplit(Split::kTrain), run, budget);
  std::unique_ptr<FeatureStore> memory =
      OpenFeatureStore(dataset, FeatureStoreKind::kMemory, {}, budget);
  std::unique_ptr<BatchStream> expected = source.StartEpoch(1);
  loader.StartEpoch(1);
  uint64_t batches = 0;
  while (std::optional<LoaderBatch> batch = loader.Next()) {
    std::optional<ReadyBatch> want = expected->Next();
    ASSERT_TRUE(want.has_value());
    ExpectSameBatch(batch->batch, want->batch);
    EXPECT_EQ(batch->macro_batch, want->macro_batch);
    const std::vector<uint64_t>& input = batch->batch.input_nodes();
    std::vector<float> rows(input.size() * kDim);
    memory->Gather(input, rows);
    ASSERT_TRUE(std::equal(rows.begin(), rows.end(), batch->features.data()));
    ++batches;
  }
  EXPECT_FALSE(expected->Next().has_value());
  const EpochReport stats = loader.epoch_stats();
  ASSERT_TRUE(stats.pipeline.multistage.has_value());
  EXPECT_GT(stats.pipeline.multistage->macro_batches, 0u);
  EXPECT_EQ(stats.pipeline.multistage->passes, 2 * stats.pipeline.multistage->macro_batches);
  EXPECT_EQ(stats.batches, batches);
  EXPECT_GT(batches, 0u);
}

// With an output region (the Python loader's pinned buffers) every batch's features lie in
// it, the values are those of the loader without one, and the region is charged once.
TEST_F(NeighborLoaderTest, OutputArenaHoldsEveryBatchsFeaturesUnchanged) {
  for (const bool multistage : {false, true}) {
    SCOPED_TRACE(multistage ? "multistage" : "neighbour sampling");
    LoaderOptions plain = Options(FeatureStoreKind::kDirect);
    if (multistage) {
      plain.multistage.method = MultistageMethod::kLargeBatch;
      plain.multistage.macro_batch = 3;
    }
    LoaderOptions pinned = plain;
    pinned.output_arena_batches = 2;
    NeighborLoader a(plain);
    NeighborLoader b(pinned);
    const auto [base, bytes] = b.output_arena();
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(a.output_arena().second, 0u);
    EXPECT_GE(b.budget().used(), bytes);
    a.StartEpoch(0);
    b.StartEpoch(0);
    uint64_t batches = 0;
    while (std::optional<LoaderBatch> x = a.Next()) {
      std::optional<LoaderBatch> y = b.Next();
      ASSERT_TRUE(y.has_value());
      ExpectSameBatch(x->batch, y->batch);
      const auto* rows = reinterpret_cast<const std::byte*>(y->features.data());
      EXPECT_TRUE(y->features.in_arena());
      EXPECT_TRUE(rows >= base && rows + y->features.size() * sizeof(float) <= base + bytes);
      EXPECT_TRUE(std::equal(x->features.data(), x->features.data() + x->features.size(),
                             y->features.data()));
      ++batches;
    }
    EXPECT_FALSE(b.Next().has_value());
    EXPECT_GT(batches, 1u);
  }
}

// A consumer that keeps every batch eventually holds the whole region: the loader cannot make
// the next batch, and Next says so instead of waiting forever.
TEST_F(NeighborLoaderTest, HoldingTheWholeOutputArenaIsAnInputError) {
  LoaderOptions o = Options(FeatureStoreKind::kMemory);
  uint64_t widest = 0;
  {
    NeighborLoader sizing(o);
    sizing.StartEpoch(0);
    while (std::optional<LoaderBatch> batch = sizing.Next()) {
      widest = std::max<uint64_t>(widest, batch->features.size() * sizeof(float));
    }
  }
  o.output_arena_bytes = widest * 3 / 2;
  NeighborLoader loader(o);
  loader.StartEpoch(0);
  std::vector<LoaderBatch> held;
  try {
    while (std::optional<LoaderBatch> batch = loader.Next()) held.push_back(std::move(*batch));
    FAIL() << "the epoch ended with every batch held";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("held by batches"), std::string::npos) << e.what();
  }
  EXPECT_GE(held.size(), 1u);
  // Dropping them lets the epoch go on.
  held.clear();
  EXPECT_TRUE(loader.Next().has_value());
}

// Rows the consumer holds (a GPU cache) are left out: a batch's features are the other input
// nodes' rows, at the positions `gathered` names, equal to the full batch's; the same batches
// otherwise. LeaveOutRows with no ids brings every row back.
TEST_F(NeighborLoaderTest, LeftOutRowsAreNeitherReadNorHandedOut) {
  for (const bool multistage : {false, true}) {
    SCOPED_TRACE(multistage ? "multistage" : "neighbour sampling");
    LoaderOptions o = Options(FeatureStoreKind::kDirect);
    if (multistage) {
      o.multistage.method = MultistageMethod::kLargeBatch;
      o.multistage.macro_batch = 3;
    }
    NeighborLoader full(o);
    NeighborLoader partial(o);
    const std::vector<uint64_t> hot = partial.HottestNodes(HotnessPolicy::kDegree, 500);
    ASSERT_EQ(hot.size(), 500u);
    partial.LeaveOutRows(hot);
    const std::set<uint64_t> left_out(hot.begin(), hot.end());
    full.StartEpoch(0);
    partial.StartEpoch(0);
    uint64_t rows_left_out = 0;
    while (std::optional<LoaderBatch> x = full.Next()) {
      std::optional<LoaderBatch> y = partial.Next();
      ASSERT_TRUE(y.has_value());
      ExpectSameBatch(x->batch, y->batch);
      ASSERT_TRUE(y->partial);
      const std::vector<uint64_t>& input = y->batch.input_nodes();
      ASSERT_EQ(y->features.size(), y->gathered.size() * kDim);
      size_t next = 0;
      for (uint32_t i = 0; i < input.size(); ++i) {
        const bool gathered = next < y->gathered.size() && y->gathered[next] == i;
        ASSERT_NE(gathered, left_out.count(input[i]) == 1) << "input " << i;
        if (!gathered) continue;
        EXPECT_TRUE(std::equal(y->features.data() + next * kDim,
                               y->features.data() + (next + 1) * kDim,
                               x->features.data() + i * kDim));
        ++next;
      }
      rows_left_out += input.size() - y->gathered.size();
    }
    EXPECT_GT(rows_left_out, 0u);
    partial.LeaveOutRows({});
    partial.StartEpoch(0);
    std::optional<LoaderBatch> whole = partial.Next();
    ASSERT_TRUE(whole.has_value());
    EXPECT_FALSE(whole->partial);
    EXPECT_EQ(whole->features.size(), whole->batch.input_nodes().size() * kDim);
  }
}

// GatherRows reads what batches hand out, whatever the store.
TEST_F(NeighborLoaderTest, GatherRowsReadsTheBatchesRows) {
  NeighborLoader loader(Options(FeatureStoreKind::kMemory));
  loader.StartEpoch(0);
  std::optional<LoaderBatch> batch = loader.Next();
  ASSERT_TRUE(batch.has_value());
  const std::vector<uint64_t>& input = batch->batch.input_nodes();
  std::vector<float> rows(input.size() * kDim);
  std::unique_ptr<FeatureStore> reader = loader.OpenRowReader();
  loader.GatherRows(*reader, input, rows);
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), batch->features.data()));
}

TEST_F(NeighborLoaderTest, BadOptionsAreInputErrors) {
  LoaderOptions o = Options(FeatureStoreKind::kMemory);
  o.fanouts = {5, -2};
  EXPECT_THROW(NeighborLoader{o}, Error);
  o = Options(FeatureStoreKind::kMemory);
  o.order.rank = 2;
  o.order.world_size = 2;
  EXPECT_THROW(NeighborLoader{o}, Error);
  o = Options(FeatureStoreKind::kMemory);
  o.multistage.method = MultistageMethod::kLargeBatch;
  o.split = Split::kTest;
  EXPECT_THROW(NeighborLoader{o}, Error);
  o = Options(FeatureStoreKind::kMemory);
  o.dataset = *dir_ / "missing";
  try {
    NeighborLoader loader(o);
    FAIL() << "opened a missing dataset";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
