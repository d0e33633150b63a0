// Large-batch sampling's macro-batches: one graph per layer holding the edges the first stage
// drew in that layer, the seeds first, the dataset's rows; every training node a seed exactly
// once per epoch, mini-batches that are slices of the first stage's sample, the same batches
// whatever the run-ahead, and buffers sized within the budget.
#include "multistage/large_batch_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "multistage/macro_batch_fixture.h"
#include "multistage/macro_batch_source.h"
#include "sampling/sampled_batch_expectations.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

constexpr uint64_t kDim = 16;

class LargeBatchTest : public MacroBatchFixture {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    GenerateDataset(testing::SmallGraph(*dir_ / "g", 3000, kDim, 4, 8, 23));
  }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override { Open(*dir_ / "g"); }

  TrainOptions Options(uint32_t macro_batch) const {
    TrainOptions o;
    o.sampling.fanouts = {4, 3};
    o.sampling.batch_size = 40;
    o.seed = 9;
    o.multistage.method = MultistageMethod::kLargeBatch;
    o.multistage.macro_batch = macro_batch;
    o.io_depth = 16;
    return o;
  }

  static ScratchDir* dir_;
};

ScratchDir* LargeBatchTest::dir_ = nullptr;

// The output layer's graph holds the seeds' picks, the input layer's those of the seeds and of
// the output layer's picks: min(fanout, in-degree) distinct real in-edges each, none elsewhere.
TEST_F(LargeBatchTest, LayerGraphsHoldTheEdgesEachLayerDrew) {
  const TrainOptions o = Options(3);
  LargeBatchLoader loader(*dataset_, *graph_, train_, o, *budget_);
  ASSERT_EQ(loader.macro_batch(), 3u);
  std::unique_ptr<MacroBatch> batch = loader.Load(2, 1, 0);
  const std::vector<uint64_t>& global = batch->global_of;
  ASSERT_EQ(std::set<uint64_t>(global.begin(), global.end()).size(), global.size());
  ASSERT_EQ(batch->graphs.size(), 2u);
  const uint64_t seeds = 3 * o.sampling.batch_size;
  ASSERT_EQ(batch->train_local.size(), seeds);
  const std::set<uint64_t> train(train_.begin(), train_.end());
  for (uint64_t local = 0; local < seeds; ++local) {
    EXPECT_EQ(batch->train_local[local], local);
    EXPECT_TRUE(train.contains(global[local]));
  }
  std::set<uint64_t> output_picks;
  for (int layer : {1, 0}) {
    const CscGraph& graph = *batch->graphs[layer];
    ASSERT_EQ(graph.num_nodes(), global.size());
    for (uint64_t local = 0; local < global.size(); ++local) {
      std::set<uint64_t> in_neighbors, sources;
      for (uint64_t k = 0; k < graph_->InDegree(global[local]); ++k) {
        in_neighbors.insert(graph_->InNeighbor(global[local], k));
      }
      const bool destination = local < seeds || (layer == 0 && output_picks.contains(local));
      const uint64_t fanout = o.sampling.fanouts[layer];
      ASSERT_EQ(graph.InDegree(local),
                destination ? std::min<uint64_t>(fanout, in_neighbors.size()) : 0)
          << "layer " << layer << " node " << global[local];
      for (uint64_t k = 0; k < graph.InDegree(local); ++k) {
        const uint64_t source = graph.InNeighbor(local, k);
        ASSERT_TRUE(in_neighbors.contains(global[source])) << "not an edge";
        ASSERT_TRUE(sources.insert(source).second) << "edge twice";
        if (layer == 1) output_picks.insert(source);
      }
    }
  }
  auto store = OpenFeatureStore(*dataset_, FeatureStoreKind::kMemory, {}, *budget_);
  std::vector<float> rows(global.size() * kDim);
  store->Gather(global, rows);
  for (uint64_t local = 0; local < global.size(); ++local) {
    ASSERT_EQ(std::memcmp(batch->row_of[local], rows.data() + local * kDim, kDim * sizeof(float)),
              0);
  }
  EXPECT_GT(batch->bytes_read, 0u);
}

TEST_F(LargeBatchTest, EveryTrainingNodeIsASeedOncePerEpochInAValidBatch) {
  MacroBatchSource source(*dataset_, *graph_, train_, Options(2), *budget_);
  auto store = OpenFeatureStore(*dataset_, FeatureStoreKind::kMemory, {}, *budget_);
  std::map<uint64_t, int> seen;
  for (const ReadyBatch& ready : Epoch(source, 1)) {
    // With the first stage's fanouts a mini-batch is a slice of its sample: each node keeps
    // min(fanout, in-degree) of its real in-edges, as in ordinary neighbour sampling.
    ExpectValidBatch(*graph_, ready.batch, {4, 3}, ready.batch.seeds());
    for (uint64_t v : ready.batch.seeds()) ++seen[v];
    const std::vector<uint64_t>& inputs = ready.batch.input_nodes();
    std::vector<float> rows(inputs.size() * kDim);
    store->Gather(inputs, rows);
    ASSERT_TRUE(std::equal(rows.begin(), rows.end(), ready.features.data()));
  }
  ASSERT_EQ(seen.size(), train_.size());
  for (const auto& [v, n] : seen) ASSERT_EQ(n, 1) << "node " << v;
}

TEST_F(LargeBatchTest, SameSeedSameBatchesWhateverTheRunAhead) {
  ExpectRunAheadChangesNothing(Options(4), 3);
}

TEST_F(LargeBatchTest, BuffersAreChargedAndSizedToTheBudget) {
  const uint64_t before = budget_->used();
  {
    LargeBatchLoader loader(*dataset_, *graph_, train_, Options(0), *budget_);
    // 3000 nodes at a train ratio of 0.1 are 8 mini-batches of 40; all of them fit.
    EXPECT_EQ(loader.macro_batch(), (train_.size() + 39) / 40);
    EXPECT_GT(budget_->used(), before);
  }
  EXPECT_EQ(budget_->used(), before);
  // The store's read buffers (16 reads of 64 KiB) and 256 KiB: far from two macro-batches of
  // every training node's neighbourhood.
  MemoryBudget tight(budget_->used() + (1 << 20) + (256 << 10));
  try {
    LargeBatchLoader loader(*dataset_, *graph_, train_, Options(8), tight);
    FAIL() << "eight mini-batches fitted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("--macro-batch 8 needs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
