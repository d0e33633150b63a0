#include "minibatch/batch_pipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sampling/sampled_batch_expectations.h"
#include "strata/dataset.h"
#include "strata/error.h"
#include "strata/feature_store.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "test_util.h"

namespace strata {
namespace {

constexpr uint64_t kBudgetBytes = uint64_t{128} << 20;
constexpr uint64_t kNodes = 3000;
constexpr uint64_t kFeatureDim = 8;
const std::vector<int> kFanouts = {4, 4};

// The value the fake store writes for column j of row `id`: exact in float32 for every id here.
float FakeValue(uint64_t id, uint64_t j) { return static_cast<float>(id * kFeatureDim + j); }

// A FeatureStore test double: rows filled with FakeValue in Wait (as if the read completed
// then), with every call counted, the pins of each Pin call tracked until the Unpin with the
// same ids, and an injected Error at the n-th Submit or Wait. Thread-safe, so the test can
// read the counters while the pipeline's fetch thread uses it.
class FakeStore final : public FeatureStore {
 public:
  static constexpr uint64_t kNever = ~uint64_t{0};

  explicit FakeStore(uint64_t fail_submit_at = kNever, uint64_t fail_wait_at = kNever)
      : fail_submit_at_(fail_submit_at), fail_wait_at_(fail_wait_at) {}

  Ticket Submit(std::span<const uint64_t> ids, std::span<float> out) override {
    std::lock_guard lock(mutex_);
    if (submits_ == fail_submit_at_) {
      ++submits_failed_;
      throw Error::Input("injected submit failure", "features.bin");
    }
    const Ticket ticket = submits_++;
    EXPECT_EQ(out.size(), ids.size() * kFeatureDim);
    pending_.emplace(ticket, Gather{ids, out});
    max_pending_ = std::max<uint64_t>(max_pending_, pending_.size());
    stats_.rows_requested += ids.size();
    return ticket;
  }

  void Wait(Ticket ticket) override {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(ticket);
    EXPECT_NE(it, pending_.end()) << "Wait on unknown ticket " << ticket;
    if (it == pending_.end()) return;
    const Gather gather = it->second;
    pending_.erase(it);
    if (waits_++ == fail_wait_at_) throw Error::Input("injected read failure", "features.bin");
    for (size_t i = 0; i < gather.ids.size(); ++i) {
      for (uint64_t j = 0; j < kFeatureDim; ++j)
        gather.out[i * kFeatureDim + j] = FakeValue(gather.ids[i], j);
    }
  }

  void Pin(std::span<const uint64_t> ids) override {
    std::lock_guard lock(mutex_);
    ++pins_;
    ++outstanding_[std::vector<uint64_t>(ids.begin(), ids.end())];
    ++pinned_batches_;
    max_pinned_batches_ = std::max(max_pinned_batches_, pinned_batches_);
  }

  void Unpin(std::span<const uint64_t> ids) override {
    std::lock_guard lock(mutex_);
    ++unpins_;
    auto it = outstanding_.find(std::vector<uint64_t>(ids.begin(), ids.end()));
    if (it == outstanding_.end()) {
      ++unmatched_unpins_;
      return;
    }
    if (--it->second == 0) outstanding_.erase(it);
    --pinned_batches_;
  }

  uint64_t num_rows() const override { return kNodes; }
  uint64_t dim() const override { return kFeatureDim; }
  std::string_view name() const override { return "fake"; }
  FeatureStoreStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void ResetStats() override {
    std::lock_guard lock(mutex_);
    stats_ = {};
  }

  // Successful Submit calls (tickets handed out) and Wait calls made on them.
  uint64_t submits() const { return Locked(submits_); }
  uint64_t waits() const { return Locked(waits_); }
  uint64_t submits_failed() const { return Locked(submits_failed_); }
  uint64_t max_pending() const { return Locked(max_pending_); }
  uint64_t pins() const { return Locked(pins_); }
  uint64_t unpins() const { return Locked(unpins_); }
  uint64_t unmatched_unpins() const { return Locked(unmatched_unpins_); }
  // Batches pinned and not yet unpinned: now, and the most ever.
  uint64_t pinned_batches() const { return Locked(pinned_batches_); }
  uint64_t max_pinned_batches() const { return Locked(max_pinned_batches_); }

 private:
  struct Gather {
    std::span<const uint64_t> ids;
    std::span<float> out;
  };

  uint64_t Locked(const uint64_t& counter) const {
    std::lock_guard lock(mutex_);
    return counter;
  }

  const uint64_t fail_submit_at_, fail_wait_at_;
  mutable std::mutex mutex_;
  std::map<Ticket, Gather> pending_;
  std::map<std::vector<uint64_t>, uint64_t> outstanding_;
  FeatureStoreStats stats_;
  uint64_t submits_ = 0, waits_ = 0, submits_failed_ = 0, max_pending_ = 0;
  uint64_t pins_ = 0, unpins_ = 0, unmatched_unpins_ = 0;
  uint64_t pinned_batches_ = 0, max_pinned_batches_ = 0;
};

std::vector<float> Features(const ReadyBatch& ready) {
  return {ready.features.data(), ready.features.data() + ready.features.size()};
}

// What the fake store gathers for `ids`.
std::vector<float> FakeFeatures(const std::vector<uint64_t>& ids) {
  std::vector<float> out;
  for (uint64_t id : ids) {
    for (uint64_t j = 0; j < kFeatureDim; ++j) out.push_back(FakeValue(id, j));
  }
  return out;
}

// Every batch a stream yields, in the order it yields them.
std::vector<ReadyBatch> Drain(BatchStream& stream) {
  std::vector<ReadyBatch> batches;
  while (std::optional<ReadyBatch> ready = stream.Next()) batches.push_back(std::move(*ready));
  return batches;
}

std::vector<ReadyBatch> RunPipeline(const NeighborSampler& sampler, FeatureStore& store,
                                    const PipelineOptions& options, MemoryBudget& budget) {
  BatchPipeline pipeline(sampler, store, options, budget);
  return Drain(pipeline);
}

uint64_t FeatureBytes(const std::vector<ReadyBatch>& batches) {
  uint64_t bytes = 0;
  for (const ReadyBatch& ready : batches) bytes += ready.features.size() * sizeof(float);
  return bytes;
}

// A generated SBM graph (3000 nodes, 1500 training nodes, 8 float32 features), its in-memory
// feature store and a sampler of 24 batches of 64 seeds, built once.
class BatchPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    budget_ = new MemoryBudget(kBudgetBytes);
    GenerateOptions o = testing::SmallGraph(*dir_ / "g", kNodes, kFeatureDim, 3, 6, 11);
    o.train_ratio = 0.5;
    GenerateDataset(o);
    dataset_ = new Dataset(Dataset::Open(*dir_ / "g"));
    graph_ = new CscGraph(*dataset_, *budget_);
    train_ = new std::vector<uint64_t>(dataset_->ReadSplit(Split::kTrain));
    sampler_ = new NeighborSampler(*graph_, *train_, kFanouts, 64, 3, *budget_, 2);
    store_ = OpenFeatureStore(*dataset_, FeatureStoreKind::kMemory, DirectStoreOptions{}, *budget_)
                 .release();
  }
  static void TearDownTestSuite() {
    delete store_;
    delete sampler_;
    delete train_;
    delete graph_;
    delete dataset_;
    delete budget_;
    delete dir_;
  }

  // Batches `first`.. of `epoch` as sampled directly, each with a plain Gather of its inputs.
  static void ExpectEpoch(const std::vector<ReadyBatch>& got, uint64_t epoch, uint64_t first) {
    ASSERT_EQ(got.size(), sampler_->batches_per_epoch() - first);
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "batch " << first + i);
      const ReadyBatch& ready = got[i];
      ASSERT_EQ(ready.batch.index, first + i);
      ASSERT_EQ(ready.batch.epoch, epoch);
      ExpectSameBatch(ready.batch, sampler_->Sample(epoch, first + i));
      const std::vector<uint64_t>& ids = ready.batch.input_nodes();
      ASSERT_EQ(ready.rows, ids.size());
      ASSERT_EQ(ready.features.size(), ids.size() * kFeatureDim);
      std::vector<float> expected(ids.size() * kFeatureDim);
      store_->Gather(ids, expected);
      ASSERT_EQ(Features(ready), expected);
    }
  }

  static testing::ScratchDir* dir_;
  static MemoryBudget* budget_;
  static Dataset* dataset_;
  static CscGraph* graph_;
  static std::vector<uint64_t>* train_;
  static NeighborSampler* sampler_;
  static FeatureStore* store_;
};

testing::ScratchDir* BatchPipelineTest::dir_ = nullptr;
MemoryBudget* BatchPipelineTest::budget_ = nullptr;
Dataset* BatchPipelineTest::dataset_ = nullptr;
CscGraph* BatchPipelineTest::graph_ = nullptr;
std::vector<uint64_t>* BatchPipelineTest::train_ = nullptr;
NeighborSampler* BatchPipelineTest::sampler_ = nullptr;
FeatureStore* BatchPipelineTest::store_ = nullptr;

// The same graph, store and sampler for the NeighborBatchSource tests.
class NeighborBatchSourceTest : public BatchPipelineTest {};

TEST_F(BatchPipelineTest, DeliversEveryBatchInIndexOrder) {
  ASSERT_GE(sampler_->batches_per_epoch(), 20u);
  PipelineOptions options;
  options.epoch = 1;
  options.max_run_ahead = 4;
  // The pipeline is gone (its fetch thread joined) before the test gathers from the store.
  const std::vector<ReadyBatch> got = RunPipeline(*sampler_, *store_, options, *budget_);
  ExpectEpoch(got, 1, 0);
}

TEST_F(BatchPipelineTest, StartsAtFirstBatch) {
  PipelineOptions options;
  options.epoch = 2;
  options.first_batch = 7;
  options.max_run_ahead = 3;
  const std::vector<ReadyBatch> got = RunPipeline(*sampler_, *store_, options, *budget_);
  ExpectEpoch(got, 2, 7);

  // Resuming at the last batch yields only it; past the end, nothing.
  options.first_batch = sampler_->batches_per_epoch() - 1;
  ExpectEpoch(RunPipeline(*sampler_, *store_, options, *budget_), 2, options.first_batch);
  options.first_batch = sampler_->batches_per_epoch();
  EXPECT_TRUE(RunPipeline(*sampler_, *store_, options, *budget_).empty());
}

TEST_F(BatchPipelineTest, SameBatchesWhateverTheRunAhead) {
  PipelineOptions options;
  options.epoch = 3;
  options.max_run_ahead = 1;
  const std::vector<ReadyBatch> one = RunPipeline(*sampler_, *store_, options, *budget_);
  options.max_run_ahead = 16;
  const std::vector<ReadyBatch> sixteen = RunPipeline(*sampler_, *store_, options, *budget_);
  ASSERT_EQ(one.size(), sampler_->batches_per_epoch());
  ASSERT_EQ(one.size(), sixteen.size());
  for (size_t b = 0; b < one.size(); ++b) {
    SCOPED_TRACE(::testing::Message() << "batch " << b);
    EXPECT_EQ(one[b].batch.index, b);
    ExpectSameBatch(one[b].batch, sixteen[b].batch);
    EXPECT_EQ(one[b].rows, sixteen[b].rows);
    EXPECT_EQ(Features(one[b]), Features(sixteen[b]));
  }
}

TEST_F(BatchPipelineTest, PinsAtMostMaxRunAheadBatchesAndUnpinsEach) {
  for (uint32_t run_ahead : {1u, 3u}) {
    SCOPED_TRACE(::testing::Message() << "max_run_ahead " << run_ahead);
    FakeStore store;
    MemoryBudget budget(kBudgetBytes);
    PipelineOptions options;
    options.epoch = 4;
    options.max_run_ahead = run_ahead;
    std::vector<uint64_t> indices;
    uint64_t rows = 0;
    PipelineStats busy;
    FeatureStoreStats last_stats;
    {
      BatchPipeline pipeline(*sampler_, store, options, budget);
      // A consumer slower than sampling and gathering, so the window fills up.
      while (std::optional<ReadyBatch> ready = pipeline.Next()) {
        ASSERT_LE(store.pinned_batches(), run_ahead);
        indices.push_back(ready->batch.index);
        rows += ready->rows;
        ASSERT_EQ(Features(*ready), FakeFeatures(ready->batch.input_nodes()));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      busy = pipeline.pipeline_stats();
      last_stats = pipeline.store_stats();
    }
    const uint64_t batches = sampler_->batches_per_epoch();
    ASSERT_EQ(indices.size(), batches);
    for (uint64_t b = 0; b < batches; ++b) EXPECT_EQ(indices[b], b);
    // Only the window is pinned: a batch is pinned when it enters it and unpinned when its
    // gather is done, before it is handed on.
    EXPECT_LE(store.max_pinned_batches(), run_ahead);
    EXPECT_GE(store.max_pinned_batches(), 1u);
    if (run_ahead == 1) {
      EXPECT_EQ(store.max_pinned_batches(), 1u);
    }
    EXPECT_EQ(store.pins(), batches);
    EXPECT_EQ(store.unpins(), batches);
    EXPECT_EQ(store.unmatched_unpins(), 0u);
    EXPECT_EQ(store.pinned_batches(), 0u);
    // Every batch gathered once, each gather waited for, never more than the window queued.
    EXPECT_EQ(store.submits(), batches);
    EXPECT_EQ(store.waits(), batches);
    EXPECT_LE(store.max_pending(), run_ahead);
    EXPECT_LE(busy.max_batches_in_flight, run_ahead);
    EXPECT_GE(busy.max_batches_in_flight, 1u);
    // The stream's store counters are the store's as of the last batch handed on.
    EXPECT_EQ(last_stats.rows_requested, rows);
    EXPECT_EQ(budget.used(), 0u);
  }
}

TEST_F(BatchPipelineTest, ChargesEveryBatchMatrixToTheBudget) {
  // A budget of its own: the pipeline charges nothing but the batches' feature matrices.
  MemoryBudget budget(kBudgetBytes);
  PipelineOptions options;
  options.epoch = 5;
  options.max_run_ahead = 4;
  std::vector<ReadyBatch> held;
  {
    BatchPipeline pipeline(*sampler_, *store_, options, budget);
    while (std::optional<ReadyBatch> ready = pipeline.Next()) {
      ASSERT_EQ(ready->features.size(), ready->rows * kFeatureDim);
      held.push_back(std::move(*ready));
      ASSERT_GE(budget.used(), FeatureBytes(held));
    }
  }
  ASSERT_EQ(held.size(), sampler_->batches_per_epoch());
  // With the pipeline gone, exactly the held matrices stay charged, until they are released.
  EXPECT_EQ(budget.used(), FeatureBytes(held));
  EXPECT_EQ(budget.peak(), budget.used());  // nothing else was ever charged
  held.resize(1);
  EXPECT_EQ(budget.used(), FeatureBytes(held));
  held.clear();
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(BatchPipelineTest, RethrowsAGatherErrorInTheConsumer) {
  constexpr uint64_t kFailing = 5;  // the gather of batch 5 fails
  for (uint32_t run_ahead : {1u, 4u}) {
    SCOPED_TRACE(::testing::Message() << "max_run_ahead " << run_ahead);
    FakeStore store(FakeStore::kNever, kFailing);
    MemoryBudget budget(kBudgetBytes);
    PipelineOptions options;
    options.epoch = 6;
    options.max_run_ahead = run_ahead;
    std::vector<uint64_t> indices;
    std::optional<std::string> error;
    {
      BatchPipeline pipeline(*sampler_, store, options, budget);
      try {
        while (std::optional<ReadyBatch> ready = pipeline.Next()) {
          indices.push_back(ready->batch.index);
        }
      } catch (const Error& e) {
        error = e.what();
      }
      // Once failed, the stream stays failed.
      if (error) {
        EXPECT_THROW(pipeline.Next(), Error);
      }
    }  // the destructor returns
    ASSERT_TRUE(error.has_value()) << "the stream ended without the injected error";
    EXPECT_NE(error->find("injected read failure"), std::string::npos) << *error;
    // Waiting for batch 5 needs batch 4 handed on, which needs batch 3 taken; batch 4 may be
    // dropped in the ready queue when the error closes it.
    ASSERT_GE(indices.size(), kFailing - 1);
    ASSERT_LE(indices.size(), kFailing);
    for (uint64_t b = 0; b < indices.size(); ++b) EXPECT_EQ(indices[b], b);
    EXPECT_EQ(store.unmatched_unpins(), 0u);
    EXPECT_EQ(store.pinned_batches(), 0u);
    EXPECT_EQ(store.submits(), store.waits());
    EXPECT_EQ(budget.used(), 0u);
  }
}

TEST_F(BatchPipelineTest, RethrowsASubmitErrorInTheConsumer) {
  constexpr uint64_t kFailing = 3;  // submitting batch 3 fails
  FakeStore store(kFailing);
  MemoryBudget budget(kBudgetBytes);
  PipelineOptions options;
  options.epoch = 6;
  options.max_run_ahead = 1;  // batch 3 is submitted only once batch 2 has been handed on
  std::vector<uint64_t> indices;
  std::optional<std::string> error;
  {
    BatchPipeline pipeline(*sampler_, store, options, budget);
    try {
      while (std::optional<ReadyBatch> ready = pipeline.Next()) {
        indices.push_back(ready->batch.index);
      }
    } catch (const Error& e) {
      error = e.what();
    }
  }
  ASSERT_TRUE(error.has_value()) << "the stream ended without the injected error";
  EXPECT_NE(error->find("injected submit failure"), std::string::npos) << *error;
  EXPECT_EQ(store.submits_failed(), 1u);
  ASSERT_GE(indices.size(), kFailing - 1);
  ASSERT_LE(indices.size(), kFailing);
  for (uint64_t b = 0; b < indices.size(); ++b) EXPECT_EQ(indices[b], b);
  EXPECT_EQ(store.submits(), kFailing);
  EXPECT_EQ(store.waits(), kFailing);
  EXPECT_EQ(store.pinned_batches(), 0u);
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(BatchPipelineTest, RethrowsASamplerErrorInTheConsumer) {
  // The sampler's budget holds its training ids but not the epoch's permutation, so sampling
  // the first batch throws the budget's error in the sampler thread.
  MemoryBudget tight(train_->size() * sizeof(uint64_t) + 64);
  NeighborSampler sampler(*graph_, *train_, kFanouts, 64, 3, tight, 2);
  FakeStore store;
  MemoryBudget budget(kBudgetBytes);
  std::optional<std::string> error;
  {
    BatchPipeline pipeline(sampler, store, PipelineOptions{}, budget);
    try {
      while (pipeline.Next()) ADD_FAILURE() << "a batch came out of a failing sampler";
    } catch (const Error& e) {
      error = e.what();
    }
  }
  ASSERT_TRUE(error.has_value()) << "the stream ended without the sampler's error";
  EXPECT_NE(error->find("an epoch's shuffled seeds"), std::string::npos) << *error;
  EXPECT_EQ(store.pins(), 0u);
  EXPECT_EQ(store.submits(), 0u);
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(BatchPipelineTest, StopsEarlyWithEveryGatherWaitedAndNothingCharged) {
  // 188 batches of 8 seeds: far more than are consumed before the pipeline is destroyed.
  NeighborSampler sampler(*graph_, *train_, kFanouts, 8, 3, *budget_, 2);
  ASSERT_GE(sampler.batches_per_epoch(), 100u);
  for (uint64_t consumed : {0u, 1u, 2u}) {
    SCOPED_TRACE(::testing::Message() << consumed << " batches consumed");
    constexpr uint32_t kRunAhead = 4;
    FakeStore store;
    MemoryBudget budget(kBudgetBytes);
    PipelineOptions options;
    options.epoch = 7;
    options.max_run_ahead = kRunAhead;
    std::vector<ReadyBatch> held;
    {
      BatchPipeline pipeline(sampler, store, options, budget);
      for (uint64_t b = 0; b < consumed; ++b) {
        std::optional<ReadyBatch> ready = pipeline.Next();
        ASSERT_TRUE(ready.has_value());
        ASSERT_EQ(ready->batch.index, b);
        held.push_back(std::move(*ready));
      }
    }
    // Only what the consumer holds is still charged, and no gather was left unfinished.
    EXPECT_EQ(budget.used(), FeatureBytes(held));
    held.clear();
    EXPECT_EQ(budget.used(), 0u);
    EXPECT_EQ(store.submits(), store.waits());
    EXPECT_LE(store.max_pending(), kRunAhead);
    // Every pin is released, the window's too.
    EXPECT_EQ(store.unmatched_unpins(), 0u);
    EXPECT_EQ(store.unpins(), store.pins());
    EXPECT_EQ(store.pinned_batches(), 0u);
    EXPECT_LE(store.max_pinned_batches(), kRunAhead);
  }
}

TEST_F(NeighborBatchSourceTest, StreamsMatchAPipelinePerEpoch) {
  PipelineOptions options;
  options.epoch = 9;        // overridden by StartEpoch
  options.first_batch = 3;  // likewise: every epoch starts at batch 0
  options.max_run_ahead = 2;
  NeighborBatchSource source(*sampler_, *store_, options, *budget_);
  EXPECT_EQ(source.batches_per_epoch(), sampler_->batches_per_epoch());
  for (uint64_t epoch : {0u, 2u}) {
    SCOPED_TRACE(::testing::Message() << "epoch " << epoch);
    std::vector<ReadyBatch> streamed;
    {
      std::unique_ptr<BatchStream> stream = source.StartEpoch(epoch);
      streamed = Drain(*stream);
    }
    PipelineOptions direct = options;
    direct.epoch = epoch;
    direct.first_batch = 0;
    const std::vector<ReadyBatch> piped = RunPipeline(*sampler_, *store_, direct, *budget_);
    ASSERT_EQ(streamed.size(), source.batches_per_epoch());
    ASSERT_EQ(streamed.size(), piped.size());
    for (size_t b = 0; b < streamed.size(); ++b) {
      SCOPED_TRACE(::testing::Message() << "batch " << b);
      EXPECT_EQ(streamed[b].batch.index, b);
      ExpectSameBatch(streamed[b].batch, piped[b].batch);
      EXPECT_EQ(Features(streamed[b]), Features(piped[b]));
    }
    ExpectEpoch(streamed, epoch, 0);
  }
}

}  // namespace
}  // namespace strata
