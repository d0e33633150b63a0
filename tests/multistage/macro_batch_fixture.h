// A test fixture for macro-batch sources: a dataset opened with its topology, training ids and
// a budget, a helper that drains one epoch of a source, and a check of determinism.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minibatch/batch_source.h"
#include "multistage/macro_batch_source.h"
#include "sampling/sampled_batch_expectations.h"
#include "strata/dataset.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"
#include "strata/train.h"

namespace strata {

class MacroBatchFixture : public ::testing::Test {
 protected:
  // Opens `dir`; a second Open replaces the first (its graph released before its budget).
  void Open(const std::string& dir) {
    graph_.reset();
    dataset_ = std::make_unique<Dataset>(Dataset::Open(dir));
    budget_ = std::make_unique<MemoryBudget>(256 << 20);
    graph_ = std::make_unique<CscGraph>(*dataset_, *budget_);
    train_ = dataset_->ReadSplit(Split::kTrain);
  }

  static std::vector<ReadyBatch> Epoch(BatchSource& source, uint64_t epoch) {
    std::vector<ReadyBatch> batches;
    auto stream = source.StartEpoch(epoch);
    while (std::optional<ReadyBatch> ready = stream->Next()) batches.push_back(std::move(*ready));
    return batches;
  }

  // Sources with `options` give the same batches and features in `epoch` with 8 batches run
  // ahead on 2 threads and with 1 on 1; the next epoch starts with other seeds.
  void ExpectRunAheadChangesNothing(const TrainOptions& options, uint64_t epoch) {
    TrainOptions deep = options, shallow = options;
    deep.max_run_ahead = 8;
    deep.threads = 2;
    shallow.max_run_ahead = 1;
    shallow.threads = 1;
    MacroBatchSource a(*dataset_, *graph_, train_, deep, *budget_);
    MacroBatchSource b(*dataset_, *graph_, train_, shallow, *budget_);
    std::vector<ReadyBatch> x = Epoch(a, epoch), y = Epoch(b, epoch);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      ExpectSameBatch(x[i].batch, y[i].batch);
      ASSERT_TRUE(std::equal(x[i].features.data(), x[i].features.data() + x[i].features.size(),
                             y[i].features.data()));
    }
    EXPECT_NE(x.front().batch.seeds(), Epoch(a, epoch + 1).front().batch.seeds());
  }

  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<MemoryBudget> budget_;
  std::unique_ptr<CscGraph> graph_;
  std::vector<uint64_t> train_;
};

}  // namespace strata
