// Session holds what one mini-batch training or evaluation run opens, built in the order each
// part needs the ones before it and destroyed in reverse (the feature store before the
// samplers, everything before the budget): the memory budget, the dataset, its topology (in
// memory or on disk), the labels and splits, the training and evaluation samplers, the memory
// plan's reservations, the model, and the feature store, whose cache gets what the budget leaves
// once the batches in flight are provided for (minibatch/cache_sizing.h) and whose hot tier is
// filled by the hotness policy.
//
// Thread safety: the samplers may be used from several threads; everything else from one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "minibatch/batch_bound.h"
#include "minibatch/memory_plan.h"
#include "minibatch/minibatch_model.h"
#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"
#include "strata/neighbor_sampler.h"
#include "strata/train.h"

namespace strata {

// Throws an input error naming the option when `options` cannot describe a run (layer and
// fanout counts that disagree, a zero batch size, a learning rate <= 0, ...), the model's rules
// checked by CheckModelOptions and a full-graph run's by CheckFullGraphOptions. (Multistage
// options are CheckMultistageOptions', where macro-batches are built.)
void CheckTrainOptions(const TrainOptions& options);

// The least a batch source built after the session needs from the budget (multistage's
// macro-batch loader), given the dataset, its topology and the largest training batch: the
// session's memory plan counts it, so that the budget the plan names works for the source too.
using SourceNeeds =
    std::function<uint64_t(const Dataset&, const CscGraph&, const BatchBound& largest_batch)>;

class Session {
 public:
  // Throws an input error when the dataset has no labels or no features. Without `training`
  // the run only evaluates (strata eval), and plans no memory for training.
  Session(const TrainOptions& options, Dataset dataset, bool training = true,
          const SourceNeeds& source_needs = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const TrainOptions& options() const { return options_; }
  const Dataset& dataset() const { return dataset_; }
  MemoryBudget& budget() { return budget_; }
  const CscGraph& graph() const { return *graph_; }
  MiniBatchModel& model() { return *model_; }
  FeatureStore& store() { return *store_; }
  // Seeds from the train split, options.sampling's fanouts and batch size.
  const NeighborSampler& sampler() const { return *sampler_; }
  // The evaluation fanouts (all neighbours when none are given), kEvalBatchSeeds per batch.
  const NeighborSampler& eval_sampler() const { return *eval_sampler_; }
  const std::vector<uint64_t>& split_ids(Split split) const;
  // What the run set aside at start for what grows, and the budget of the batches in flight
  // that the plan reserved: the oldest training batches' and evaluation's.
  const MiniBatchMemoryPlan& memory_plan() const { return plan_; }
  MemoryBudget& batch_reserve() { return *batch_reserve_; }
  // Work that runs while no batch is in flight (layer-wise evaluation, between epochs) may use
  // the batches' reserve and the model's planned bytes its buffers have not grown into: Lend
  // returns them to the budget, Reclaim charges them again (an internal error if a charge made
  // meanwhile still holds them).
  void LendTrainingMemory();
  void ReclaimTrainingMemory();

 private:
  // Plans and reserves the memory for what grows (minibatch/memory_plan.h), or refuses the
  // budget with the smallest that works; evaluation_bytes: the least layer-wise evaluation
  // needs beside it.
  void PlanMemory(const ModelConfig& config, bool training, uint64_t evaluation_bytes,
                  const SourceNeeds& source_needs);
  // What the feature store charges with no cache: the direct store's read buffers, the memory
  // store's rows.
  uint64_t StoreBytes() const;
  void OpenStore();

  TrainOptions options_;
  MemoryBudget budget_;
  Dataset dataset_;
  std::unique_ptr<CscGraph> graph_;
  MiniBatchMemoryPlan plan_;
  HeldCharge optimizer_charge_;
  HeldCharge batch_reserve_charge_;
  std::unique_ptr<MemoryBudget> batch_reserve_;
  std::unique_ptr<MiniBatchModel> model_;
  uint64_t layerwise_bytes_ = 0;        // what layer-wise evaluation needs at most
  std::vector<uint64_t> split_ids_[3];  // by Split
  std::unique_ptr<NeighborSampler> sampler_;
  std::unique_ptr<NeighborSampler> eval_sampler_;
  std::unique_ptr<FeatureStore> store_;
};

}  // namespace strata
