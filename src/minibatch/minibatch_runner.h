// MiniBatchRunner is the EpochRunner of the sampled paths: an epoch is the batches of a
// BatchSource (sampled neighbourhoods with their gathered features: minibatch/batch_pipeline.h,
// or sampled inside macro-batches: multistage/macro_batch_source.h),
// each trained in one step on the calling thread while the source's threads prepare the next
// ones; accuracy is measured with EvaluateNodes, or EvaluateLayerwise with --eval layerwise. It
// reports the epoch's loss, its disk and cache counters, the adjacency cache's when the topology is
// on disk, and how busy each pipeline stage was, and shows progress on a terminal (or every
// log_every batches).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/progress.h"
#include "minibatch/batch_source.h"
#include "minibatch/session.h"
#include "runner/epoch_runner.h"
#include "runner/gradient_allreduce.h"
#include "strata/collective.h"

namespace strata {

class MiniBatchRunner final : public EpochRunner {
 public:
  // `session` must outlive the runner; `source` produces each epoch's batches. With `ranks`
  // (data-parallel training; it too must outlive the runner) each step's gradients are averaged
  // over the ranks, the epoch's loss is every rank's, and accuracy is measured by the ranks
  // together, each on its share of the nodes.
  MiniBatchRunner(Session& session, std::unique_ptr<BatchSource> source,
                  Collective* ranks = nullptr);
  ~MiniBatchRunner() override;

  EpochReport TrainEpoch(uint64_t epoch) override;
  double Accuracy(Split split) override;
  uint64_t planned_batches() const override { return EpochBatches(); }

  const ModelConfig& model_config() const override { return session_.model().config(); }
  std::vector<Parameter> Parameters() override { return session_.model().model().Parameters(); }
  Optimizer& optimizer() override { return *optimizer_; }

 private:
  // The batches an epoch plans, for progress: all, or --max-batches (adaptive reuse trains
  // more than a macro-batch source plans).
  uint64_t EpochBatches() const;
  // What an epoch's counters were when it began.
  struct EpochStart {
    std::chrono::steady_clock::time_point time;
    FeatureStoreStats store;
    AdjacencyStats adjacency;
  };
  // The epoch's measurements so far into `report`: the stream's stages, the store's and the
  // adjacency cache's work since `start` (the store's counters now being `store_now`), time.
  void Measure(const PipelineStats& pipeline, const FeatureStoreStats& store_now,
               const EpochStart& start, EpochReport& report) const;
  // Progress bar and --log-every line after report.batches batches, the last of them from
  // macro-batch `macro_batch` (macro-batch sources); measures `report` so far to show it.
  void ShowProgress(EpochReport& report, uint64_t macro_batch, const BatchStream& stream,
                    const EpochStart& start) const;

  // Data-parallel: the epoch's loss summed over the ranks, and every rank's stage times.
  void CombineRanks(double loss_sum, uint64_t labelled, double allreduce_s,
                    EpochReport& report) const;

  Session& session_;
  Collective* ranks_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<GradientAllreduce> allreduce_;
  std::unique_ptr<BatchSource> source_;
  std::unique_ptr<ProgressBar> progress_;
};

}  // namespace strata
