// MiniBatchModel is the model as mini-batch training and evaluation apply it to sampled
// batches. It prepares a batch's inputs — row normalisation of the gathered features when
// asked, the GCN normalisation 1/sqrt(in-degree + 1) of the input nodes, the seeds' labels —
// runs one optimisation step or counts correct predictions, and keeps the model's buffers,
// which grow with the largest batch seen, charged to the budget.
//
// A batch trained in pieces (SamplingOptions::batch_pieces k, batch index i being piece i % k
// of batch i / k) sums the pieces' gradients and steps after the last one.
//
// Determinism: a training step's dropout masks come from (seed, epoch, batch index) alone, the
// index of the whole batch for a piece, so that its nodes' masks are the whole batch's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "minibatch/batch_source.h"
#include "nn/gradient_sum.h"
#include "nn/loss.h"
#include "nn/matrix.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "runner/gradient_allreduce.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

struct StepLoss {
  double loss_sum = 0;    // cross-entropy summed over the batch's labelled seeds
  uint64_t labelled = 0;  // their count
};

class MiniBatchModel {
 public:
  // `labels` holds one label per node of `graph` (-1: unlabelled); the GCN normalisation is
  // computed from `graph` and charged to `budget` when the model is a GCN. Each batch comes in
  // `batch_pieces` pieces (1: whole). `planned_bytes`, charged before the model allocates
  // anything, is what its buffers may reach on the batches the run plans for
  // (minibatch/memory_plan.h); buffers beyond it (layer-wise inference's) are charged as they
  // grow.
  MiniBatchModel(const ModelConfig& config, const CscGraph& graph, ChargedArray<int32_t> labels,
                 bool row_normalize, uint32_t batch_pieces, uint64_t planned_bytes,
                 MemoryBudget& budget);

  // One optimisation step on a batch whose features have been gathered (normalised in place
  // when row_normalize), or one piece of its gradients. With `allreduce` (data-parallel
  // training) the gradients are averaged over the ranks before the optimizer steps; the loss
  // returned is this rank's, of this batch or piece.
  StepLoss TrainStep(ReadyBatch& ready, uint64_t epoch, Optimizer& optimizer,
                     GradientAllreduce* allreduce = nullptr);

  // The logits of the seeds of `batch` from its input features (normalised in place when
  // row_normalize), dropout off; valid until the next step or prediction.
  MatrixSpan<const float> Predict(const SampledBatch& batch, std::span<float> features);
  // Predict's logits scored against the seeds' labels.
  AccuracyCount CountCorrect(const SampledBatch& batch, std::span<float> features);

  // Input feature rows (`rows` of in_dim values each) as the model takes them: normalised in
  // place when row_normalize.
  void PrepareFeatures(std::span<float> rows) const;
  // One label per node (-1: unlabelled), and 1/sqrt(in-degree + 1) per node for a GCN (else
  // empty).
  std::span<const int32_t> labels() const { return {labels_.data(), labels_.size()}; }
  std::span<const float> gcn_norm() const { return {gcn_norm_.data(), gcn_norm_.size()}; }

  Model& model() { return model_; }
  const ModelConfig& config() const { return model_.config(); }
  // Bytes charged for the model's buffers: the planned bytes and any growth beyond them.
  uint64_t charged_bytes() const { return planned_.bytes() + beyond_plan_.bytes(); }
  // The model's buffers grow with the largest batch it has seen; what grows beyond the planned
  // bytes is charged. Called after each step and prediction, and by callers that run the
  // layers themselves.
  void ChargeModelMemory();
  // Work that runs between steps (layer-wise evaluation) may use the planned bytes the buffers
  // have not grown into: Lend returns them to the budget, Reclaim charges them again (an
  // internal error if a charge made meanwhile still holds them).
  void LendUnusedPlan();
  void ReclaimPlan();

 private:
  // Adds the gradients of piece `index` (labelled seeds: `labelled`) to its batch's sum; after
  // the batch's last piece leaves the batch's mean in the gradients (averaged over the ranks
  // with `allreduce`) and returns true: the optimizer steps.
  bool SumPiece(uint64_t index, uint64_t labelled, GradientAllreduce* allreduce);
  uint64_t AllocatedBytes() const;
  MatrixSpan<const float> Inputs(const SampledBatch& batch, std::span<float> features);
  std::span<const float> GcnNorm(const std::vector<uint64_t>& nodes);
  std::span<const int32_t> SeedLabels(const SampledBatch& batch);

  ChargedArray<int32_t> labels_;
  ChargedArray<float> gcn_norm_;  // empty unless the model is a GCN
  bool row_normalize_;
  uint32_t batch_pieces_;
  MemoryBudget& budget_;
  HeldCharge planned_;  // before model_, which allocates the parameters
  uint64_t lent_ = 0;   // planned bytes lent out by LendUnusedPlan
  Model model_;
  std::vector<float> norm_;
  std::vector<int32_t> seed_labels_;
  Matrix grad_;
  std::optional<GradientSum> piece_sum_;  // with batch pieces
  TrackedCharge beyond_plan_;
};

}  // namespace strata
