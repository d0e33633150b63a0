#include "minibatch/minibatch_model.h"

#include <algorithm>
#include <utility>

#include "common/random.h"
#include "features/row_normalize.h"
#include "strata/error.h"

namespace strata {

MiniBatchModel::MiniBatchModel(const ModelConfig& config, const CscGraph& graph,
                               ChargedArray<int32_t> labels, bool row_normalize,
                               uint32_t batch_pieces, uint64_t planned_bytes, MemoryBudget& budget)
    : labels_(std::move(labels)),
      row_normalize_(row_normalize),
      batch_pieces_(batch_pieces),
      budget_(budget),
      planned_(HeldCharge::Take(budget, planned_bytes, "the model's parameters and buffers")),
      model_(config),
      beyond_plan_(budget, "model activations and gradients") {
  if (batch_pieces_ > 1) piece_sum_.emplace(model_.Parameters());
  if (config.kind == ModelKind::kGcn) {
    gcn_norm_ = ChargedArray<float>(budget, graph.num_nodes(), "GCN normalisation");
    for (uint64_t v = 0; v < graph.num_nodes(); ++v) {
      gcn_norm_[v] = static_cast<float>(1.0 / std::sqrt(graph.InDegree(v) + 1.0));
    }
  }
}

StepLoss MiniBatchModel::TrainStep(ReadyBatch& ready, uint64_t epoch, Optimizer& optimizer,
                                   GradientAllreduce* allreduce) {
  const SampledBatch& batch = ready.batch;
  // A piece draws its whole batch's masks: a node's mask depends on the batch, not the piece.
  const uint64_t whole = batch.index / batch_pieces_;
  const uint64_t step_seed = MixSeed(config().seed, (epoch << 32) | whole);
  std::span<HiddenHistory<float>> history;
  if (ready.history) history = ready.history->layers;
  auto logits =
      model_.Forward(batch.blocks, Inputs(batch, {ready.features.data(), ready.features.size()}),
                     GcnNorm(batch.input_nodes()), true, step_seed, history);
  std::span<const int32_t> labels = SeedLabels(batch);
  grad_.Resize(logits.rows(), logits.cols());
  LossResult loss = SoftmaxCrossEntropy<float>(logits, labels, grad_.span());
  bool step = true;
  if (piece_sum_) {
    model_.Backward(grad_.span());
    step = SumPiece(batch.index, loss.labelled, allreduce);
  } else if (allreduce != nullptr) {
    allreduce->BeginStep(loss.labelled);
    model_.Backward(grad_.span(), [allreduce](size_t layer) { allreduce->LayerDone(layer); });
    allreduce->Finish();
  } else {
    model_.Backward(grad_.span());
  }
  if (step) optimizer.Step();
  if (ready.history) ready.history->Commit();
  ChargeModelMemory();
  return {loss.loss * loss.labelled, loss.labelled};
}

bool MiniBatchModel::SumPiece(uint64_t index, uint64_t labelled, GradientAllreduce* allreduce) {
  const uint64_t piece = index % batch_pieces_;
  piece_sum_->Add(labelled, piece == 0);
  if (piece + 1 < batch_pieces_) return false;
  const uint64_t batch_labelled = piece_sum_->Finish();
  if (allreduce != nullptr) {
    allreduce->BeginStep(batch_labelled);
    for (size_t l = 0; l < config().layers; ++l) allreduce->LayerDone(l);
    allreduce->Finish();
  }
  return true;
}

MatrixSpan<const float> MiniBatchModel::Predict(const SampledBatch& batch,
                                                std::span<float> features) {
  auto logits =
      model_.Forward(batch.blocks, Inputs(batch, features), GcnNorm(batch.input_nodes()), false, 0);
  ChargeModelMemory();
  return logits;
}

AccuracyCount MiniBatchModel::CountCorrect(const SampledBatch& batch, std::span<float> features) {
  auto logits = Predict(batch, features);
  return strata::CountCorrect(logits, SeedLabels(batch));
}

void MiniBatchModel::PrepareFeatures(std::span<float> rows) const {
  if (row_normalize_) NormalizeRows(rows, config().in_dim);
}

MatrixSpan<const float> MiniBatchModel::Inputs(const SampledBatch& batch,
                                               std::span<float> features) {
  const uint64_t rows = batch.input_nodes().size();
  const uint64_t dim = config().in_dim;
  std::span<float> used = features.first(rows * dim);
  PrepareFeatures(used);
  return MatrixSpan<const float>(used.data(), rows, dim);
}

std::span<const float> MiniBatchModel::GcnNorm(const std::vector<uint64_t>& nodes) {
  if (gcn_norm_.size() == 0) return {};
  norm_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) norm_[i] = gcn_norm_[nodes[i]];
  return norm_;
}

std::span<const int32_t> MiniBatchModel::SeedLabels(const SampledBatch& batch) {
  const Block& last = batch.blocks.back();
  seed_labels_.resize(last.num_dst());
  for (uint32_t i = 0; i < last.num_dst(); ++i) seed_labels_[i] = labels_[last.src_nodes[i]];
  return seed_labels_;
}

uint64_t MiniBatchModel::AllocatedBytes() const {
  return model_.AllocatedBytes() + grad_.capacity() * sizeof(float) +
         norm_.capacity() * sizeof(float) + seed_labels_.capacity() * sizeof(int32_t) +
         (piece_sum_ ? piece_sum_->bytes() : 0);
}

void MiniBatchModel::ChargeModelMemory() {
  const uint64_t allocated = AllocatedBytes();
  beyond_plan_.Update(allocated > planned_.bytes() ? allocated - planned_.bytes() : 0);
}

void MiniBatchModel::LendUnusedPlan() {
  const uint64_t planned = planned_.bytes();
  const uint64_t kept = std::min(planned, AllocatedBytes());
  planned_.Reset();
  planned_ = HeldCharge::Take(budget_, kept, "the model's parameters and buffers");
  lent_ = planned - kept;
}

void MiniBatchModel::ReclaimPlan() {
  const uint64_t planned = planned_.bytes() + lent_;
  const uint64_t allocated = AllocatedBytes();
  // What grew beyond the loan's plan and within the whole plan moves back into it.
  beyond_plan_.Update(allocated > planned ? allocated - planned : 0);
  planned_.Reset();
  if (!budget_.TryCharge(planned)) {
    throw Error::Internal("a charge made while the model's plan was lent outlived the loan");
  }
  planned_ = HeldCharge(budget_, planned);
  lent_ = 0;
}

}  // namespace strata
