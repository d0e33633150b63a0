#include "minibatch/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "strata/error.h"

namespace strata {
namespace {

// Epoch permutations held at once: the two kept and the one being built.
constexpr uint64_t kPermutations = 3;

// The model's buffers and MiniBatchModel's own: the logits' gradient, the input nodes' GCN
// normalisation and the seeds' labels.
uint64_t ModelBytes(const ModelConfig& config, const BatchBound& bound) {
  const uint64_t seeds = bound.layers.empty() ? 0 : bound.layers.back().dst;
  return ModelBytesBound(config, bound.layers) +
         MatrixBytesBound(seeds * config.num_classes * sizeof(float)) +
         VectorBytesBound((bound.input_rows() + seeds) * sizeof(float));
}

}  // namespace

uint64_t PieceSeeds(const SamplingOptions& sampling) {
  const uint64_t pieces = std::max<uint64_t>(sampling.batch_pieces, 1);
  return (sampling.batch_size + pieces - 1) / pieces;
}

uint64_t BatchBytes(const BatchBound& bound, uint64_t feature_dim) {
  return bound.BlockBytes() + bound.FeatureBytes(feature_dim);
}

std::vector<int> EvalFanouts(const SamplingOptions& sampling, ModelKind model) {
  if (!sampling.eval_fanouts.empty()) return sampling.eval_fanouts;
  return std::vector<int>(sampling.fanouts.size(), model == ModelKind::kMlp ? 0 : -1);
}

namespace {

// The plan with evaluation batches of `eval_seeds` seeds (0: no sampled evaluation).
MiniBatchMemoryPlan PlanWithEvalSeeds(const MiniBatchMemoryInputs& in, uint64_t eval_seeds) {
  const SamplingOptions& s = *in.sampling;
  const uint64_t dim = in.model.in_dim;
  MiniBatchMemoryPlan plan;
  const uint64_t parameter_bytes = ModelBytesBound(in.model, {}) / 2;
  if (in.training) {
    plan.train = BoundBatch(*in.degrees, s.fanouts, PieceSeeds(s), in.labor);
    plan.batch_reserve_bytes = kReservedBatches * BatchBytes(plan.train, dim);
    plan.optimizer_bytes = (in.optimizer == OptimizerKind::kAdam ? 2 : 1) * parameter_bytes;
    plan.later_bytes = parameter_bytes + kPermutations * in.train_ids * sizeof(uint64_t);
  }
  BatchBound model_bound = plan.train;
  plan.eval_seeds = eval_seeds;
  if (eval_seeds > 0) {
    plan.eval = BoundBatch(*in.degrees, EvalFanouts(s, in.model.kind), eval_seeds, in.labor);
    plan.eval_largest = BatchBytes(plan.eval, dim) > plan.batch_reserve_bytes;
    plan.batch_reserve_bytes = std::max(plan.batch_reserve_bytes, BatchBytes(plan.eval, dim));
    model_bound = in.training ? LargerOfEach(plan.train, plan.eval) : plan.eval;
  }
  plan.model_bytes = ModelBytes(in.model, model_bound);
  // A batch trained in pieces sums their gradients in the model's buffers.
  if (in.training && s.batch_pieces > 1) plan.model_bytes += parameter_bytes;
  plan.fixed_bytes = in.fixed_bytes;
  if (!plan.eval_largest) {
    plan.advice = "lower --batch-size, --fanouts or --hidden";
  } else if (s.eval_fanouts.empty()) {
    plan.advice =
        "sample evaluation neighbourhoods with --eval-fanouts, or evaluate with --eval layerwise";
  } else {
    plan.advice = "lower --eval-fanouts";
  }
  return plan;
}

// The plan with evaluation batches as large as it allows.
MiniBatchMemoryPlan PlanWithLargestEval(const MiniBatchMemoryInputs& in) {
  if (!in.sampled_eval) return PlanWithEvalSeeds(in, 0);
  // Evaluation batches as large as the training batches' reserve and model buffers hold (so
  // that what a training run needs does not grow with its budget, and the stages planned after
  // it can name the budget they need), or, evaluating alone, a quarter of the budget; and that
  // the budget holds; one seed at least. Fewer seeds never need more, so a plan refused at one
  // seed names the smallest budget.
  const MiniBatchMemoryPlan training = PlanWithEvalSeeds(in, 0);
  const uint64_t room = in.training ? 0 : in.available_bytes / 4;
  const uint64_t batch_room = std::max(training.batch_reserve_bytes, room);
  const uint64_t model_room = std::max(training.model_bytes, room);
  uint64_t seeds = kEvalBatchSeeds;
  MiniBatchMemoryPlan plan = PlanWithEvalSeeds(in, seeds);
  while (seeds > 1 && (plan.batch_reserve_bytes > batch_room || plan.model_bytes > model_room ||
                       plan.needed_bytes() > in.available_bytes)) {
    seeds /= 2;
    plan = PlanWithEvalSeeds(in, seeds);
  }
  return plan;
}

}  // namespace

MiniBatchMemoryPlan PlanMiniBatchMemory(const MiniBatchMemoryInputs& in) {
  MiniBatchMemoryPlan plan = PlanWithLargestEval(in);
  if (plan.needed_bytes() <= in.available_bytes || !in.training || plan.eval_largest) {
    return plan;
  }
  // Name the fewest pieces (doubling) whose plan fits, where the training batches do not.
  SamplingOptions pieces = *in.sampling;
  MiniBatchMemoryInputs split = in;
  split.sampling = &pieces;
  for (uint64_t k = uint64_t{pieces.batch_pieces} * 2; k <= pieces.batch_size; k *= 2) {
    pieces.batch_pieces = static_cast<uint32_t>(k);
    if (PlanWithLargestEval(split).needed_bytes() <= in.available_bytes) {
      plan.advice += fmt::format(", or train each batch in pieces with --batch-pieces {}", k);
      break;
    }
  }
  return plan;
}

void CheckPlanFits(const MiniBatchMemoryPlan& plan, const MemoryBudget& budget) {
  if (plan.needed_bytes() <= budget.available()) return;
  const uint64_t smallest = budget.used() + plan.needed_bytes();
  throw Error::Input(fmt::format(
      "the memory budget of {} is too small for this run: it needs at least {} (the graph and "
      "labels {}, the model's buffers for the largest batch {}, its optimizer state {}, "
      "batches in flight {}, the feature store and the rest {}); raise --memory-budget to "
      "{} or {}",
      FormatBytes(budget.limit()), FormatBytesRoundedUp(smallest), FormatBytes(budget.used()),
      FormatBytes(plan.model_bytes), FormatBytes(plan.optimizer_bytes),
      FormatBytes(plan.batch_reserve_bytes), FormatBytes(plan.fixed_bytes + plan.later_bytes),
      FormatBytesRoundedUp(smallest), plan.advice));
}

}  // namespace strata
