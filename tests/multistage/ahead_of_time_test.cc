// Ahead-of-time sampling: a macro-batch's mini-batches sampled before its rows are read give
// the same batches and features as without it, for partitions, their halo (PBS) and LBS, and
// read fewer bytes where rows are large and the mini-batches touch few of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "multistage/macro_batch_fixture.h"
#include "strata/generate.h"
#include "strata/partition.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

class AheadOfTimeTest : public MacroBatchFixture {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    // 4 KiB rows, a few training nodes and small fanouts: a mini-batch touches a small share
    // of a partition's units.
    GenerateOptions g = testing::SmallGraph(*dir_ / "in", 4000, 1024, 4, 6, 9);
    g.train_ratio = 0.05;
    GenerateDataset(g);
    PartitionOptions p;
    p.input = *dir_ / "in";
    p.out = *dir_ / "parts";
    p.parts = 8;
    p.hub_fraction = 0.01;
    p.memory_budget_bytes = 64 << 20;
    PartitionDataset(p);
  }
  static void TearDownTestSuite() { delete dir_; }

  TrainOptions Options(MultistageMethod method, bool ahead_of_time) const {
    TrainOptions o;
    o.sampling.fanouts = {2, 2};
    o.sampling.batch_size = 20;
    o.seed = 4;
    o.model.layers = 2;
    o.model.hidden = 8;
    o.multistage.method = method;
    o.multistage.macro_batch = 2;
    o.multistage.ahead_of_time = ahead_of_time;
    o.scratch_dir = dir_->path();
    o.io_depth = 16;
    return o;
  }

  // The same batches and features with and without ahead-of-time sampling; `stats` gets the
  // epoch's statistics with it.
  void ExpectSameBatches(TrainOptions o, MacroBatchStats& stats) {
    o.multistage.ahead_of_time = true;
    MacroBatchSource with(*dataset_, *graph_, train_, o, *budget_);
    o.multistage.ahead_of_time = false;
    MacroBatchSource without(*dataset_, *graph_, train_, o, *budget_);
    // In step, each batch dropped before the next: a PBS stream writes a macro-batch's
    // history back only once its batches are gone.
    auto x = with.StartEpoch(1), y = without.StartEpoch(1);
    for (uint64_t i = 0;; ++i) {
      std::optional<ReadyBatch> a = x->Next(), b = y->Next();
      ASSERT_EQ(a.has_value(), b.has_value()) << "batch " << i;
      if (!a) break;
      ExpectSameBatch(a->batch, b->batch);
      EXPECT_TRUE(std::equal(a->features.data(), a->features.data() + a->features.size(),
                             b->features.data(), b->features.data() + b->features.size()))
          << "batch " << i;
    }
    stats = *x->pipeline_stats().multistage;
  }

  static ScratchDir* dir_;
};

ScratchDir* AheadOfTimeTest::dir_ = nullptr;

TEST_F(AheadOfTimeTest, PartitionsReadOnlyTheRowsTheirMiniBatchesUse) {
  Open(*dir_ / "parts");
  MacroBatchStats stats;
  ExpectSameBatches(Options(MultistageMethod::kPartition, true), stats);
  EXPECT_GT(stats.aot_bytes_saved, 0u);
  EXPECT_GT(stats.load_bytes, 0u);
}

TEST_F(AheadOfTimeTest, PartitionBasedSamplingGivesTheSameBatches) {
  Open(*dir_ / "parts");
  MacroBatchStats stats;
  ExpectSameBatches(Options(MultistageMethod::kPbs, true), stats);
  EXPECT_GT(stats.aot_bytes_saved, 0u);
  EXPECT_GT(stats.halo_nodes, 0u);
}

TEST_F(AheadOfTimeTest, LargeBatchSamplingGathersOnlyTheRowsItsMiniBatchesUse) {
  Open(*dir_ / "in");
  TrainOptions o = Options(MultistageMethod::kLargeBatch, true);
  o.multistage.fanouts = {1, 1};  // the second stage picks fewer than the first drew
  MacroBatchStats stats;
  ExpectSameBatches(o, stats);
  EXPECT_GT(stats.aot_bytes_saved, 0u);
}

}  // namespace
}  // namespace strata
